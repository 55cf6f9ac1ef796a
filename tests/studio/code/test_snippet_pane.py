"""SnippetPane: per-resource undo history, go to line, and a status line coloured from the palette."""

from __future__ import annotations

from helpers.contrast import contrast, dark_palette
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette, QTextCursor
from PySide6.QtWidgets import QLineEdit, QWidget

from studio.code.snippet_pane import KEPT_DOCUMENTS, SnippetPane
from studio.shell.resource_editor import ResourceEditor

CTRL = Qt.KeyboardModifier.ControlModifier


def make_pane(qtbot) -> SnippetPane:
    pane = SnippetPane(heading="Reader", placeholder="", function="read", required=True, object_name="snippetEditor")
    qtbot.addWidget(pane)
    pane.resize(600, 400)
    pane.show()
    qtbot.waitExposed(pane)
    # Under a real X server without a window manager a widget gets the keyboard focus only in the active window.
    pane.activateWindow()
    qtbot.waitActive(pane)
    return pane


def type_at_end(qtbot, editor, text: str) -> None:
    editor.setFocus()
    editor.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(editor, text)


def test_undo_in_the_editor_survives_switching_resources(qtbot, document):
    editor = ResourceEditor(document)
    qtbot.addWidget(editor)
    editor.resize(1000, 700)
    editor.show()
    qtbot.waitExposed(editor)
    snippet = editor.snippet_editor
    original = document.peek("readme").reader
    editor.show_resource("readme")
    type_at_end(qtbot, snippet, "# typed")
    editor.show_resource("config")  # flushes the edit to the document first
    assert document.peek("readme").reader == original + "# typed"
    assert snippet.toPlainText() == document.peek("config").reader
    qtbot.keyClick(snippet, Qt.Key.Key_Z, CTRL)  # config's own history is empty: nothing to undo
    assert snippet.toPlainText() == document.peek("config").reader
    editor.show_resource("readme")
    assert snippet.toPlainText() == original + "# typed"
    snippet.setFocus()
    qtbot.keyClick(snippet, Qt.Key.Key_Z, CTRL)
    assert snippet.toPlainText() == original
    qtbot.keyClick(snippet, Qt.Key.Key_Z, CTRL | Qt.KeyboardModifier.ShiftModifier)
    assert snippet.toPlainText() == original + "# typed"
    qtbot.keyClick(snippet, Qt.Key.Key_Z, CTRL)
    editor.flush()
    assert document.peek("readme").reader == original


def test_coming_back_after_the_document_changed_the_text_shows_the_document(qtbot, document):
    editor = ResourceEditor(document)
    qtbot.addWidget(editor)
    editor.show()
    qtbot.waitExposed(editor)
    snippet = editor.snippet_editor
    original = document.peek("readme").reader
    editor.show_resource("readme")
    type_at_end(qtbot, snippet, "# typed")
    editor.show_resource("config")
    document.undo_stack.undo()  # Edit > Undo while another resource is shown
    assert document.peek("readme").reader == original
    editor.show_resource("readme")
    assert snippet.toPlainText() == original
    qtbot.keyClick(snippet, Qt.Key.Key_Z, CTRL)  # a fresh history: the stale edit is not replayed
    assert snippet.toPlainText() == original


def test_kept_documents_are_bounded(qtbot):
    pane = make_pane(qtbot)
    for number in range(KEPT_DOCUMENTS + 5):
        pane.load(f"def read(uri, params):\n    return {number}\n", key=f"r{number}")
    kept = pane.kept_keys()
    assert len(kept) == KEPT_DOCUMENTS
    assert kept[-1] == f"r{KEPT_DOCUMENTS + 3}" and "r0" not in kept


def test_ctrl_g_goes_to_a_line_and_escape_returns(qtbot):
    pane = make_pane(qtbot)
    pane.load("\n".join(f"line_{n} = {n}" for n in range(1, 101)), key="r")
    pane.editor.setFocus()
    qtbot.waitUntil(pane.editor.hasFocus)
    qtbot.keyClick(pane.editor, Qt.Key.Key_G, CTRL)
    bar = pane.findChild(QWidget, "goToLineBar")
    field = pane.findChild(QLineEdit, "goToLineField")
    assert bar.isVisible()
    qtbot.waitUntil(field.hasFocus)
    qtbot.keyClicks(field, "42")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    assert not bar.isVisible()
    assert pane.editor.textCursor().blockNumber() == 41
    qtbot.waitUntil(pane.editor.hasFocus)
    qtbot.keyClick(pane.editor, Qt.Key.Key_G, CTRL)
    qtbot.keyClicks(field, "7")
    qtbot.keyClick(field, Qt.Key.Key_Escape)
    assert not bar.isVisible() and pane.editor.textCursor().blockNumber() == 41
    qtbot.keyClick(pane.editor, Qt.Key.Key_G, CTRL)
    field.setText("5000")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    assert pane.editor.textCursor().blockNumber() == 99  # clamped to the last line


def test_error_status_is_readable_in_light_and_dark_palettes(qtbot):
    pane = make_pane(qtbot)
    pane.load("def read(uri, params)\n    return 1\n", key="r")
    assert pane.status.text().startswith("Line 1")
    for palette in (QPalette(pane.palette()), dark_palette()):
        pane.setPalette(palette)
        shown = pane.status.palette().color(QPalette.ColorRole.WindowText)
        background = pane.palette().color(QPalette.ColorRole.Window)
        assert contrast(shown, background) >= 4.5
        assert shown != pane.palette().color(QPalette.ColorRole.WindowText)  # an error, not plain text


def test_a_long_snippet_is_checked_in_the_background_after_an_edit(qtbot):
    from studio.code.snippet_pane import BACKGROUND_CHECK_LINES

    pane = make_pane(qtbot)
    body = "\n".join(f"    v{n} = {n}" for n in range(BACKGROUND_CHECK_LINES + 10))
    pane.load(f"def read(uri, params):\n{body}\n    return 1\n", key="long")
    assert pane.editor.diagnostic is None
    type_at_end(qtbot, pane.editor, "x = )")  # an opening bracket would close itself
    # No wait on check_pending itself: an idle machine may finish the check before the first poll.
    qtbot.waitUntil(lambda: pane.editor.diagnostic is not None, timeout=60_000)
    assert pane.editor.diagnostic[0] == BACKGROUND_CHECK_LINES + 13
    assert pane.status.text().startswith(f"Line {BACKGROUND_CHECK_LINES + 13}:")
    qtbot.keyClick(pane.editor, Qt.Key.Key_Backspace)
    qtbot.keyClicks(pane.editor, "1")
    qtbot.waitUntil(lambda: pane.editor.diagnostic is None and not pane.check_pending, timeout=60_000)
    assert pane.status.text() == ""


def test_a_renamed_resource_keeps_its_undo_history(qtbot):
    pane = make_pane(qtbot)
    pane.load("a = 1\n", key="old")
    type_at_end(qtbot, pane.editor, "b = 2")
    edited = pane.editor.toPlainText()
    pane.rename_key("old", "new")
    pane.load("c = 3\n", key="other")
    pane.load(edited, key="new")
    qtbot.keyClick(pane.editor, Qt.Key.Key_Z, CTRL)
    assert pane.editor.toPlainText() == "a = 1\n"
