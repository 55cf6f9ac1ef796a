"""Live data edited in the real window: instances typed in the tab reach a client; watch served, saved, recovered."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLabel, QPlainTextEdit

from resources_qt.project import load_project
from resources_qt.project.model import WatchSpec
from studio.shell.main_window import MainWindow
from studio.shell.project_files import bundled_example
from studio.shell.resource_editor import INSTANCES_TAB

WAIT_MS = 15_000
LISTED = 'def instances():\n    return [{"id": "7", "title": "Ticket 7"}, "tickets://8"]\n'
RAISING = 'def instances():\n    raise OSError("the ticket folder is gone")\n'

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


def type_instances(window: MainWindow, source: str) -> None:
    editor = window.findChild(QPlainTextEdit, "instancesEditor")
    assert editor is not None
    editor.selectAll()
    editor.insertPlainText(source)
    window.editor.flush()


def edit_live_fields(window: MainWindow, files: str, interval: str) -> None:
    form = window.editor.form
    form.live.files_edit.selectAll()
    form.live.files_edit.insertPlainText(files)
    form.live.interval_edit.setText(interval)
    form.live.interval_edit.textEdited.emit(interval)
    window.editor.flush()


def test_instances_typed_in_the_tab_are_listed_by_a_client_and_a_failure_shows_on_the_tab(
    make_window, project_file, qtbot, connect
):
    window = make_window()
    assert window.open_project(project_file)
    window.start_http("127.0.0.1", 0)
    qtbot.waitUntil(lambda: window.server_panel.is_running, timeout=WAIT_MS)
    client = connect(window.server_panel.url)

    def listed() -> dict[str, str]:
        future = client.submit(lambda c: c.list_resources(cursor=None, cache_mode="bypass"))
        qtbot.waitUntil(future.done, timeout=WAIT_MS)
        return {str(r.uri): r.name for r in future.result().resources}

    assert listed() == {"docs://readme": "readme"}
    assert window.catalogue.select("ticket")
    window.editor.snippet_tabs.setCurrentIndex(INSTANCES_TAB)
    type_instances(window, LISTED)
    assert window.isWindowModified()
    qtbot.waitUntil(lambda: "tickets://8" in listed(), timeout=WAIT_MS)
    assert listed() == {"docs://readme": "readme", "tickets://7": "ticket (7)", "tickets://8": "ticket (8)"}

    pane = window.editor.instances_pane
    type_instances(window, RAISING)
    qtbot.waitUntil(lambda: set(listed()) == {"docs://readme"}, timeout=WAIT_MS)  # the rest is intact
    qtbot.waitUntil(lambda: not pane.run_error.isHidden(), timeout=WAIT_MS)
    assert "the ticket folder is gone" in pane.run_error.text()
    failure = window.document.instances_failure("ticket")
    assert failure is not None and "the ticket folder is gone" in failure.message
    type_instances(window, LISTED)
    qtbot.waitUntil(lambda: "tickets://7" in listed(), timeout=WAIT_MS)
    qtbot.waitUntil(pane.run_error.isHidden, timeout=WAIT_MS)
    assert window.document.instances_failure("ticket") is None


def test_instances_and_watch_survive_save_and_reopen(make_window, project_file, qtbot, tmp_path):
    window = make_window()
    assert window.open_project(project_file)
    assert window.catalogue.select("ticket")
    type_instances(window, LISTED)
    edit_live_fields(window, "tickets/*.json\ntickets/archive/**", "30")
    expected = WatchSpec(files=["tickets/*.json", "tickets/archive/**"], interval=30.0)
    assert window.document.peek("ticket").watch == expected
    qtbot.waitUntil(lambda: window.controller.watching().get("ticket") == "both", timeout=WAIT_MS)  # served
    target = tmp_path / "saved" / "live.toml"
    assert window.save_as(target)
    saved = load_project(target).find("ticket")
    assert saved is not None and saved.instances == LISTED and saved.watch == expected

    again = make_window()
    assert again.open_project(target)
    assert again.catalogue.select("ticket")
    assert again.editor.instances_editor.toPlainText() == LISTED
    assert again.editor.form.live.files_edit.toPlainText() == "tickets/*.json\ntickets/archive/**"
    assert again.editor.form.live.interval_edit.text() == "30"


def test_instances_and_watch_are_recovered_after_a_crash(make_window, project_file):
    crashed = make_window()
    assert crashed.open_project(project_file)
    assert crashed.catalogue.select("ticket")
    type_instances(crashed, LISTED)
    edit_live_fields(crashed, "tickets", "2.5")
    assert crashed.autosaver.save_now() is not None
    crashed.shutdown()  # the process "dies": no save, no clean close

    window = make_window(ask_restore=lambda candidate: True)
    assert window.open_project(project_file)
    assert window.isWindowModified()
    spec = window.document.peek("ticket")
    assert spec is not None and spec.instances == LISTED
    assert spec.watch == WatchSpec(files=["tickets"], interval=2.5)


def test_four_snippet_tabs_and_the_folded_live_data_group_fit_beside_the_builder_at_1280x800(make_window, qtbot):
    window = make_window()
    example = bundled_example()
    assert example is not None and window.open_example(example)
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    template = next(name for name in window.document.names() if window.document.peek(name).is_template)
    assert window.catalogue.select(template)
    editor = window.editor
    editor.set_builder_visible(True)
    bar = editor.snippet_tabs.tabBar()
    qtbot.waitUntil(lambda: bar.isVisible() and bar.width() > 0)
    for index in range(bar.count()):  # none shortened or scrolled away
        rect = bar.tabRect(index)
        assert rect.width() >= bar.tabSizeHint(index).width(), bar.tabText(index)
        assert rect.right() < bar.width(), bar.tabText(index)
    live = editor.form.live
    assert not live.expanded
    header = live.box.sizeHint().height()
    assert header <= live.toggle.sizeHint().height() + 4  # folded, the group is one row
    live.set_expanded(True)
    qtbot.waitUntil(live.interval_edit.isVisible)
    scroll = editor.form_scroll
    assert scroll.horizontalScrollBar().maximum() == 0, "nothing to scroll sideways to"
    viewport = scroll.viewport()
    for field in (live.files_edit, live.interval_edit, window.findChild(QLabel, "watchIntervalUnit")):
        right = field.mapTo(viewport, field.rect().topRight()).x()
        assert right < viewport.width(), f"{field.objectName()} ends at {right} of {viewport.width()} px"
