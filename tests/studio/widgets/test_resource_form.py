"""ResourceForm: fields load, edits reach the document as one undo step, errors are shown inline, nothing is lost."""

from __future__ import annotations

import base64
from dataclasses import replace

from PySide6.QtCore import QBuffer, Qt
from PySide6.QtGui import QColor, QImage

from resources_qt.resource import Icon
from studio.widgets.resource_form import ResourceForm


def make(qtbot, document, name: str) -> ResourceForm:
    form = ResourceForm(document)
    qtbot.addWidget(form)
    form.set_resource(name)
    return form


def type_into(qtbot, edit, text: str) -> None:
    """Replace the field's text by typing, then leave it (as a user would)."""
    edit.selectAll()
    if text:
        qtbot.keyClicks(edit, text)
    else:
        qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    edit.editingFinished.emit()


def test_fields_show_the_spec(qtbot, document):
    form = make(qtbot, document, "notes")
    assert form.name_edit.objectName() == "nameEdit" and form.name_edit.text() == "notes"
    assert form.uri_edit.objectName() == "uriEdit" and form.uri_edit.text() == "notes://{folder}/{id}"
    assert form.template_radio.isChecked() and not form.direct_radio.isChecked()
    assert form.mime_edit.objectName() == "mimeEdit" and form.mime_edit.currentText() == "application/json"
    assert form.samples_edit.toPlainText() == "notes://work/42\nnotes://home/7"
    assert form.findChild(type(form.name_edit), "completion_folder").text() == "work, home, archive"
    assert form.findChild(type(form.name_edit), "completion_id").text() == ""
    assert form.errors == [] and form.error_label.isHidden()


def test_typing_a_title_commits_one_undo_step(qtbot, document):
    form = make(qtbot, document, "readme")
    form.title_edit.clear()
    qtbot.keyClicks(form.title_edit, "A longer title")
    qtbot.waitUntil(lambda: document.peek("readme").title == "A longer title")
    assert document.undo_stack.count() == 1
    document.undo_stack.undo()
    assert form.title_edit.text() == "Read me"  # the form follows undo


def test_empty_name_is_shown_inline_and_kept_in_the_field(qtbot, document):
    form = make(qtbot, document, "readme")
    type_into(qtbot, form.name_edit, "")
    assert form.errors == ["Resource name must not be empty"]
    assert not form.error_label.isHidden()
    assert "d32f2f" in form.name_edit.styleSheet()
    assert form.name_edit.text() == ""
    assert document.peek("readme") is not None  # the document keeps the last good name
    type_into(qtbot, form.name_edit, "intro")
    assert document.peek("intro") is not None and form.errors == []
    assert form.name_edit.styleSheet() == ""


def test_taken_name_is_refused_with_a_message(qtbot, document):
    form = make(qtbot, document, "readme")
    type_into(qtbot, form.name_edit, "config")
    assert form.errors == ["Another resource is already named 'config'"]
    assert form.name_edit.text() == "config"
    assert document.names() == ["readme", "config", "notes"]


def test_one_address_field_switches_between_uri_and_template(qtbot, document):
    form = make(qtbot, document, "readme")
    type_into(qtbot, form.uri_edit, "docs://pages/{page}")
    # As a direct URI the braces are just characters; the form stores a URI, never both kinds.
    assert document.peek("readme").uri == "docs://pages/{page}" and document.peek("readme").uri_template == ""
    form.template_radio.setChecked(True)
    spec = document.peek("readme")
    assert spec.uri_template == "docs://pages/{page}" and spec.uri == ""
    assert form.findChild(type(form.name_edit), "completion_page") is not None
    form.direct_radio.setChecked(True)
    assert document.peek("readme").uri == "docs://pages/{page}" and document.peek("readme").uri_template == ""


def test_both_kinds_from_a_file_show_the_builders_message(qtbot, document):
    document.update_resource("readme", replace(document.spec("readme"), uri_template="docs://{x}"))
    form = make(qtbot, document, "readme")
    assert form.errors == ["Resource 'readme': Cannot set both URI and URITemplate"]
    assert "d32f2f" in form.uri_edit.styleSheet()
    assert form.uri_edit.text() == "docs://{x}" and form.template_radio.isChecked()
    form.direct_radio.setChecked(True)  # the switch decides: one kind only
    spec = document.peek("readme")
    assert (spec.uri, spec.uri_template) == ("docs://{x}", "")
    assert form.errors == [
        "Resource 'readme': URI 'docs://{x}' looks like a template; declare it as uri_template"
    ]
    form.template_radio.setChecked(True)
    assert document.peek("readme").uri_template == "docs://{x}" and form.errors == []


def test_invalid_template_is_marked_but_kept(qtbot, document):
    form = make(qtbot, document, "notes")
    type_into(qtbot, form.uri_edit, "notes://{folder")
    assert form.errors and "Invalid URI template" in form.errors[0]
    assert "d32f2f" in form.uri_edit.styleSheet()
    assert document.peek("notes").uri_template == "notes://{folder"  # saved, marked as an error
    assert document.errors("notes")
    # the completions typed for the variables survive the broken template
    assert form.findChild(type(form.name_edit), "completion_folder").text() == "work, home, archive"


def test_completions_of_a_removed_variable_are_kept_and_flagged(qtbot, document):
    form = make(qtbot, document, "notes")
    type_into(qtbot, form.uri_edit, "notes://{id}")
    assert document.peek("notes").completions == {"folder": ["work", "home", "archive"]}
    assert any("unknown variable(s) folder" in e for e in form.errors)
    edit = form.findChild(type(form.name_edit), "completion_folder")
    type_into(qtbot, edit, "")
    assert form.errors == [] and document.peek("notes").completions == {}


def test_mime_annotations_samples_are_committed(qtbot, document):
    form = make(qtbot, document, "config")
    form.mime_edit.setEditText("application/vnd.demo+json")
    form.audience_assistant.setChecked(True)
    form.priority_spin.setValue(0.5)
    form.samples_edit.setPlainText("docs://config\n\n  docs://config?v=2  ")
    form.commit()
    spec = document.peek("config")
    assert spec.mime_type == "application/vnd.demo+json"
    assert spec.annotations.audience == ("assistant",) and spec.annotations.priority == 0.5
    assert spec.samples == ["docs://config", "docs://config?v=2"]
    form.audience_assistant.setChecked(False)
    form.priority_spin.setValue(form.priority_spin.minimum())
    form.commit()
    assert document.peek("config").annotations is None


def test_icons_table_round_trip_with_thumbnail(qtbot, document, tmp_path):
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    image.fill(QColor("red"))
    buffer = QBuffer()
    buffer.open(QBuffer.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    data_uri = "data:image/png;base64," + base64.b64encode(bytes(buffer.data())).decode()
    file_icon = tmp_path / "icon.png"
    file_icon.write_bytes(bytes(buffer.data()))
    icons = [Icon(data_uri, "image/png", ("8x8",)), Icon(str(file_icon)), Icon("https://example.com/i.png")]
    document.update_resource("readme", replace(document.spec("readme"), icons=icons))
    form = make(qtbot, document, "readme")
    table = form.icons_table.table
    assert table.rowCount() == 3
    assert not table.item(0, 0).icon().isNull() and not table.item(1, 0).icon().isNull()
    assert table.item(2, 0).icon().isNull()  # remote icons get no thumbnail
    table.item(0, 3).setText("8x8 16x16")
    assert document.peek("readme").icons[0].sizes == ("8x8", "16x16")
    table.selectRow(2)
    form.icons_table.remove_button.click()
    assert [i.src for i in document.peek("readme").icons] == [data_uri, str(file_icon)]


def test_switching_resources_commits_pending_edits(qtbot, document):
    form = make(qtbot, document, "readme")
    form.title_edit.setText("pending")
    form.title_edit.textEdited.emit("pending")
    form.set_resource("config")
    assert document.peek("readme").title == "pending"
    assert form.title_edit.text() == ""
    form.set_resource("")
    assert not form.isEnabled()


def test_form_follows_an_external_rename(qtbot, document):
    form = make(qtbot, document, "config")
    document.update_resource("config", replace(document.spec("config"), name="settings", title="T"))
    assert form.resource_name == "settings" and form.name_edit.text() == "settings"
    assert form.title_edit.text() == "T"
    assert form.mime_edit.currentText() == "application/json"
    assert form.direct_radio.isChecked()
    assert form.uri_edit.text() == "docs://config"


def test_looking_at_a_resource_does_not_change_it(qtbot, document):
    document.update_resource("readme", replace(document.spec("readme"), description="  spaced out \n"))
    document.undo_stack.clear()
    form = make(qtbot, document, "readme")
    form.title_edit.editingFinished.emit()  # focus left a field without an edit
    form.set_resource("notes")
    form.set_resource("config")
    assert document.undo_stack.count() == 0
    assert document.peek("readme").description == "  spaced out \n"
