"""The builder's scopes field: typed scopes reach the document as the spec's `scopes`, bad ones are named."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit

from resources_qt.project import dumps_project, loads_project
from studio.builder.resource_form import ResourceForm


def make(qtbot, document, name: str) -> ResourceForm:
    form = ResourceForm(document)
    qtbot.addWidget(form)
    form.set_resource(name)
    return form


def type_into(qtbot, edit, text: str) -> None:
    edit.selectAll()
    if text:
        qtbot.keyClicks(edit, text)
    else:
        qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    edit.editingFinished.emit()


def test_scopes_typed_in_the_form_reach_the_document_and_the_file(qtbot, document) -> None:
    form = make(qtbot, document, "notes")
    edit = form.findChild(QLineEdit, "resourceScopesEdit")
    assert edit is form.details.scopes.edit and edit.text() == ""
    type_into(qtbot, edit, "crm:read, notes:read")
    assert document.peek("notes").scopes == ["crm:read", "notes:read"] and form.errors == []
    assert loads_project(dumps_project(document.project)).find("notes").scopes == ["crm:read", "notes:read"]
    document.undo_stack.undo()
    assert document.peek("notes").scopes == [] and edit.text() == ""


def test_a_scope_the_model_refuses_is_named_marked_and_kept_typed(qtbot, document) -> None:
    form = make(qtbot, document, "readme")
    edit = form.details.scopes.edit
    type_into(qtbot, edit, 'crm:read crm"write')
    assert any("scopes" in error and "not a scope" in error for error in form.errors)
    assert edit in form.marked_fields() and edit.text() == 'crm:read crm"write'
    assert document.peek("readme").scopes == []
    type_into(qtbot, edit, "crm:read crm:read")
    assert any("listed twice" in error for error in form.errors)
    type_into(qtbot, edit, "crm:read")
    assert form.errors == [] and document.peek("readme").scopes == ["crm:read"]
