"""ServerController with qtbot: real engine, real snippet workers, real SDK clients on a side thread."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from PySide6.QtCore import QThread
from PySide6.QtWidgets import QApplication

from resources_qt.notifications import Updated
from resources_qt.project import Project, ResourceSpec, ServerSettings
from resources_qt.qt import PreviewOutcome, ServerController, SessionInfo, TrafficEntry
from resources_qt.qt.protocol import StudioController
from resources_qt.server import ResourceServer
from resources_qt.server.sessions import LegacySession

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

WAIT = 20_000


def _project() -> Project:
    return Project(
        server=ServerSettings(name="facade", version="2", notifications=True, subscriptions=True, workers=1),
        resources=[
            ResourceSpec(name="hello", uri="demo://hello", mime_type="text/plain",
                         reader="def read(uri, params):\n    print('reading', uri)\n    return 'hello world'\n"),
            ResourceSpec(name="item", uri_template="demo://items/{id}", mime_type="text/plain",
                         completions={"id": ["alpha", "beta", "alpine"]},
                         reader="def read(uri, params):\n    return 'item ' + params['id']\n"),
        ],
    )


@pytest.fixture
def controller(qtbot: Any) -> Iterator[ServerController]:
    ctl = ServerController(project=_project())
    yield ctl
    ctl.shutdown()


def _on_gui_thread() -> bool:
    app = QApplication.instance()
    return app is not None and QThread.currentThread() is app.thread()


def _start(qtbot: Any, controller: ServerController) -> str:
    with qtbot.waitSignal(controller.server_started, timeout=WAIT) as blocker:
        controller.start_http("127.0.0.1", 0, "")
    url = blocker.args[0]
    assert url.startswith("http://127.0.0.1:") and controller.url == url
    return url


class ClientThread:
    """An SDK client living on its own thread and loop while the test drives the GUI."""

    def __init__(self, server: ResourceServer, script: Callable[[Client], Any], mode: str = "legacy") -> None:
        assert server.url is not None
        self.server, self.url, self.script, self.mode = server, server.url, script, mode
        self.release = threading.Event()
        self.ready = threading.Event()
        self.notifications: list[Any] = []
        self.result: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # surfaced by the test
            self.error = exc
            self.ready.set()

    async def _main(self) -> None:
        primed = asyncio.Event()

        async def handler(message: Any) -> None:
            if isinstance(message, types.ResourceUpdatedNotification) and message.params.uri.startswith(PRIME):
                primed.set()
            else:
                self.notifications.append(message)

        async with Client(self.url, mode=self.mode, message_handler=handler, read_timeout_seconds=15) as client:
            self.result = await self.script(client)
            await self._settle(primed)
            self.ready.set()
            while not self.release.is_set():
                await asyncio.sleep(0.02)

    async def _settle(self, primed: asyncio.Event) -> None:
        # The legacy GET stream opens in the background and notifications sent
        # before it exists are dropped: prime until one arrives.
        deadline = asyncio.get_running_loop().time() + 15
        while not primed.is_set():
            assert asyncio.get_running_loop().time() < deadline, "the notification stream never opened"
            future = self.server.submit(_prime_all(self.server))
            assert future is not None
            await asyncio.wrap_future(future)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(primed.wait(), 0.05)

    def close(self) -> None:
        self.release.set()
        self.thread.join(15)
        assert not self.thread.is_alive()


PRIME = "prime://"


async def _prime_all(server: ResourceServer) -> None:
    for session in server.registry.all():
        if isinstance(session, LegacySession):
            await session.connection.send_resource_updated(f"{PRIME}{session.id}")


def test_signals_arrive_on_the_gui_thread(qtbot: Any, controller: ServerController) -> None:
    threads: list[bool] = []
    opened: list[SessionInfo] = []
    traffic: list[TrafficEntry] = []
    controller.session_opened.connect(lambda info: (threads.append(_on_gui_thread()), opened.append(info)))
    controller.traffic_logged.connect(lambda batch: (threads.append(_on_gui_thread()), traffic.extend(batch)))
    _start(qtbot, controller)

    async def script(client: Client) -> Any:
        await client.subscribe_resource("demo://hello")
        return await client.read_resource("demo://items/7")

    with qtbot.waitSignal(controller.subscription_added, timeout=WAIT) as added:
        client = ClientThread(controller.server, script)
        assert client.ready.wait(20) and client.error is None
    assert added.args[1] == "demo://hello"
    assert client.result.contents[0].text == "item 7"
    qtbot.waitUntil(lambda: any(e.method == "resources/read" and e.direction == "out" for e in traffic), timeout=WAIT)
    assert [s.id for s in controller.sessions()] == [opened[0].id]
    assert opened[0].protocol_version == "2025-11-25" and opened[0].transport == "http"

    with qtbot.waitSignal(controller.notification_sent, timeout=WAIT) as sent:
        controller.notify(Updated("demo://hello"))
    assert sent.args == ["notifications/resources/updated", "demo://hello", 1]
    qtbot.waitUntil(lambda: any(isinstance(n, types.ResourceUpdatedNotification) for n in client.notifications),
                    timeout=WAIT)

    with qtbot.waitSignal(controller.session_closed, timeout=WAIT) as closed:
        client.close()
    assert closed.args == [opened[0].id]
    with qtbot.waitSignal(controller.server_stopped, timeout=WAIT):
        controller.stop()
    assert threads and all(threads)
    methods = {e.method for e in traffic}
    assert {"initialize", "resources/subscribe", "resources/read", "notifications/resources/updated"} <= methods


def test_announce_edits_sends_updates_for_changed_resources(qtbot: Any, controller: ServerController) -> None:
    _start(qtbot, controller)

    async def script(client: Client) -> None:
        await client.subscribe_resource("demo://hello")
        await client.subscribe_resource("demo://items/3")

    client = ClientThread(controller.server, script)
    assert client.ready.wait(20) and client.error is None
    sent: list[tuple[str, str, int]] = []
    controller.notification_sent.connect(lambda *args: sent.append(tuple(args)))
    controller.announce_edits = True
    item = controller.project.find("item")
    assert item is not None
    changed = ResourceSpec(**{**item.__dict__, "reader": "def read(uri, params):\n    return 'new ' + params['id']\n"})
    controller.apply_resource("item", changed)
    qtbot.waitUntil(lambda: ("notifications/resources/updated", "demo://items/3", 1) in sent, timeout=WAIT)
    extra = ResourceSpec(name="extra", uri="demo://extra", reader="def read(u, p):\n    return 'x'\n")
    controller.apply_resource(None, extra)
    qtbot.waitUntil(lambda: any(s[0] == "notifications/resources/list_changed" for s in sent), timeout=WAIT)
    client.close()
    assert ("notifications/resources/updated", "demo://hello", 1) not in sent  # unchanged


def test_preview_and_completions_with_the_server_stopped(qtbot: Any, controller: ServerController) -> None:
    with qtbot.waitSignal(controller.preview_finished, timeout=WAIT) as done:
        controller.preview("demo://items/42")
    outcome: PreviewOutcome = done.args[0]
    assert outcome.resource_name == "item" and outcome.is_template and outcome.params == {"id": "42"}
    assert outcome.contents is not None and outcome.contents[0].text == "item 42"
    with qtbot.waitSignal(controller.preview_finished, timeout=WAIT) as missing:
        controller.preview("nowhere://x")
    assert missing.args[0].error_code == -32002 and missing.args[0].error_data == {"uri": "nowhere://x"}
    with qtbot.waitSignal(controller.completions_ready, timeout=WAIT) as completed:
        controller.complete("req-1", "item", "id", "al", {})
    assert completed.args == ["req-1", ["alpha", "alpine"]]


def test_snippet_output_reaches_the_gui(qtbot: Any, controller: ServerController) -> None:
    with qtbot.waitSignal(controller.snippet_output, timeout=WAIT,
                          check_params_cb=lambda key, text: "reading demo://hello" in text) as out:
        controller.preview("demo://hello")
    assert out.args[0] == "hello"


def test_start_failures_are_reported_not_raised(qtbot: Any, controller: ServerController) -> None:
    with qtbot.waitSignal(controller.server_failed, timeout=WAIT) as failed:
        controller.start_http("0.0.0.0", 0, "")
    assert "without a token" in failed.args[0]
    assert not controller.is_running


def test_shutdown_waits_only_briefly_and_finishes_in_the_background(qtbot: Any) -> None:
    ctl = ServerController(project=_project())
    _start(qtbot, ctl)
    gate = threading.Event()
    ctl._control.submit(gate.wait)  # the control thread is busy (a slow start or stop)
    try:
        ctl.shutdown(timeout=0.05)
        assert ctl.server.is_running and not ctl._pool.closed  # returned without waiting for it
    finally:
        gate.set()
    qtbot.waitUntil(lambda: not ctl.server.is_running and ctl._pool.closed, timeout=WAIT)
    ctl.shutdown()  # idempotent


def test_a_spec_edited_after_it_was_applied_is_still_a_change(qtbot: Any, controller: ServerController) -> None:
    spec = ResourceSpec(name="note", uri="demo://note", mime_type="text/plain",
                        reader="def read(uri, params):\n    return 'first'\n")
    controller.apply_resource(None, spec)
    spec.reader = "def read(uri, params):\n    return 'second'\n"  # the caller keeps its object
    controller.apply_resource("note", spec)
    with qtbot.waitSignal(controller.preview_finished, timeout=WAIT) as done:
        controller.preview("demo://note")
    outcome: PreviewOutcome = done.args[0]
    assert outcome.contents is not None and outcome.contents[0].text == "second"


def test_the_controller_implements_the_studio_protocol(controller: ServerController) -> None:
    assert isinstance(controller, StudioController)
    controller.announce_edits = True
    assert controller.announce_edits is True


def test_a_read_that_prints_arrives_as_one_snippet_output_on_the_gui_thread(
    qtbot: Any, controller: ServerController
) -> None:
    seen: list[tuple[Any, bool]] = []
    controller.read_output.connect(lambda output: seen.append((output, _on_gui_thread())))
    with qtbot.waitSignal(controller.preview_finished, timeout=WAIT):
        controller.preview("demo://hello")
    qtbot.waitUntil(lambda: bool(seen), timeout=WAIT)
    output, on_gui = seen[0]
    assert on_gui and output.key == "hello" and output.uri == "demo://hello"
    assert output.chunks == (("stdout", "reading demo://hello\n"),) and output.started > 0
