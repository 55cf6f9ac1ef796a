"""The window serving its stdio client and HTTP at once: both sessions shown, notify buttons reach both."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.pipes import stdio_pipes
from PySide6.QtCore import Qt

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

WAIT_MS = 15_000
README = "docs://readme"


def _updated(client) -> list[str]:
    return [params["uri"] for method, params in list(client.notifications)
            if method == "notifications/resources/updated"]  # fmt: skip


def _list_changed(client) -> int:
    return client.methods().count("notifications/resources/list_changed")


def test_http_started_from_the_server_page_serves_beside_stdio(make_window, connect, qtbot, project_file: Path):
    window = make_window()
    assert window.open_project(project_file)
    panel, controller = window.server_panel, window.controller
    with stdio_pipes() as pipes:
        with qtbot.waitSignal(controller.server_started, timeout=WAIT_MS) as started:
            window.start_stdio(stdin=pipes.server_in, stdout=pipes.server_out)
        assert started.args == ["stdio"]
        # stdio alone: HTTP's Start is offered, the notify buttons already work.
        assert not panel.is_running and panel.is_serving and panel.start_button.text() == "Start"
        assert panel.transports_label.isVisibleTo(panel) and "Start adds HTTP" in panel.transports_label.text()
        assert panel.notify_list_button.isEnabled()
        over_stdio = connect(pipes.client())

        panel.set_endpoint("127.0.0.1", 0)
        with qtbot.waitSignal(controller.server_started, timeout=WAIT_MS) as started:
            qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
        url = started.args[0]
        assert url.startswith("http://127.0.0.1:") and panel.is_running and panel.url == url
        assert controller.transports == ("stdio", "http")
        over_http = connect(url)

        for client in (over_stdio, over_http):
            client.submit(lambda c: c.subscribe_resource(README)).result(timeout=15)
        qtbot.waitUntil(lambda: sorted(row.transport for row in window.sessions.rows()) == ["http", "stdio"]
                        and all(row.subscriptions == {README} for row in window.sessions.rows()),
                        timeout=WAIT_MS)  # fmt: skip
        assert "over stdio" in window.status_label.text() and url in window.status_label.text()

        panel.notify_uri.setEditText(README)
        qtbot.mouseClick(panel.notify_updated_button, Qt.MouseButton.LeftButton)
        qtbot.mouseClick(panel.notify_list_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: all(_updated(c) == [README] and _list_changed(c) == 1
                                    for c in (over_stdio, over_http)), timeout=WAIT_MS)  # fmt: skip
        # "To selected" reaches the stdio session alone.
        stdio_row = next(i for i, row in enumerate(window.sessions.rows()) if row.transport == "stdio")
        panel.sessions_view.selectRow(stdio_row)
        panel.notify_uri.setEditText(README)
        qtbot.mouseClick(panel.notify_session_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: _updated(over_stdio) == [README, README], timeout=WAIT_MS)
        over_http.submit(lambda c: c.send_ping()).result(timeout=15)
        assert _updated(over_http) == [README]

        # Stop (HTTP) leaves the stdio client served by the same server.
        with qtbot.waitSignal(controller.transport_stopped, timeout=WAIT_MS) as stopped:
            qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
        assert stopped.args == ["http", ""]
        assert controller.is_running and controller.transports == ("stdio",) and not panel.is_running
        qtbot.waitUntil(lambda: [row.transport for row in window.sessions.rows()] == ["stdio"], timeout=WAIT_MS)
        assert window.status_label.text().startswith("Serving over stdio")
        read = over_stdio.submit(lambda c: c.read_resource(README, cache_mode="bypass")).result(timeout=15)
        assert read.contents[0].text == f"# hello from {README}"
        qtbot.mouseClick(panel.notify_updated_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: _updated(over_stdio) == [README] * 3, timeout=WAIT_MS)

        over_stdio.close().result(timeout=15)
        with qtbot.waitSignal(controller.server_stopped, timeout=WAIT_MS):
            window.server_control.stop()
        assert window.status_label.text() == "Stopped" and window.sessions.rows() == []


def test_restart_starts_both_transports_again(make_window, qtbot, project_file: Path):
    window = make_window()
    assert window.open_project(project_file)
    controller = window.controller
    with stdio_pipes() as pipes:
        with qtbot.waitSignal(controller.server_started, timeout=WAIT_MS):
            window.start_stdio(stdin=pipes.server_in, stdout=pipes.server_out)
        with qtbot.waitSignal(controller.server_started, timeout=WAIT_MS) as started:
            window.start_http("127.0.0.1", 0)
        port = started.args[0].rsplit(":", 1)[1]
        with qtbot.waitSignals([controller.server_stopped, controller.server_started, controller.server_started],
                               timeout=WAIT_MS):  # fmt: skip
            assert window.restart_server()
        qtbot.waitUntil(lambda: set(controller.transports) == {"stdio", "http"}, timeout=WAIT_MS)
        assert window.server_panel.url.rsplit(":", 1)[1] == port  # "any free port" kept the one clients had
        with qtbot.waitSignal(controller.server_stopped, timeout=WAIT_MS):
            window.server_control.stop()
