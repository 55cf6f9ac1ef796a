"""Find / replace bar of the snippet editors, driven with the keyboard."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QTextCursor
from PySide6.QtWidgets import QCheckBox, QLabel, QLineEdit, QMainWindow, QPushButton, QWidget

from studio.code.snippet_pane import SnippetPane

CTRL = Qt.KeyboardModifier.ControlModifier
TEXT = "alpha = beta(alpha)\nAlpha_x = alpha_x + ALPHA\nreturn alpha\n"


def shown_pane(qtbot, text: str = TEXT) -> tuple[QMainWindow, SnippetPane]:
    window = QMainWindow()
    qtbot.addWidget(window)
    pane = SnippetPane(heading="Reader", placeholder="", function=None, required=False, object_name="snippetEditor")
    window.setCentralWidget(pane)
    pane.load(text, key="r")
    window.resize(700, 400)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    pane.editor.setFocus()
    qtbot.waitUntil(pane.editor.hasFocus)
    pane.editor.moveCursor(QTextCursor.MoveOperation.Start)
    return window, pane


def parts(pane: SnippetPane) -> tuple[QWidget, QLineEdit, QLineEdit, QLabel]:
    bar = pane.findChild(QWidget, "findBar")
    find = pane.findChild(QLineEdit, "findField")
    replace = pane.findChild(QLineEdit, "replaceField")
    status = pane.findChild(QLabel, "findStatus")
    assert bar is not None and find is not None and replace is not None and status is not None
    return bar, find, replace, status


def selection(pane: SnippetPane) -> tuple[int, int, str]:
    cursor = pane.editor.textCursor()
    return cursor.selectionStart(), cursor.selectionEnd(), cursor.selectedText()


def test_ctrl_f_opens_the_bar_and_enter_walks_the_matches(qtbot):
    _window, pane = shown_pane(qtbot)
    bar, find, replace, status = parts(pane)
    assert not bar.isVisible()
    qtbot.keyClick(pane.editor, Qt.Key.Key_F, CTRL)
    assert bar.isVisible() and not replace.isVisible()
    qtbot.waitUntil(find.hasFocus)
    qtbot.keyClicks(find, "alpha")
    # Case-insensitive substring search: alpha, alpha, Alpha(_x), alpha(_x), ALPHA, alpha.
    assert status.text() == "1 of 6"
    assert selection(pane) == (0, 5, "alpha")
    qtbot.keyClick(find, Qt.Key.Key_Return)
    assert status.text() == "2 of 6" and selection(pane)[:2] == (13, 18)
    qtbot.keyClick(find, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert status.text() == "1 of 6" and selection(pane)[:2] == (0, 5)
    qtbot.keyClick(find, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert status.text() == "6 of 6"  # wraps around to the last match
    assert len(pane.editor.extraSelections()) >= 6  # every match is highlighted
    qtbot.keyClick(find, Qt.Key.Key_Escape)
    assert not bar.isVisible()
    qtbot.waitUntil(pane.editor.hasFocus)
    assert selection(pane)[2] == "alpha"


def test_match_case_whole_word_and_no_matches(qtbot):
    _window, pane = shown_pane(qtbot)
    _bar, find, _replace, status = parts(pane)
    qtbot.keyClick(pane.editor, Qt.Key.Key_F, CTRL)
    qtbot.keyClicks(find, "alpha")
    pane.findChild(QCheckBox, "findWholeWord").click()
    assert status.text().endswith("of 4")  # alpha_x and Alpha_x are other words
    pane.findChild(QCheckBox, "findMatchCase").click()
    assert status.text().endswith("of 3")  # ALPHA differs in case
    find.selectAll()
    qtbot.keyClicks(find, "gamma")
    assert status.text() == "No matches"
    qtbot.keyClick(find, Qt.Key.Key_Return)
    assert status.text() == "No matches"


def test_selected_word_seeds_the_field(qtbot):
    _window, pane = shown_pane(qtbot)
    _bar, find, _replace, status = parts(pane)
    cursor = pane.editor.textCursor()
    cursor.setPosition(8)
    cursor.setPosition(12, QTextCursor.MoveMode.KeepAnchor)
    pane.editor.setTextCursor(cursor)
    qtbot.keyClick(pane.editor, Qt.Key.Key_F, CTRL)
    assert find.text() == "beta" and status.text() == "1 of 1"


def test_replace_all_is_one_undo_step_and_replace_one_moves_on(qtbot):
    _window, pane = shown_pane(qtbot)
    _bar, find, replace, status = parts(pane)
    qtbot.keyClick(pane.editor, Qt.Key.Key_H, CTRL)
    assert replace.isVisible()
    qtbot.keyClicks(find, "alpha")
    pane.findChild(QCheckBox, "findWholeWord").click()
    pane.findChild(QCheckBox, "findMatchCase").click()
    replace.setFocus()
    qtbot.keyClicks(replace, "omega")
    qtbot.keyClick(replace, Qt.Key.Key_Return)  # replaces the selected first match, selects the next
    assert pane.editor.toPlainText().startswith("omega = beta(alpha)")
    assert status.text() == "1 of 2" and selection(pane)[2] == "alpha"
    pane.findChild(QPushButton, "replaceAllButton").click()
    assert pane.editor.toPlainText() == "omega = beta(omega)\nAlpha_x = alpha_x + ALPHA\nreturn omega\n"
    assert status.text() == "Replaced 2"
    pane.editor.setFocus()
    qtbot.keyClick(pane.editor, Qt.Key.Key_Z, CTRL)
    assert pane.editor.toPlainText() == "omega = beta(alpha)\nAlpha_x = alpha_x + ALPHA\nreturn alpha\n"
    qtbot.keyClick(pane.editor, Qt.Key.Key_Z, CTRL)
    assert pane.editor.toPlainText() == TEXT


def test_editor_shortcuts_win_over_a_window_action_with_the_same_keys(qtbot):
    window, pane = shown_pane(qtbot)
    triggered: list[bool] = []
    action = QAction("Filter", window)
    action.setShortcut(QKeySequence("Ctrl+F"))
    action.triggered.connect(lambda: triggered.append(True))
    window.addAction(action)
    qtbot.keyClick(pane.editor, Qt.Key.Key_F, CTRL)
    bar, _find, _replace, _status = parts(pane)
    assert bar.isVisible() and triggered == []


def test_the_bar_follows_edits_and_closes_when_another_resource_is_shown(qtbot):
    _window, pane = shown_pane(qtbot)
    bar, find, _replace, status = parts(pane)
    qtbot.keyClick(pane.editor, Qt.Key.Key_F, CTRL)
    qtbot.keyClicks(find, "beta")
    assert status.text() == "1 of 1"
    pane.editor.moveCursor(QTextCursor.MoveOperation.End)
    pane.editor.insertPlainText("beta\n")
    assert status.text() == "2 matches"
    pane.load("x = 1\n", key="other")
    assert not bar.isVisible()


def test_status_follows_the_cursor_and_escape_in_the_editor_closes_the_bar(qtbot):
    _window, pane = shown_pane(qtbot)
    bar, find, _replace, status = parts(pane)
    qtbot.keyClick(pane.editor, Qt.Key.Key_F, CTRL)
    qtbot.keyClicks(find, "alpha")
    assert status.text() == "1 of 6"
    cursor = pane.editor.textCursor()
    cursor.setPosition(TEXT.rindex("alpha"))
    cursor.setPosition(TEXT.rindex("alpha") + 5, QTextCursor.MoveMode.KeepAnchor)
    pane.editor.setTextCursor(cursor)  # as a double click on the last one would
    assert status.text() == "6 of 6"
    pane.editor.setFocus()
    qtbot.keyClick(pane.editor, Qt.Key.Key_Escape)
    assert not bar.isVisible() and pane.editor.toPlainText() == TEXT
