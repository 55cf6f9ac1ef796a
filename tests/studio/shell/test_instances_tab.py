"""The editor's Instances tab: templates only, checked like the reader, undoable, saved, and showing listing errors."""

from __future__ import annotations

from PySide6.QtCore import Qt

from resources_qt.project import dumps_project, loads_project
from studio.document.document import ProjectDocument
from studio.shell.resource_editor import INSTANCES_TAB, ResourceEditor

INSTANCES = 'def instances():\n    return [{"folder": "work", "id": "42"}]\n'


def type_instances(editor: ResourceEditor, source: str) -> None:
    """Replace the snippet as typing would (an edit the user made), then check it."""
    editor.instances_editor.selectAll()
    editor.instances_editor.insertPlainText(source)
    editor.instances_editor.flush()
    editor.instances_pane.check()


def make(qtbot, document, name: str) -> ResourceEditor:
    editor = ResourceEditor(document)
    qtbot.addWidget(editor)
    editor.show_resource(name)
    return editor


def test_the_tab_is_for_templates_and_says_why_a_direct_resource_has_none(qtbot, document):
    editor = make(qtbot, document, "notes")
    tabs = editor.snippet_tabs
    assert tabs.tabText(INSTANCES_TAB) == "Instances" and tabs.widget(INSTANCES_TAB) is editor.instances_pane
    assert tabs.isTabEnabled(INSTANCES_TAB)
    tabs.setCurrentIndex(INSTANCES_TAB)
    editor.show_resource("readme")
    assert not tabs.isTabEnabled(INSTANCES_TAB)
    assert "direct resource" in tabs.tabToolTip(INSTANCES_TAB)
    assert tabs.currentIndex() != INSTANCES_TAB  # never left on a disabled tab


def test_an_empty_tab_shows_a_skeleton_with_the_templates_variables_but_writes_nothing(qtbot, document):
    editor = make(qtbot, document, "notes")
    editor.snippet_tabs.setCurrentIndex(INSTANCES_TAB)
    instances = editor.instances_editor
    assert instances.toPlainText() == ""
    assert instances.placeholderText().startswith("def instances():")
    assert '"folder": "folder-1", "id": "id-1"' in instances.placeholderText()
    editor.flush()
    editor.show_resource("readme")
    editor.show_resource("notes")
    assert document.peek("notes").instances == "" and not document.is_dirty


def test_typing_instances_marks_the_document_dirty_undoes_and_saves_to_the_instances_key(qtbot, document, tmp_path):
    editor = make(qtbot, document, "notes")
    instances = editor.instances_editor
    qtbot.keyClicks(instances, "def instances():")
    qtbot.keyClick(instances, Qt.Key.Key_Return)  # auto-indents the body
    qtbot.keyClicks(instances, 'return ["notes://work/42"]')
    instances.flush()
    assert document.is_dirty
    assert document.peek("notes").instances == 'def instances():\n    return ["notes://work/42"]'
    assert document.errors("notes") == []
    document.undo_stack.undo()
    assert instances.toPlainText() == "" and document.peek("notes").instances == ""
    assert not document.is_dirty
    document.undo_stack.redo()
    assert instances.toPlainText().endswith('return ["notes://work/42"]')
    target = tmp_path / "saved.toml"
    document.save(target)
    text = target.read_text(encoding="utf-8")
    assert "instances = '''\ndef instances():\n    return [\"notes://work/42\"]'''" in text
    assert loads_project(text).find("notes").instances == document.peek("notes").instances


def test_a_broken_or_missing_def_instances_is_flagged_like_the_reader(qtbot, document):
    editor = make(qtbot, document, "notes")
    instances = editor.instances_editor
    type_instances(editor, "def instances()\n    return []\n")
    assert instances.diagnostic is not None and instances.diagnostic[0] == 1
    assert editor.instances_pane.status.text().startswith("Line 1:")
    assert any(error.startswith("Instances snippet, line 1:") for error in document.snippet_errors("notes"))
    type_instances(editor, "def listing():\n    return []\n")
    assert "defines no instances() function" in editor.instances_pane.status.text()
    type_instances(editor, INSTANCES)
    assert instances.diagnostic is None and document.errors("notes") == []


def test_a_failed_listing_is_shown_on_the_tab_until_the_snippet_answers(qtbot, document):
    editor = make(qtbot, document, "notes")
    pane = editor.instances_pane
    assert pane.run_error.isHidden() and editor.snippet_tabs.tabIcon(INSTANCES_TAB).isNull()
    document.note_instances_failed("notes", "instances() failed: OSError: gone (line 2)")
    assert not pane.run_error.isHidden()
    assert "OSError: gone (line 2)" in pane.run_error.text()
    assert not editor.snippet_tabs.tabIcon(INSTANCES_TAB).isNull()
    editor.show_resource("readme")
    assert pane.run_error.isHidden()  # the failure is the template's, not the direct resource's
    editor.show_resource("notes")
    assert "OSError" in pane.run_error.text()
    document.note_instances_listed("notes")
    assert pane.run_error.isHidden() and editor.snippet_tabs.tabIcon(INSTANCES_TAB).isNull()


def test_instances_left_on_a_resource_made_direct_stay_editable_and_are_named_as_the_problem(qtbot, project):
    project.find("notes").instances = INSTANCES
    document = ProjectDocument(project)
    editor = make(qtbot, document, "notes")
    spec = document.spec("notes")
    spec.uri_template, spec.uri, spec.completions, spec.samples = "", "notes://all", {}, []
    document.update_resource("notes", spec)
    assert editor.snippet_tabs.isTabEnabled(INSTANCES_TAB)  # to cut the snippet out, or move it
    assert any("instances need a uri_template" in error for error in document.form_errors("notes"))
    type_instances(editor, "")
    assert document.form_errors("notes") == [] and not editor.snippet_tabs.isTabEnabled(INSTANCES_TAB)
    assert "instances" not in dumps_project(document.project).split("[[resources]]")[3]


def test_an_empty_editor_shows_the_whole_skeleton_without_the_current_line_band_over_it(qtbot, document):
    editor = make(qtbot, document, "notes")
    instances = editor.instances_editor
    assert instances.placeholderText() and instances.document().isEmpty()
    assert instances.extraSelections() == []  # the band would paint over the skeleton's first line
    qtbot.keyClicks(instances, "d")
    assert len(instances.extraSelections()) == 1  # typing brings the current line back
