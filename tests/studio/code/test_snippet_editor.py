"""SnippetEditor: 4-space indentation, diagnostics underline, debounced source_edited, highlighting."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QHelpEvent, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QApplication, QToolTip

from studio.code.snippet_editor import SnippetEditor
from studio.look.highlighter import _end_state


def make(qtbot, text: str = "") -> SnippetEditor:
    editor = SnippetEditor()
    qtbot.addWidget(editor)
    editor.set_source(text)
    editor.moveCursor(QTextCursor.MoveOperation.End)
    return editor


def test_enter_keeps_indentation_and_indents_after_colon(qtbot):
    editor = make(qtbot)
    qtbot.keyClicks(editor, "def read(uri, params):")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.keyClicks(editor, "if uri:  # a comment with a colon:")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.keyClicks(editor, "x = '#:'")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.keyClicks(editor, "return x")
    assert (
        editor.toPlainText()
        == "def read(uri, params):\n    if uri:  # a comment with a colon:\n        x = '#:'\n        return x"
    )


def test_tab_inserts_spaces_to_the_next_stop_and_shift_tab_dedents(qtbot):
    editor = make(qtbot, "ab")
    qtbot.keyClick(editor, Qt.Key.Key_Tab)
    assert editor.toPlainText() == "ab  "
    editor.set_source("one\ntwo")
    editor.selectAll()
    qtbot.keyClick(editor, Qt.Key.Key_Tab)
    assert editor.toPlainText() == "    one\n    two"
    editor.selectAll()
    qtbot.keyClick(editor, Qt.Key.Key_Backtab)
    assert editor.toPlainText() == "one\ntwo"


def test_backspace_in_indentation_removes_one_level(qtbot):
    editor = make(qtbot, "if x:\n        ")
    qtbot.keyClick(editor, Qt.Key.Key_Backspace)
    assert editor.toPlainText() == "if x:\n    "


def test_diagnostic_underlines_the_line_with_a_red_wave(qtbot):
    editor = make(qtbot, "def read(uri, params)\n    return 1\n")
    editor.set_diagnostic(1, 22, "expected ':'")
    waves = [
        sel for sel in editor.extraSelections()
        if sel.format.underlineStyle() == QTextCharFormat.UnderlineStyle.WaveUnderline
    ]  # fmt: skip
    assert len(waves) == 1
    assert waves[0].cursor.blockNumber() == 0 and waves[0].cursor.selectedText()
    assert waves[0].format.underlineColor().red() > 200
    assert editor.diagnostic == (1, 22, "expected ':'")
    editor.clear_diagnostic()
    assert editor.diagnostic is None
    assert all(
        s.format.underlineStyle() != QTextCharFormat.UnderlineStyle.WaveUnderline
        for s in editor.extraSelections()
    )


def test_source_edited_is_debounced_and_not_emitted_by_set_source(qtbot):
    editor = make(qtbot)
    seen: list[str] = []
    editor.source_edited.connect(seen.append)
    editor.set_source("x = 1\n")
    qtbot.keyClicks(editor, "abc")
    with qtbot.waitSignal(editor.source_edited):
        pass
    assert seen == [editor.toPlainText()]


def test_highlighting_colors_keywords_and_continues_triple_quoted_strings(qtbot):
    editor = make(qtbot, 'def f():\n    s = """one\n    def two\n    """\n    return s\n')
    doc = editor.document()

    def color_at(block: int, column: int) -> str:
        layout = doc.findBlockByNumber(block).layout()
        for fmt_range in layout.formats():
            if fmt_range.start <= column < fmt_range.start + fmt_range.length:
                return fmt_range.format.foreground().color().name()
        return ""

    keyword = color_at(0, 0)
    assert keyword and keyword != "#000000"
    string = color_at(1, 10)
    assert string and string != keyword
    assert color_at(2, 4) == string  # "def" inside the string is string, not keyword
    assert color_at(4, 4) == keyword
    assert _end_state('x = "a # """', 0) == 0 and _end_state("'''", 0) == 1


def test_two_thousand_lines_load_and_edit(qtbot):
    source = "\n".join(f"    value_{i} = compute({i}, 'text')  # note" for i in range(2000))
    editor = make(qtbot, "def read(uri, params):\n" + source)
    assert editor.blockCount() == 2001
    editor.moveCursor(QTextCursor.MoveOperation.Start)
    qtbot.keyClicks(editor, "# edited")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert editor.toPlainText().startswith("# edited\ndef read")


def test_tooltip_over_the_error_line_shows_the_message(qtbot):
    editor = make(qtbot, "x = 1\ny = (\n")
    editor.resize(400, 200)
    editor.show()
    qtbot.waitExposed(editor)
    editor.set_diagnostic(2, 5, "'(' was never closed")
    rect = editor.cursorRect(QTextCursor(editor.document().findBlockByNumber(1)))
    pos = editor.viewport().pos() + rect.center() + QPoint(4, 0)
    QApplication.sendEvent(editor, QHelpEvent(QEvent.Type.ToolTip, pos, editor.mapToGlobal(pos)))
    assert QToolTip.text() == "'(' was never closed"
    QToolTip.hideText()


# -- editing commands -----------------------------------------------------------------------

CTRL = Qt.KeyboardModifier.ControlModifier


def select_lines(editor: SnippetEditor, first: int, last: int) -> None:
    doc = editor.document()
    cursor = QTextCursor(doc.findBlockByNumber(first))
    end = doc.findBlockByNumber(last)
    cursor.setPosition(end.position() + 2, QTextCursor.MoveMode.KeepAnchor)
    editor.setTextCursor(cursor)


def test_ctrl_slash_comments_lines_and_a_second_press_restores_them_exactly(qtbot):
    source = "def read(uri, params):\n    if uri:\n\n        # note\n        return 1\n    return 2\n"
    editor = make(qtbot, source)
    select_lines(editor, 1, 4)
    qtbot.keyClick(editor, Qt.Key.Key_Slash, CTRL)
    assert editor.toPlainText() == (
        "def read(uri, params):\n    # if uri:\n\n    #     # note\n    #     return 1\n    return 2\n"
    )
    qtbot.keyClick(editor, Qt.Key.Key_Slash, CTRL)
    assert editor.toPlainText() == source
    editor.setTextCursor(QTextCursor(editor.document().findBlockByNumber(5)))
    qtbot.keyClick(editor, Qt.Key.Key_Slash, CTRL)  # no selection: the current line
    assert editor.toPlainText().endswith("\n    # return 2\n")
    qtbot.keyClick(editor, Qt.Key.Key_Z, CTRL)  # one undo step
    assert editor.toPlainText() == source


def test_tab_and_shift_tab_on_a_selection_indent_and_dedent_by_four(qtbot):
    editor = make(qtbot, "a\n    b\n\nc\n")
    select_lines(editor, 0, 3)
    qtbot.keyClick(editor, Qt.Key.Key_Tab)
    assert editor.toPlainText() == "    a\n        b\n    \n    c\n"
    select_lines(editor, 0, 3)
    qtbot.keyClick(editor, Qt.Key.Key_Backtab)
    assert editor.toPlainText() == "a\n    b\n\nc\n"


def test_brackets_next_to_the_cursor_are_matched_across_lines_ignoring_strings(qtbot):
    editor = make(qtbot, 'x = call(a, ")", [1,\n    2], {"k": (3)})\n')
    cursor = editor.textCursor()
    cursor.setPosition(8)  # before "(" of call(
    editor.setTextCursor(cursor)
    text = editor.toPlainText()
    assert editor.bracket_match == (8, text.rindex(")"))
    cursor.setPosition(text.index("]") + 1)  # after "]"
    editor.setTextCursor(cursor)
    assert editor.bracket_match == (text.index("]"), text.index("["))
    marks = [s for s in editor.extraSelections() if s.cursor.selectedText() in ("[", "]")]
    assert len(marks) == 2
    cursor.setPosition(text.index('")"') + 2)  # the ")" inside a string is no bracket
    editor.setTextCursor(cursor)
    assert editor.bracket_match == ()


def test_word_wrap_can_be_switched_on_and_off(qtbot):
    editor = make(qtbot, "x = " + "word " * 200)
    editor.resize(300, 200)
    editor.show()
    qtbot.waitExposed(editor)
    assert editor.lineWrapMode() == editor.LineWrapMode.NoWrap
    editor.set_word_wrap(True)
    assert editor.lineWrapMode() == editor.LineWrapMode.WidgetWidth
    assert editor.document().firstBlock().layout().lineCount() > 1
    editor.set_word_wrap(False)
    assert editor.document().firstBlock().layout().lineCount() == 1
