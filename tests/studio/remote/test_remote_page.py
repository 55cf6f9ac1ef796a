"""The Remote page through the real window: connect, browse, read, complete, subscribe, import, disconnect."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from helpers.remote_servers import script_command, serve_http, stdio_children
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project
from resources_qt.project.model import WatchSpec
from studio.remote.connect_dialog import ConnectRequest
from studio.remote.remote_page import RemotePage

WAIT_MS = 30_000
GREETING = "remote://greeting"


def _page(window: object) -> RemotePage:
    page = window.findChild(RemotePage, "remotePage")  # type: ignore[attr-defined]
    assert isinstance(page, RemotePage)
    return page


def _remote_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name in ("remote-client", "remote-stderr")]


def test_connect_browse_read_complete_import_and_disconnect_over_stdio(qtbot, make_window, tmp_path: Path) -> None:
    before = stdio_children()
    window = make_window()
    window.connect_remote(script_command("sdk"))
    page = _page(window)
    assert window.current_page == "remote"
    catalogue = page.catalogue
    assert catalogue.objectName() == "remoteCatalogue"
    qtbot.waitUntil(lambda: catalogue.model().rowCount() == 3, timeout=WAIT_MS)
    assert "remote-sdk 3.1" in page.server_label.text()
    assert page.instructions_label.text() == "Read remote://greeting first."
    assert '"resources"' in page.capabilities_label.text()
    model = catalogue.model()
    rows = {model.index(r, 2).data(): r for r in range(model.rowCount())}
    assert set(rows) == {GREETING, "remote://data.json", "remote://users/{name}"}
    row = rows[GREETING]
    assert (model.index(row, 1).data(), model.index(row, 3).data()) == ("The greeting", "text/plain")
    assert "priority=0.5" in model.index(row, 5).data()

    # Read a selected resource through the preview's renderers: JSON is shown pretty, with the time.
    page.select_key("remote://data.json")
    assert page.uri_edit.text() == "remote://data.json"
    qtbot.mouseClick(page.read_button, Qt.MouseButton.LeftButton)
    output = page.findChild(type(page.output), "remotePreviewOutput")
    assert output is page.output
    qtbot.waitUntil(lambda: output.currentWidget() is page.content_tabs and page.content_views()
                    and page.content_views()[0].is_ready, timeout=WAIT_MS)  # fmt: skip
    view = page.content_views()[0]
    assert '"answer": 42' in view.shown_text()
    assert "ms" in page.summary_label.text()

    # A template: its variable's completions come from the server as you type, then Read.
    page.select_key("remote://users/{name}")
    edit = page.variable_edit("name")
    assert edit is not None
    edit.setFocus()
    qtbot.keyClicks(edit, "al")
    completer = edit.completer()
    qtbot.waitUntil(lambda: completer.model().rowCount() == 2, timeout=WAIT_MS)
    assert completer.model().stringList() == ["alice", "albert"]
    assert page.uri_edit.text() == "remote://users/al"
    edit.setText("alice")
    edit.textEdited.emit("alice")
    window.read_remote(page.uri)
    qtbot.waitUntil(lambda: bool(page.content_views()) and page.content_views()[0].is_ready
                    and "user alice" in page.content_views()[0].shown_text(), timeout=WAIT_MS)  # fmt: skip

    # The exact error, in one place.
    window.read_remote("remote://users/zed")
    qtbot.waitUntil(lambda: output.currentWidget() is page.error_view, timeout=WAIT_MS)
    assert "no user zed" in page.error_view.toPlainText() or "Error" in page.error_view.toPlainText()

    # Import as static content: a copy of what was read, with the entry's metadata.
    window.read_remote(GREETING)
    qtbot.waitUntil(lambda: bool(page.content_views()) and page.content_views()[0].is_ready, timeout=WAIT_MS)
    name = window.import_remote(GREETING, static=True)
    assert name == "greeting"
    spec = window.document.spec("greeting")
    assert spec is not None and (spec.uri, spec.title, spec.mime_type) == (GREETING, "The greeting", "text/plain")
    assert spec.annotations is not None and spec.annotations.priority == 0.5
    assert "hello from the SDK server" in spec.reader
    assert window.import_remote(GREETING, static=True) is None, "a second import at the same address"

    # The traffic log shows the remote session's messages.
    log = window.traffic_log
    qtbot.waitUntil(lambda: any(e.session_id == "remote" and e.method == "resources/read"
                                for e in log.model.entries()), timeout=WAIT_MS)  # fmt: skip
    assert any("Remote: remote-sdk" in log.session_filter.itemText(i) for i in range(log.session_filter.count()))

    page.disconnect_button.click()
    qtbot.waitUntil(lambda: stdio_children() <= before and not _remote_threads(), timeout=WAIT_MS)
    assert not page.read_button.isEnabled()


def test_a_failure_is_one_line_on_the_page(qtbot, make_window) -> None:
    window = make_window()
    window.connect_remote("http://127.0.0.1:9/mcp")
    page = _page(window)
    qtbot.waitUntil(lambda: "Cannot reach" in page.status_label.text(), timeout=WAIT_MS)
    assert "\n" not in page.status_label.text() and "Traceback" not in page.status_label.text()
    window.connect_remote("python 'unclosed")
    assert "cannot be split" in page.status_label.text()


def test_file_connect_remembers_recent_targets(qtbot, make_window, tmp_path: Path) -> None:
    asked: list[tuple[list[str], str]] = []
    window = make_window()
    window.remote.presenter._ask_target = lambda recent, era: (  # the dialog, answered
        asked.append((recent, era)) or ConnectRequest(script_command("sdk"), era="handshake"))  # fmt: skip
    window.commands.connect_remote.trigger()
    page = _page(window)
    qtbot.waitUntil(lambda: page.catalogue.model().rowCount() == 3, timeout=WAIT_MS)
    assert "(handshake)" in page.server_label.text()
    window.commands.connect_remote.trigger()
    assert asked[-1] == ([script_command("sdk")], "handshake")
    qtbot.waitUntil(lambda: page.catalogue.model().rowCount() == 3, timeout=WAIT_MS)


@pytest.mark.parametrize("era", ["handshake", "2026-07-28"])
def test_a_subscribed_resource_shown_is_read_again_when_updated(qtbot, make_window, tmp_path: Path,
                                                                 era: str) -> None:  # fmt: skip
    data = tmp_path / "data.txt"
    data.write_text("first")
    path = save_project(Project(
        server=ServerSettings(name="Watched", notifications=True, subscriptions=True, workers=1),
        resources=[ResourceSpec(name="data", uri="demo://data", mime_type="text/plain",
                                watch=WatchSpec(files=["data.txt"]),
                                reader="def read(uri, params):\n    return (PROJECT_DIR / 'data.txt').read_text()\n")],
    ), tmp_path / "watched.toml")  # fmt: skip
    with serve_http(path) as served:
        window = make_window()
        window.connect_remote(served.url, era=era)
        page = _page(window)
        qtbot.waitUntil(lambda: page.catalogue.model().rowCount() == 1, timeout=WAIT_MS)
        window.read_remote("demo://data")
        qtbot.waitUntil(lambda: bool(page.content_views()) and page.content_views()[0].is_ready, timeout=WAIT_MS)
        assert page.content_views()[0].shown_text() == "first"
        window.subscribe_remote("demo://data")
        qtbot.waitUntil(lambda: page.subscribe_button.text() == "Unsubscribe", timeout=WAIT_MS)
        # The watch thread may come up after the subscription: write new content until the update is heard.
        for n in range(200):
            data.write_text(f"change {n}")
            try:
                qtbot.waitUntil(lambda: page.events.count() > 0, timeout=500)
                break
            except qtbot.TimeoutError:
                continue
        assert page.events.count() > 0
        assert "updated  demo://data" in page.events.item(0).text()
        qtbot.waitUntil(lambda: bool(page.content_views()) and page.content_views()[0].is_ready
                        and page.content_views()[0].shown_text().startswith("change"), timeout=WAIT_MS)  # fmt: skip
        window.remote.controller.disconnect_remote()
        qtbot.waitUntil(lambda: not _remote_threads(), timeout=WAIT_MS)


def test_the_remote_page_has_its_named_parts(make_window) -> None:
    window = make_window()
    page = _page(window)
    for name in ("remoteCatalogue", "remotePreviewOutput", "remoteEvents", "remoteStatus", "remoteSubscribe",
                 "remoteImport", "remoteImportStatic"):  # fmt: skip
        assert page.findChild(object, name) is not None, name
    assert isinstance(page.status_label, QLabel)
    window.show_page("remote")
    assert window.commands.page_actions["remote"].isChecked()
