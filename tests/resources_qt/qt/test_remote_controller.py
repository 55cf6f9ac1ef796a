"""RemoteController: events reach the GUI thread as signals; an answer already there never deadlocks its pump."""

from __future__ import annotations

from helpers.remote_servers import TIMEOUT, script_command

from resources_qt.client import RemoteRead, parse_target
from resources_qt.qt.remote import REMOTE_SIGNALS, RemoteController

WAIT_MS = 30_000


def test_the_signals_are_declared_as_listed(qtbot) -> None:
    controller = RemoteController()
    for name in REMOTE_SIGNALS:
        assert hasattr(controller, name), name
    controller.shutdown()


def test_an_answer_that_is_ready_at_once_is_delivered_on_the_gui_thread(qtbot) -> None:
    controller = RemoteController()
    reads: list[RemoteRead] = []
    controller.read_finished.connect(reads.append)
    controller.connect_to(parse_target(script_command("sdk")))
    qtbot.waitUntil(lambda: controller.is_connected, timeout=WAIT_MS)
    # The connection ends under the facade's feet (its RemoteClosed still queued): a read now fails at once,
    # inside add_done_callback on the GUI thread, which once flushed the pump under its own lock and hung.
    client = controller._client
    assert client is not None
    client.close().result(TIMEOUT)
    controller.read("remote://greeting")
    qtbot.waitUntil(lambda: bool(reads), timeout=WAIT_MS)
    assert reads[0].contents is None and "Not connected" in reads[0].error_message
    controller.shutdown()
