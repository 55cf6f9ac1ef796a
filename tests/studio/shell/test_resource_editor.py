"""ResourceEditor: one page per selected resource, live snippet check, output, undo through the document."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from studio.shell.resource_editor import OUTPUT_MAX_LINES, ResourceEditor


def make(qtbot, document, name: str = "config") -> ResourceEditor:
    editor = ResourceEditor(document)
    qtbot.addWidget(editor)
    editor.show_resource(name)
    return editor


def test_shows_form_snippet_and_preview_of_the_resource(qtbot, document):
    editor = make(qtbot, document, "notes")
    assert editor.form.name_edit.text() == "notes"
    assert editor.snippet_editor.toPlainText() == document.peek("notes").reader
    assert editor.preview.uri == "notes://work/42"
    editor.show_resource("")
    assert editor.resource_name == "" and not editor.snippet_editor.isEnabled()


def test_breaking_the_snippet_underlines_the_line_and_marks_the_document(qtbot, document):
    editor = make(qtbot, document)
    snippet = editor.snippet_editor
    snippet.moveCursor(QTextCursor.MoveOperation.Start)
    snippet.moveCursor(QTextCursor.MoveOperation.EndOfLine)
    qtbot.keyClick(snippet, Qt.Key.Key_Backspace)  # drop the ':' of "def read(uri, params):"
    qtbot.waitUntil(lambda: snippet.diagnostic is not None)
    assert snippet.diagnostic[0] == 1
    assert editor.snippet_status.text().startswith("Line 1:")
    qtbot.waitUntil(lambda: bool(document.snippet_errors("config")))
    qtbot.keyClicks(snippet, ":")
    qtbot.waitUntil(lambda: snippet.diagnostic is None)
    qtbot.waitUntil(lambda: document.errors("config") == [])
    assert editor.snippet_status.text() == ""


def test_snippet_typing_is_one_undo_step_and_undo_updates_the_editor(qtbot, document):
    editor = make(qtbot, document)
    snippet = editor.snippet_editor
    original = snippet.toPlainText()
    snippet.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(snippet, "# one")
    snippet.flush()
    qtbot.keyClicks(snippet, " two")
    snippet.flush()
    assert document.peek("config").reader == original + "# one two"
    assert document.undo_stack.count() == 1
    document.undo_stack.undo()
    assert snippet.toPlainText() == original


def test_switching_resources_keeps_pending_snippet_edits(qtbot, document):
    editor = make(qtbot, document)
    snippet = editor.snippet_editor
    snippet.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(snippet, "# kept")
    assert snippet.has_pending_edit
    editor.show_resource("readme")
    assert document.peek("config").reader.endswith("# kept")
    assert snippet.toPlainText() == document.peek("readme").reader


def test_output_is_appended_and_bounded(qtbot, document):
    editor = make(qtbot, document)
    for number in range(OUTPUT_MAX_LINES + 50):
        editor.append_output(f"line {number}\n")
    lines = editor.output_view.toPlainText().splitlines()
    assert len(lines) == OUTPUT_MAX_LINES and lines[-1] == f"line {OUTPUT_MAX_LINES + 49}"
    editor.show_resource("readme")
    assert editor.output_view.toPlainText() == ""


def test_removing_the_shown_resource_empties_the_page(qtbot, document):
    editor = make(qtbot, document)
    document.remove_resource("config")
    assert editor.resource_name == "" and editor.form.resource_name == ""
    document.undo_stack.undo()
    editor.show_resource("config")
    assert editor.form.name_edit.text() == "config"


def test_a_rename_in_the_form_keeps_the_page_on_the_resource(qtbot, document):
    editor = make(qtbot, document)
    editor.form.name_edit.selectAll()
    qtbot.keyClicks(editor.form.name_edit, "settings")
    editor.form.name_edit.editingFinished.emit()
    assert editor.resource_name == "settings"
    snippet = editor.snippet_editor
    snippet.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(snippet, "# after rename")
    snippet.flush()
    assert document.peek("settings").reader.endswith("# after rename")


def test_completion_snippet_and_prelude_are_edited_and_checked(qtbot, document):
    editor = make(qtbot, document, "notes")
    assert editor.snippet_editor.objectName() == "snippetEditor"
    assert editor.findChild(type(editor.snippet_editor), "snippetEditor") is editor.snippet_editor
    complete = editor.complete_editor
    complete.set_source("")
    qtbot.keyClicks(complete, "def complete(name, value, context)")
    complete.flush()
    assert document.peek("notes").complete == "def complete(name, value, context)"
    editor.complete_pane.check()
    assert complete.diagnostic is not None and document.snippet_errors("notes")
    qtbot.keyClicks(complete, ":")
    qtbot.keyClick(complete, Qt.Key.Key_Return)
    qtbot.keyClicks(complete, "return []")
    complete.flush()
    editor.complete_pane.check()
    assert complete.diagnostic is None and document.errors("notes") == []

    prelude = editor.prelude_editor
    qtbot.keyClicks(prelude, "import json")
    prelude.flush()
    assert document.project.prelude == "import json"
    document.undo_stack.undo()
    assert prelude.toPlainText() == ""
    assert document.peek("notes").complete.endswith("return []")


def test_an_empty_reader_is_flagged(qtbot, document):
    editor = make(qtbot, document)
    editor.snippet_editor.clear()
    editor.reader_pane.check()
    assert "needs a reader" in editor.snippet_status.text() and not editor.snippet_status.isHidden()


def test_a_snippet_edit_keeps_a_rejected_name_in_the_form(qtbot, document):
    editor = make(qtbot, document)
    editor.form.name_edit.selectAll()
    qtbot.keyClicks(editor.form.name_edit, "readme")
    editor.form.name_edit.editingFinished.emit()
    assert editor.form.errors == ["Another resource is already named 'readme'"]
    snippet = editor.snippet_editor
    snippet.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(snippet, "# more")
    snippet.flush()
    assert document.peek("config").reader.endswith("# more")
    assert editor.form.name_edit.text() == "readme"
    assert editor.form.errors == ["Another resource is already named 'readme'"]


def test_an_error_coming_and_going_does_not_move_the_editor(qtbot, document):
    editor = make(qtbot, document)
    editor.resize(1000, 700)
    editor.show()
    qtbot.waitExposed(editor)
    snippet = editor.snippet_editor
    height = snippet.height()
    snippet.moveCursor(QTextCursor.MoveOperation.Start)
    snippet.moveCursor(QTextCursor.MoveOperation.EndOfLine)
    qtbot.keyClick(snippet, Qt.Key.Key_Backspace)
    qtbot.waitUntil(lambda: snippet.diagnostic is not None)
    qtbot.wait(10)  # let the layout settle
    assert editor.snippet_status.text().startswith("Line 1:") and snippet.height() == height
    qtbot.keyClicks(snippet, ":")
    qtbot.waitUntil(lambda: snippet.diagnostic is None)
    qtbot.wait(10)
    assert snippet.height() == height


def test_a_taller_form_does_not_narrow_the_fields(qtbot, document):
    editor = make(qtbot, document)
    editor.resize(1000, 500)
    editor.show()
    qtbot.waitExposed(editor)
    editor.show_resource("config")  # a direct resource: a short form
    qtbot.wait(10)
    width = editor.form.width()
    editor.show_resource("notes")  # a template: the completions make the form taller
    qtbot.wait(10)
    assert editor.form.height() > editor.form_scroll.viewport().height()
    assert editor.form.width() == width
