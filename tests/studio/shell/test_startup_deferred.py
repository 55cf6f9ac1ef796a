"""What the window builds after its first paint, or on first use, works as if it had been built at start-up."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton, QTableView

from studio.tests_page.tests_view import TestsView


def test_the_tests_page_is_built_when_first_shown_with_the_projects_tests(make_window, project_file, qtbot):
    window = make_window()
    window.open_project(project_file)
    window.show()
    qtbot.waitExposed(window)
    window.catalogue.select("ticket")
    assert window.findChild(TestsView) is None  # nothing of it before it is wanted
    window.commands.page_actions["tests"].trigger()  # Ctrl+5 / the toolbar's Tests
    view = window.findChild(TestsView)
    assert view is not None and view is window.tests_view and view.isVisible()
    assert window.current_page == "tests" and window.pages.currentWidget() is view
    table = view.findChild(QTableView, "testsTable")
    assert [table.model().index(row, 1).data() for row in range(table.model().rowCount())] == [
        "sample: docs://readme", "sample: tickets://7"]
    # The catalogue's selection made before the page existed is the resource the button runs.
    button = view.findChild(QPushButton, "runResourceTestsButton")
    assert button.isEnabled()
    with qtbot.waitSignal(view.run_finished, timeout=30_000) as finished:
        button.click()
    assert finished.args == [1, 0]  # the ticket's sample; the readme's stays not run
    assert "Tests: 1 passed, 0 failed" in window.statusBar().currentMessage()


def test_the_tests_page_follows_edits_made_before_it_was_built(make_window, project_file, qtbot):
    window = make_window()
    window.open_project(project_file)
    window.document.add_resource(template=False)  # its own URI is a sample: one more row
    window.show_page("tests")
    assert window.tests_view.model.rowCount() == 3
    window.show_page("editor")
    assert window.current_page == "editor"
    window.document.add_resource(template=False)  # built now: it follows edits itself
    assert window.tests_view.model.rowCount() == 4


def _broken_project(path):
    from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project

    reader = "def read(uri, params):\n    return 'ok'\n"
    return save_project(Project(server=ServerSettings(name="broken"), resources=[
        ResourceSpec(name="good", uri="demo://good", mime_type="text/plain", reader=reader),
        ResourceSpec(name="broken", uri="demo://broken", mime_type="text/plain",
                     reader="def read(uri, params):\n    return (\n"),
        ResourceSpec(name="no_address", uri="", mime_type="text/plain", reader=reader),
    ]), path)  # fmt: skip


def test_compile_errors_of_an_opened_project_still_show_and_only_form_errors_hold_back(make_window, tmp_path, qtbot):
    # Opening checks every form (what is served depends on it); compile checks run for what is shown.
    window = make_window()
    window.open_project(_broken_project(tmp_path / "broken.toml"))
    assert window.sync.held_back() == ["no_address"]
    assert window.sync.served_names() == ["broken", "good"]  # a broken snippet is served; its reads fail
    window.show()
    qtbot.waitExposed(window)
    model = window.catalogue.resource_model
    tips = {model.index(row, 0).data(): model.index(row, 0).data(Qt.ItemDataRole.ToolTipRole) or ""
            for row in range(model.rowCount())}  # fmt: skip
    assert "Reader snippet, line 2" in tips["broken"] and "Reader snippet" not in tips["good"]
    qtbot.waitUntil(lambda: "1 with snippet errors (failing)" in window.errors_label.text(), timeout=5000)
    assert "1 with errors (not served)" in window.errors_label.text()
    window.catalogue.select("broken")
    with qtbot.waitSignal(window.controller.preview_finished, timeout=15_000) as finished:
        window.editor.preview.read()
    assert finished.args[0].error_code == -32000 and "line 2" in finished.args[0].error_message


def test_the_system_theme_keeps_the_style_it_has_and_comes_back_from_the_dark_one(qapp):
    from studio.look.theme import StudioStyle, apply_theme

    apply_theme(qapp, "system")
    platform_style = qapp.style()
    name = platform_style.name().lower()  # the style object goes when another replaces it
    apply_theme(qapp, "system")  # at start-up: the style is already the platform's, nothing to re-polish
    assert qapp.style() is platform_style
    apply_theme(qapp, "dark")
    assert isinstance(qapp.style(), StudioStyle)
    apply_theme(qapp, "system")
    assert not isinstance(qapp.style(), StudioStyle)
    assert qapp.style().name().lower() == name


def test_the_settings_page_is_built_when_shown_or_when_a_server_starts(make_window, project_file, qtbot):
    from studio.settings_page.project_settings import ProjectSettingsView

    window = make_window()
    window.open_project(project_file)
    window.show()
    qtbot.waitExposed(window)
    assert window.findChild(ProjectSettingsView) is None
    window.start_http("127.0.0.1", 0)  # from its start, the page compares the settings with the server's
    qtbot.waitUntil(lambda: window.server_panel.is_running, timeout=15_000)
    view = window.findChild(ProjectSettingsView)
    assert view is not None and not view.isVisible()
    window.document.set_server_settings(replace(window.document.project.server, notifications=False))
    window.commands.page_actions["settings"].trigger()
    assert view.isVisible() and window.current_page == "settings"
    assert view.pending_restart() == ["notifications"]
    assert window.findChild(QPushButton, "restartServerButton").isVisible()


def test_the_settings_page_built_late_shows_the_projects_settings(make_window, project_file, qtbot):
    from PySide6.QtWidgets import QLineEdit

    window = make_window()
    window.open_project(project_file)
    window.document.set_server_settings(replace(window.document.project.server, name="Renamed"))
    assert window.findChild(QLineEdit, "serverNameEdit") is None
    window.show_page("settings")
    name = window.findChild(QLineEdit, "serverNameEdit")
    assert name is not None and name.text() == "Renamed"
    assert window.project_settings.pending_restart() == []  # no server runs
