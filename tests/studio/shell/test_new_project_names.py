"""A new project's server name, through the real window: "Untitled N" until its first save names it after its file,
so two new projects never share a client-configuration key."""

from __future__ import annotations

import json

from resources_qt.project import load_project
from studio.shell.main_window import MainWindow


def config_keys(window: MainWindow) -> list[str]:
    """The server keys of the client configuration the server page shows."""
    window.serving.refresh()
    shown = json.loads(window.server_panel.client_config.current_text())
    return [key for servers in shown.values() for key in servers]


def test_two_new_projects_have_their_own_names_until_saved_under_their_file_names(make_window, tmp_path):
    window = make_window()
    assert window.new_project()
    first = window.document.project.server.name
    first_keys = config_keys(window)
    assert first.startswith("Untitled ") and first in window.windowTitle()
    assert window.new_project()
    second = window.document.project.server.name
    assert second.startswith("Untitled ") and second != first
    assert config_keys(window) != first_keys and "resource-studio" not in first_keys + config_keys(window)

    assert window.save_as(tmp_path / "weather.toml")
    assert window.document.project.server.name == "weather"
    assert load_project(tmp_path / "weather.toml").server.name == "weather"
    assert config_keys(window) == ["weather"] and "weather.toml" in window.windowTitle()
    assert window.save_as(tmp_path / "elsewhere.toml")  # named once: a later Save As keeps the name
    assert window.document.project.server.name == "weather"


def test_a_name_typed_before_the_first_save_is_kept(make_window, tmp_path):
    window = make_window()
    assert window.new_project()
    settings = window.project_settings
    name_edit = settings.field("name")
    name_edit.setText("Support Desk")
    settings.commit()
    assert window.save_as(tmp_path / "desk.toml")
    assert window.document.project.server.name == "Support Desk"
    assert config_keys(window) == ["support-desk"]


def test_a_server_name_with_no_letters_is_keyed_by_the_project_file(make_window, tmp_path):
    window = make_window()
    assert window.new_project()
    assert window.save_as(tmp_path / "ledger.toml")
    settings = window.project_settings
    settings.field("name").setText("!!!")
    settings.commit()
    assert config_keys(window) == ["ledger"]
