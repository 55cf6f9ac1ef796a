"""The project settings view in the window: a renamed server reaches real clients; a restart applies capabilities."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit, QPushButton

from resources_qt.project import load_project

WAIT_MS = 15_000


def test_server_name_typed_in_settings_is_saved_and_seen_by_clients(make_window, project_file, qtbot, connect):
    window = make_window()
    window.open_project(project_file)
    window.commands.page_actions["settings"].trigger()  # the page is built when first shown
    name = window.findChild(QLineEdit, "serverNameEdit")
    assert name is not None and name.text() == "Test Desk"
    name.setFocus()
    name.selectAll()
    qtbot.keyClicks(name, "Renamed Desk")
    qtbot.keyClick(name, Qt.Key.Key_Return)
    assert window.document.project.server.name == "Renamed Desk" and window.document.is_dirty
    window.start_http("127.0.0.1", 0)
    qtbot.waitUntil(lambda: window.server_panel.is_running, timeout=WAIT_MS)
    client = connect(window.server_panel.url)
    info = client.connected.result().server_info
    assert info is not None and info.name == "Renamed Desk"
    assert window.save_as(project_file)
    assert load_project(project_file).server.name == "Renamed Desk"


def test_a_capability_change_while_serving_offers_a_restart_that_applies_it(make_window, project_file, qtbot):
    window = make_window()
    window.open_project(project_file)
    window.start_http("127.0.0.1", 0)
    qtbot.waitUntil(lambda: window.server_panel.is_running, timeout=WAIT_MS)
    settings = window.project_settings
    settings.field("notifications").click()  # on -> off: advertised at start
    assert settings.pending_restart() == ["notifications"]
    button = window.findChild(QPushButton, "restartServerButton")
    assert button is not None and button.isEnabled()
    button.click()
    qtbot.waitUntil(lambda: window.server_panel.is_running and not settings.pending_restart(), timeout=WAIT_MS)
    assert not window.server_panel.notify_list_button.isEnabled()
    assert "turn on Notifications in Project settings" in window.server_panel.notify_hint.text()
