"""Server faults: the port is freed after stop and after a crash; a crash of the server thread is reported."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from stress_support import free_port, scaled

from resources_qt.collection import Resources
from resources_qt.project import Project, ResourceSpec, ServerSettings
from resources_qt.server import ResourceServer, ServerEvent, ServerFailed, ServerStopped

pytestmark = pytest.mark.stress


def _reader(uri: str, params: Any) -> str:
    return "hello"


def _server() -> ResourceServer:
    resources = Resources()
    resources.register_direct_resource("hello", "docs://hello", "", "text/plain", _reader)
    return ResourceServer(resources, name="faults", version="1")


def _nobody_listens(port: int) -> bool:
    """True when a new listener can bind the port (SO_REUSEADDR, as any restarting server would)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
            sock.listen(1)
        except OSError:
            return False
        return True


def _touch(url: str) -> None:
    """One request, leaving a keep-alive connection open while the server goes away."""
    client = httpx.Client(timeout=10.0)
    response = client.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                           headers={"accept": "application/json, text/event-stream",
                                    "mcp-protocol-version": "2026-07-28"})
    assert response.status_code < 500
    threading.Timer(3.0, client.close).start()


async def _crash() -> None:
    # A fatal error escaping into the server loop, as a bug in the transport would.
    raise SystemExit("simulated crash of the server loop")


def test_port_is_freed_after_stop() -> None:
    port = free_port()
    server = _server()
    try:
        for _ in range(scaled(5, 50)):
            url = server.start_http("127.0.0.1", port)
            _touch(url)
            server.stop()
            assert not server.is_running
            assert _nobody_listens(port), f"port {port} still has a listener after stop()"
    finally:
        server.close()


@pytest.mark.allow_error_logs  # the logged error is what the test provokes
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # see the next test
def test_crash_of_the_server_thread_is_reported_and_frees_the_port() -> None:
    port = free_port()
    server = _server()
    events: list[ServerEvent] = []
    reported = threading.Event()

    def observe(event: ServerEvent) -> None:
        events.append(event)
        if isinstance(event, (ServerFailed, ServerStopped)):
            reported.set()

    server.add_observer(observe)
    try:
        for _ in range(scaled(3, 20)):
            reported.clear()
            url = server.start_http("127.0.0.1", port)
            _touch(url)
            assert server.submit(_crash()) is not None
            assert reported.wait(15), "the crash was not reported"
            failures = [e for e in events if isinstance(e, ServerFailed)]
            assert failures and "simulated crash" in failures[-1].message
            assert not any(isinstance(e, ServerStopped) for e in events), "a crash must not look like a stop"
            # The event comes from the dying thread itself; it ends right after.
            deadline = time.monotonic() + 10
            while server.is_running and time.monotonic() < deadline:
                time.sleep(0.01)
            assert not server.is_running
            assert _nobody_listens(port), f"port {port} still has a listener after the crash"
            events.clear()
    finally:
        server.close()


@pytest.mark.allow_error_logs  # the logged error is what the test provokes
# A crashed loop cannot close the connections it held: their sockets are collected unclosed, on purpose.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_crash_reaches_the_facade_and_the_window(qtbot: Any, tmp_path: Path) -> None:
    from resources_qt.qt import ServerController
    from studio.document.recovery import RecoveryStore
    from studio.preferences.settings import StudioSettings
    from studio.shell.main_window import MainWindow, UnsavedChoice

    spec = ResourceSpec(name="hello", uri="docs://hello", mime_type="text/plain",
                        reader="def read(uri, params):\n    return 'hello'\n")
    controller = ServerController(project=Project(server=ServerSettings(name="faults"), resources=[spec]))
    window = MainWindow(settings=StudioSettings(tmp_path / "settings.ini"), recovery=RecoveryStore(tmp_path / "rec"),
                        controller=controller, ask_unsaved=lambda label: UnsavedChoice.DISCARD,
                        ask_restore=lambda candidate: False, report_error=lambda title, message: None)
    qtbot.addWidget(window)
    try:
        port = free_port()
        with qtbot.waitSignal(controller.server_started, timeout=20_000):
            window.start_http("127.0.0.1", port)
        with qtbot.waitSignal(controller.server_failed, timeout=15_000) as failed:
            assert controller.server.submit(_crash()) is not None
        assert "simulated crash" in failed.args[0]
        qtbot.waitUntil(lambda: "simulated crash" in window.status_label.text(), timeout=10_000)
        assert window.status_label.text().startswith("Failed")
        assert _nobody_listens(port)
        # And the user can start it again.
        with qtbot.waitSignal(controller.server_started, timeout=20_000):
            window.start_http("127.0.0.1", port)
        assert controller.is_running
    finally:
        window.shutdown()
