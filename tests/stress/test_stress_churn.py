"""Churn: sessions that subscribe and then vanish without DELETE leave no session or subscription behind."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from helpers.waiting import holds_within
from stress_client import Session
from stress_support import scaled

from resources_qt.collection import Resources
from resources_qt.notifications import Updated
from resources_qt.server import ResourceServer

pytestmark = pytest.mark.stress

URIS = [f"docs://doc{i}" for i in range(5)]
IDLE_S = 2.0


def _reader(uri: str, params: Any) -> str:
    return f"content of {uri}"


@pytest.fixture
def server() -> Iterator[ResourceServer]:
    resources = Resources()
    for i, uri in enumerate(URIS):
        resources.register_direct_resource(f"doc{i}", uri, "", "text/plain", _reader)
    # A vanished legacy client sends no DELETE; the engine ends its session once it has been idle
    # this long (default 600 s), which the test shortens to stay bounded.
    engine = ResourceServer(resources, name="churn", version="1", session_idle_timeout=IDLE_S)
    engine.enable_resource_subscriptions = True
    engine.start_http("127.0.0.1", 0)
    try:
        yield engine
    finally:
        engine.close()


async def _wave(url: str, count: int, *, with_stream: bool) -> int:
    """Open `count` sessions that subscribe, then drop every connection at once; returns how many opened."""
    opened = 0
    http = httpx.AsyncClient(limits=httpx.Limits(max_connections=2 * count + 8), timeout=httpx.Timeout(20.0, read=None))
    gate = asyncio.Semaphore(16)
    in_flight: set[asyncio.Task[object]] = set()  # kept so the tasks are not collected mid-flight

    async def one(i: int) -> None:
        nonlocal opened
        async with gate:
            session = Session(http, url)
            await session.initialize(f"churn-{i}")
            if with_stream:
                await session.stream()
            await session.call("resources/subscribe", {"uri": URIS[i % len(URIS)]})
            opened += 1
            if i % 4 == 0:
                # Some vanish with a read still in flight.
                in_flight.add(asyncio.create_task(session.call("resources/read", {"uri": URIS[0]})))

    await asyncio.gather(*(one(i) for i in range(count)))
    # Abrupt: the sockets close with no DELETE and no goodbye; pending tasks die with the loop.
    for task in asyncio.all_tasks() - {asyncio.current_task()}:
        task.cancel()
    await http.aclose()
    return opened


def _drained(server: ResourceServer, timeout: float) -> tuple[int, int]:
    holds_within(lambda: not server.sessions() and not server.subscribed_uris(), timeout, interval=0.1)
    return len(server.sessions()), len(server.subscribed_uris())


@pytest.mark.parametrize("with_stream", [True, False], ids=["get-stream", "no-stream"])
def test_abrupt_disconnects_leave_nothing(server: ResourceServer, with_stream: bool) -> None:
    count = scaled(100, 1000)
    assert server.url is not None
    opened = asyncio.run(_wave(server.url, count, with_stream=with_stream))
    assert opened == count
    assert _drained(server, IDLE_S + 30.0) == (0, 0), "sessions or subscriptions outlived their connections"


def test_server_still_serves_after_churn(server: ResourceServer) -> None:
    assert server.url is not None
    asyncio.run(_wave(server.url, scaled(50, 500), with_stream=True))

    async def read() -> str:
        async with httpx.AsyncClient(timeout=20.0) as http:
            session = Session(http, server.url or "")
            await session.initialize()
            result = await session.call("resources/read", {"uri": URIS[1]})
            await session.close()
            return str(result["contents"][0]["text"])

    assert asyncio.run(read()) == "content of docs://doc1"


def test_quiet_subscriber_outlives_the_idle_timeout(server: ResourceServer) -> None:
    """A live GET stream is not idleness: a subscriber that only listens keeps its session and updates."""
    assert server.url is not None

    async def scenario() -> tuple[int, int]:
        async with httpx.AsyncClient(timeout=httpx.Timeout(20.0, read=None)) as http:
            session = Session(http, server.url or "")
            await session.initialize("quiet")
            await session.stream()
            await session.call("resources/subscribe", {"uri": URIS[2]})
            await asyncio.sleep(IDLE_S * 2.5)
            alive = len(server.sessions())
            await server.notify(Updated(URIS[2]))
            for _ in range(100):
                if session.updates[URIS[2]]:
                    break
                await asyncio.sleep(0.05)
            received = session.updates[URIS[2]]
            await session.close()
            return alive, received

    assert asyncio.run(scenario()) == (1, 1)
