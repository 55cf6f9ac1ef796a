"""ServerController with both transports: HTTP failing or stopping beside stdio leaves stdio serving."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.pipes import stdio_pipes

from resources_qt.project import Project, ResourceSpec, ServerSettings
from resources_qt.qt import ServerController

WAIT = 20_000


@pytest.fixture
def controller(qtbot: Any) -> Iterator[ServerController]:
    project = Project(
        server=ServerSettings(name="transports", notifications=True, subscriptions=True, workers=1),
        resources=[ResourceSpec(name="hello", uri="demo://hello", mime_type="text/plain",
                                reader="def read(uri, params):\n    return 'hello'\n")],
    )  # fmt: skip
    ctl = ServerController(project=project)
    yield ctl
    ctl.shutdown(timeout=10)


def test_http_failing_to_start_beside_stdio_is_not_a_server_failure(qtbot: Any, controller: ServerController) -> None:
    failures: list[str] = []
    controller.server_failed.connect(failures.append)
    with stdio_pipes() as pipes, socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen(1)
        busy = blocker.getsockname()[1]
        with qtbot.waitSignal(controller.server_started, timeout=WAIT):
            controller.start_stdio(stdin=pipes.server_in, stdout=pipes.server_out)
        with qtbot.waitSignal(controller.transport_stopped, timeout=WAIT) as stopped:
            controller.start_http("127.0.0.1", busy, "")
        assert stopped.args[0] == "http" and "already in use" in stopped.args[1]
        assert failures == [] and controller.is_running and controller.transports == ("stdio",)
        # And HTTP starts once the port is free, beside the same stdio transport.
        blocker.close()
        with qtbot.waitSignal(controller.server_started, timeout=WAIT) as started:
            controller.start_http("127.0.0.1", busy, "")
        assert started.args[0] == controller.url and set(controller.transports) == {"stdio", "http"}
        with qtbot.waitSignal(controller.transport_stopped, timeout=WAIT) as stopped:
            controller.stop_http()
        assert stopped.args == ["http", ""] and controller.url == "" and controller.transports == ("stdio",)
        with qtbot.waitSignal(controller.server_stopped, timeout=WAIT):
            controller.stop()
    assert not controller.is_running


def test_stop_http_with_nothing_else_served_stops_the_server(qtbot: Any, controller: ServerController) -> None:
    with qtbot.waitSignal(controller.server_started, timeout=WAIT):
        controller.start_http("127.0.0.1", 0, "")
    with qtbot.waitSignal(controller.server_stopped, timeout=WAIT):
        controller.stop_http()
    assert not controller.is_running and controller.transports == ()


def test_warm_up_starts_the_snippet_workers_before_any_read(qtbot: Any) -> None:
    from resources_qt.snippets import SnippetPool

    pool = SnippetPool(workers=1)
    controller = ServerController(project=Project(server=ServerSettings(name="warm")), pool=pool)
    try:
        controller.warm_up()
        assert pool.wait_ready(15), "warm_up did not start the workers"
        assert not controller.is_running  # warming up serves nothing
    finally:
        controller.shutdown(timeout=10)
