"""The server panel's bus: the studio joins a fleet's Redis bus, shows the connection, and its buttons reach it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from helpers.redis_server import redis_server, require_redis_server
from helpers.waiting import eventually_async
from PySide6.QtWidgets import QLabel, QLineEdit

from resources_qt.bus.events import Envelope, Updated
from resources_qt.bus.redis_bus import RedisBus
from resources_qt.bus.urls import default_channel

WAIT_MS = 15_000


def test_a_bad_bus_url_is_refused_with_its_problem_and_nothing_starts(make_window, project_file: Path, qtbot):
    window = make_window()
    window.open_project(project_file)
    window.server_panel.findChild(QLineEdit, "busUrlEdit").setText("http://not-redis")
    window.start_http(port=0)
    assert not window.controller.is_running
    assert window.errors and window.errors[-1][0] == "Bus"


def test_the_notify_button_reaches_a_fleet_on_the_bus(make_window, project_file: Path, qtbot, tmp_path: Path):
    require_redis_server()  # skips, naming the Debian package, where redis-server is missing
    with redis_server(tmp_path) as redis:
        window = make_window()
        window.open_project(project_file)
        window.server_panel.findChild(QLineEdit, "busUrlEdit").setText(redis.url)
        status = window.server_panel.findChild(QLabel, "busStatus")
        with qtbot.waitSignal(window.controller.server_started, timeout=WAIT_MS):
            window.start_http(port=0)
        qtbot.waitUntil(lambda: status.text().startswith("Bus connected"), timeout=WAIT_MS)

        heard: list[Envelope] = []
        fleet = RedisBus(redis.url, channel=default_channel(window.document.project.server.name))

        async def hear(envelope: Envelope) -> None:
            heard.append(envelope)

        async def listen() -> None:
            fleet.add_listener(hear)
            await fleet.start()
            try:
                assert await fleet.wait_connected(10)
                window.controller.notify(Updated("tickets://7"))  # what the Updated button sends
                await eventually_async(lambda: bool(heard), 10, what="the update on the bus")
            finally:
                await fleet.close()

        asyncio.run(listen())
    assert [(type(e.event), getattr(e.event, "uri", "")) for e in heard] == [(Updated, "tickets://7")]
