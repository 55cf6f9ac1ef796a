"""The settings page's Authorization group: [server.auth] typed, checked by the model, undoable, saved."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit

from resources_qt.project import AuthConfig, load_project
from resources_qt.project.auth_settings import AUTH_KEYS
from studio.settings_page.project_settings import ProjectSettingsView

ISSUER = "https://auth.example.com/realms/support"
RESOURCE = "https://mcp.example.com/mcp"


def make(qtbot, document) -> ProjectSettingsView:
    view = ProjectSettingsView(document)
    qtbot.addWidget(view)
    view.show()
    return view


def type_into(qtbot, edit: QLineEdit, text: str) -> None:
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    if text:
        qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def test_every_auth_key_has_a_labelled_field_in_the_authorization_group(qtbot, document) -> None:
    view = make(qtbot, document)
    assert view.auth.title() == "Authorization"
    for row in AUTH_KEYS:
        edit = view.field(row.path)
        assert edit.objectName() == row.widget and edit.text() == "" and edit.toolTip() == row.help


def test_typing_a_table_writes_it_saves_it_and_undoes_it(qtbot, document, tmp_path: Path) -> None:
    document.save(tmp_path / "p.toml")
    view = make(qtbot, document)
    type_into(qtbot, view.field("auth.issuer"), ISSUER)
    # An issuer alone is not a table yet: nothing is written, the missing key is named.
    assert document.project.server.auth is None and "auth.resource must be set" in view.auth.error
    type_into(qtbot, view.field("auth.resource"), RESOURCE)
    type_into(qtbot, view.field("auth.required_scopes"), "mcp:read, mcp:write")
    assert document.project.server.auth == AuthConfig(ISSUER, RESOURCE, required_scopes=("mcp:read", "mcp:write"))
    assert view.auth.error == ""
    document.save()
    assert load_project(tmp_path / "p.toml").server.auth == document.project.server.auth
    document.undo_stack.undo()  # typed in one go: one step, as typing one [server] key is
    assert document.project.server.auth is None and view.field("auth.issuer").text() == ""
    document.undo_stack.redo()
    assert view.field("auth.required_scopes").text() == "mcp:read mcp:write"
    for key in ("auth.issuer", "auth.resource", "auth.required_scopes"):
        type_into(qtbot, view.field(key), "")
    assert document.project.server.auth is None  # every field empty: no [server.auth]


def test_a_refused_value_is_framed_named_and_not_written(qtbot, document) -> None:
    view = make(qtbot, document)
    type_into(qtbot, view.field("auth.resource"), RESOURCE)
    type_into(qtbot, view.field("auth.issuer"), "http://auth.example.com")
    assert document.project.server.auth is None
    assert "auth.issuer must use https" in view.auth.error
    assert view.field("auth.issuer").styleSheet() and not view.field("auth.resource").styleSheet()
    type_into(qtbot, view.field("auth.issuer"), ISSUER)
    type_into(qtbot, view.field("auth.required_scopes"), 'mcp"read')
    assert "not a scope" in view.auth.error and document.project.server.auth == AuthConfig(ISSUER, RESOURCE)


def test_a_running_server_asks_for_a_restart_when_authorization_changes(qtbot, document) -> None:
    view = make(qtbot, document)
    view.set_server_running(True)
    type_into(qtbot, view.field("auth.issuer"), ISSUER)
    type_into(qtbot, view.field("auth.resource"), RESOURCE)
    assert view.pending_restart() == ["auth"] and view.restart_button.isEnabled()
