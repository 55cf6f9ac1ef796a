"""The code editor's conventions: line moves and copies, Ctrl+D duplicates (never deletes), pairs, dedenting Enter.

These depend on key bindings, which differ between the offscreen platform and a real X server: .ci/run runs
this file a second time under Xvfb.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from studio.code.line_edits import copy_lines, delete_lines, ends_block, move_lines, pair_for, types_over
from studio.code.snippet_editor import SnippetEditor

ALT = Qt.KeyboardModifier.AltModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier
CTRL = Qt.KeyboardModifier.ControlModifier


def make(qtbot, text: str, *, line: int = 0, column: int = 0) -> SnippetEditor:
    editor = SnippetEditor()
    qtbot.addWidget(editor)
    editor.set_source(text)
    editor.show()
    qtbot.waitExposed(editor)
    editor.activateWindow()
    qtbot.waitActive(editor)
    editor.setFocus()
    place(editor, line, column)
    return editor


def place(editor: SnippetEditor, line: int, column: int = 0) -> None:
    cursor = editor.textCursor()
    cursor.setPosition(editor.document().findBlockByNumber(line).position() + column)
    editor.setTextCursor(cursor)


def cursor_line(editor: SnippetEditor) -> int:
    return editor.textCursor().blockNumber()


def test_alt_up_and_down_move_the_line_and_the_cursor_with_it(qtbot) -> None:
    editor = make(qtbot, "a\nb\nc", line=0, column=1)
    qtbot.keyClick(editor, Qt.Key.Key_Down, ALT)
    assert editor.toPlainText() == "b\na\nc" and cursor_line(editor) == 1
    qtbot.keyClick(editor, Qt.Key.Key_Down, ALT)
    assert editor.toPlainText() == "b\nc\na" and cursor_line(editor) == 2
    qtbot.keyClick(editor, Qt.Key.Key_Down, ALT)  # at the end: nothing moves
    assert editor.toPlainText() == "b\nc\na"
    qtbot.keyClick(editor, Qt.Key.Key_Up, ALT)
    assert editor.toPlainText() == "b\na\nc" and editor.textCursor().positionInBlock() == 1
    editor.undo()
    assert editor.toPlainText() == "b\nc\na"  # each move is one undo step


def test_alt_down_moves_a_selection_of_lines_and_keeps_it_selected(qtbot) -> None:
    editor = make(qtbot, "one\ntwo\nthree\nfour")
    cursor = editor.textCursor()
    cursor.setPosition(0)
    cursor.setPosition(editor.document().findBlockByNumber(1).position() + 2, QTextCursor.MoveMode.KeepAnchor)
    editor.setTextCursor(cursor)
    qtbot.keyClick(editor, Qt.Key.Key_Down, ALT)
    assert editor.toPlainText() == "three\none\ntwo\nfour"
    assert editor.textCursor().selectedText() == "one\u2029two"


def test_shift_alt_down_copies_the_line_and_ctrl_d_duplicates_never_deletes(qtbot) -> None:
    editor = make(qtbot, "x = 1\ny = 2", line=0, column=2)
    qtbot.keyClick(editor, Qt.Key.Key_Down, SHIFT | ALT)
    assert editor.toPlainText() == "x = 1\nx = 1\ny = 2" and cursor_line(editor) == 1
    place(editor, 2, 0)
    qtbot.keyClick(editor, Qt.Key.Key_D, CTRL)
    assert editor.toPlainText() == "x = 1\nx = 1\ny = 2\ny = 2" and cursor_line(editor) == 3
    qtbot.keyClick(editor, Qt.Key.Key_Up, SHIFT | ALT)
    assert editor.toPlainText() == "x = 1\nx = 1\ny = 2\ny = 2\ny = 2" and cursor_line(editor) == 3


def test_ctrl_shift_k_deletes_the_line_and_the_last_one_too(qtbot) -> None:
    editor = make(qtbot, "keep\ndrop\nlast", line=1, column=2)
    qtbot.keyClick(editor, Qt.Key.Key_K, CTRL | SHIFT)
    assert editor.toPlainText() == "keep\nlast" and cursor_line(editor) == 1
    qtbot.keyClick(editor, Qt.Key.Key_K, CTRL | SHIFT)
    assert editor.toPlainText() == "keep"
    qtbot.keyClick(editor, Qt.Key.Key_K, CTRL | SHIFT)
    assert editor.toPlainText() == ""


def test_ctrl_d_in_the_editor_does_not_reach_the_windows_duplicate_action(qtbot) -> None:
    from PySide6.QtGui import QAction, QKeySequence
    from PySide6.QtWidgets import QMainWindow

    window = QMainWindow()
    qtbot.addWidget(window)
    editor = SnippetEditor()
    editor.set_source("a")
    window.setCentralWidget(editor)
    fired: list[bool] = []
    action = QAction("Duplicate", window)
    action.setShortcut(QKeySequence("Ctrl+D"))
    action.triggered.connect(lambda: fired.append(True))
    window.addAction(action)
    window.show()
    qtbot.waitExposed(window)
    editor.setFocus()
    qtbot.keyClick(editor, Qt.Key.Key_D, CTRL)
    assert editor.toPlainText() == "a\na" and not fired


def test_brackets_and_quotes_close_themselves_and_are_typed_over(qtbot) -> None:
    editor = make(qtbot, "")
    qtbot.keyClicks(editor, "f(")
    assert editor.toPlainText() == "f()"
    qtbot.keyClicks(editor, "x[1")
    assert editor.toPlainText() == "f(x[1])"
    qtbot.keyClicks(editor, "])")
    assert editor.toPlainText() == "f(x[1])" and editor.textCursor().atEnd()
    qtbot.keyClicks(editor, ' + "hi"')
    assert editor.toPlainText() == 'f(x[1]) + "hi"' and editor.textCursor().atEnd()
    qtbot.keyClicks(editor, " # don't")
    assert editor.toPlainText() == "f(x[1]) + \"hi\" # don't"


def test_backspace_between_an_empty_pair_removes_both(qtbot) -> None:
    editor = make(qtbot, "")
    qtbot.keyClicks(editor, "print(")
    qtbot.keyClick(editor, Qt.Key.Key_Backspace)
    assert editor.toPlainText() == "print"


def test_a_typed_bracket_wraps_the_selection(qtbot) -> None:
    editor = make(qtbot, "value")
    editor.selectAll()
    qtbot.keyClicks(editor, "(")
    assert editor.toPlainText() == "(value)" and editor.textCursor().selectedText() == "value"


@pytest.mark.parametrize("keyword", ["return x", "raise KeyError(uri)", "pass", "break", "continue"])
def test_enter_after_a_statement_that_ends_the_block_dedents(qtbot, keyword: str) -> None:
    editor = make(qtbot, "def read(uri, params):\n    if uri:\n        " + keyword, line=2, column=8 + len(keyword))
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.keyClicks(editor, "y")
    assert editor.toPlainText().splitlines()[-1] == "    y"


def test_the_reader_the_user_typed_raises_and_then_returns_at_the_right_level(qtbot) -> None:
    # The trial's bug: a `return` left under a `raise` made a real reader return None.
    editor = make(qtbot, "")
    for line in ("def read(uri, params):", "if not params:", "raise KeyError(uri)"):
        qtbot.keyClicks(editor, line)
        qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.keyClicks(editor, "return params")
    namespace: dict[str, object] = {}
    exec(compile(editor.toPlainText(), "<reader>", "exec"), namespace)
    read = namespace["read"]
    assert callable(read) and read("x://1", {"id": "1"}) == {"id": "1"}


def test_the_pure_rules() -> None:
    assert move_lines(["a", "b"], 0, 0, down=False) is None
    assert move_lines(["a", "b", "c"], 1, 2, down=False).lines == ("b", "c", "a")
    assert copy_lines(["a"], 0, 0, down=True).lines == ("a", "a")
    assert delete_lines(["a"], 0, 0).lines == ("",)
    assert ends_block("    return  # done") and not ends_block("    returned = 1") and not ends_block("# return")
    assert pair_for("(", before="f", after="") == ")" and pair_for("(", before="", after="x") is None
    assert pair_for("'", before="don", after="") is None and pair_for("'", before="x = ", after="") == "'"
    assert pair_for('"', before='s = "a', after="") is None
    assert types_over(")", after=")x") and not types_over("(", after="(")
