"""ResourceForm: fields load, edits reach the document as one undo step, errors are shown inline, nothing is lost."""

from __future__ import annotations

import base64
from dataclasses import replace
from datetime import datetime

import pytest
from PySide6.QtCore import QBuffer, Qt
from PySide6.QtGui import QColor, QImage

from resources_qt.resource import CacheHint, Icon
from studio.builder.resource_details import HAS_UNCHECKED_VALUES
from studio.builder.resource_form import ResourceForm


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
    assert form.marked_fields() == [form.name_edit]
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
    assert form.marked_fields() == [form.uri_edit]
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
    assert form.marked_fields() == [form.uri_edit]
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
    icons = [Icon(data_uri, "image/png", ("8x8",)), Icon("icon.png"), Icon("https://example.com/i.png")]
    document.update_resource("readme", replace(document.spec("readme"), icons=icons))
    document.save(tmp_path / "project.toml")  # icon files are shown from the project's folder
    form = make(qtbot, document, "readme")
    table = form.icons_table.table
    assert table.rowCount() == 3
    # Decoded off the GUI thread: the thumbnails arrive.
    qtbot.waitUntil(lambda: not table.item(0, 0).icon().isNull() and not table.item(1, 0).icon().isNull())
    assert table.item(2, 0).icon().isNull()  # remote icons get no thumbnail
    table.item(0, 3).setText("8x8 16x16")
    assert document.peek("readme").icons[0].sizes == ("8x8", "16x16")
    table.selectRow(2)
    form.icons_table.remove_button.click()
    assert [i.src for i in document.peek("readme").icons] == [data_uri, "icon.png"]


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


def test_size_last_modified_and_cache_hint_are_committed(qtbot, document):
    form = make(qtbot, document, "readme")
    details = form.details
    type_into(qtbot, details.size_edit, "2048")
    assert document.peek("readme").size == 2048
    details.now_button.click()
    stamp = details.last_modified_edit.text()
    assert stamp.endswith("Z") and datetime.fromisoformat(stamp).tzinfo is not None
    assert document.peek("readme").annotations.last_modified == stamp
    type_into(qtbot, details.cache_ttl_edit, "60000")
    details.cache_scope_combo.setCurrentText("public")
    details.cache_scope_combo.activated.emit(details.cache_scope_combo.currentIndex())
    assert document.peek("readme").cache == CacheHint(60000, "public")
    type_into(qtbot, details.cache_ttl_edit, "")
    type_into(qtbot, details.size_edit, "")
    spec = document.peek("readme")
    assert spec.cache is None and spec.size is None and spec.annotations.last_modified == stamp
    # The form shows what the document holds when it changes elsewhere (undo, a reload).
    document.undo_stack.undo()
    assert details.size_edit.text() == "" and details.last_modified_edit.text() == ""
    document.update_resource("readme", replace(document.spec("readme"), size=77, cache=CacheHint(9, "public")))
    assert details.size_edit.text() == "77" and details.cache_ttl_edit.text() == "9"
    assert details.cache_scope_combo.currentText() == "public"


def test_unparsable_details_are_refused_naming_the_field_and_kept_typed(qtbot, document):
    form = make(qtbot, document, "readme")
    details = form.details
    type_into(qtbot, details.size_edit, "big")
    assert form.errors == ["size must be a whole number, not 'big'"]
    assert form.marked_fields() == [details.size_edit] and details.size_edit.text() == "big"
    assert document.peek("readme").size is None
    type_into(qtbot, details.last_modified_edit, "yesterday")
    assert any(e.startswith("annotations.lastModified must be an ISO 8601") for e in form.errors)
    assert set(form.marked_fields()) == {details.size_edit, details.last_modified_edit}
    type_into(qtbot, details.cache_ttl_edit, "-5")
    assert "cache.ttl_ms must not be negative, not -5" in form.errors
    # A valid edit elsewhere still goes through, and the drafts stay.
    type_into(qtbot, form.title_edit, "Still editable")
    assert document.peek("readme").title == "Still editable"
    assert details.size_edit.text() == "big" and details.cache_ttl_edit.text() == "-5"
    type_into(qtbot, details.size_edit, "10")
    type_into(qtbot, details.last_modified_edit, "2026-01-31T12:00:00Z")
    type_into(qtbot, details.cache_ttl_edit, "5")
    assert form.errors == [] and form.marked_fields() == []
    spec = document.peek("readme")
    assert (spec.size, spec.annotations.last_modified, spec.cache) == (10, "2026-01-31T12:00:00Z", CacheHint(5))


def test_the_error_banner_does_not_move_the_fields(qtbot, document):
    form = make(qtbot, document, "readme")
    form.resize(500, 900)
    form.show()
    qtbot.waitExposed(form)
    before = {w.objectName(): w.mapTo(form, w.rect().topLeft()) for w in (form.name_edit, form.uri_edit)}
    type_into(qtbot, form.name_edit, "config")
    type_into(qtbot, form.details.size_edit, "x")
    type_into(qtbot, form.details.cache_ttl_edit, "y")
    assert len(form.errors) == 3 and form.error_label.isVisible()
    assert "1 more" in form.error_label.text() or len(form.error_label.text().splitlines()) <= 2
    after = {w.objectName(): w.mapTo(form, w.rect().topLeft()) for w in (form.name_edit, form.uri_edit)}
    assert after == before


def test_a_template_offers_unchecked_values_a_direct_resource_does_not(qtbot, document):
    if not HAS_UNCHECKED_VALUES:
        pytest.skip("the model has no unchecked_values yet")
    form = make(qtbot, document, "notes")
    form.show()
    assert form.details.unchecked_check.isVisible() and not form.details.unchecked_check.isChecked()
    form.details.unchecked_check.click()
    assert document.peek("notes").unchecked_values
    form.set_resource("readme")
    assert not form.details.unchecked_check.isVisible()


def test_a_default_sample_follows_the_template_with_values_named_after_variables(qtbot, document):
    name = document.add_resource(template=True)
    form = make(qtbot, document, name)
    type_into(qtbot, form.uri_edit, "weather://{city}/{day}")
    assert document.peek(name).samples == ["weather://city-1/day-1"]
