"""Two in-process ResourceServers sharing a real Redis: the engine's own sends (the studio's buttons) cross over."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from engine_support import build_catalogue
from helpers.bus_fleet import Subscriber, numsub, until
from helpers.redis_server import RedisServer, redis_server

from resources_qt.bus.redis_bus import RedisBus
from resources_qt.notifications import ListChanged, Updated
from resources_qt.server import ResourceServer
from resources_qt.server.events import BusStateChanged

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

CHANNEL = "resource-studio:engine-bus"
SETTINGS = "config://app/settings"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    with redis_server(tmp_path) as server:
        yield server


@pytest.fixture
def servers(redis: RedisServer) -> Iterator[list[ResourceServer]]:
    started = []
    for _ in range(2):
        server = ResourceServer(build_catalogue(), name="engine-bus", version="1",
                                bus=RedisBus(redis.url, channel=CHANNEL, backoff_initial=0.05))
        server.enable_resource_notifications = True
        server.enable_resource_subscriptions = True
        server.start_http(port=0)
        started.append(server)
    yield started
    for server in started:
        server.close()


@pytest.fixture
async def subscribers(redis: RedisServer, servers: list[ResourceServer]) -> AsyncIterator[list[Subscriber]]:
    await until(lambda: all(s.bus is not None and s.bus.connected for s in servers), what="buses connected")
    async with AsyncExitStack() as stack:
        made = []
        for index, server in enumerate(servers):
            assert server.url is not None
            for legacy in (True, False):
                subscriber = Subscriber(f"s{index}-{'legacy' if legacy else 'listen'}", server.url, legacy=legacy,
                                        uris=[SETTINGS, "fence://0"])
                made.append(await stack.enter_async_context(subscriber.running(redis.url, CHANNEL)))
        yield made


async def _send(server: ResourceServer, coro: Coroutine[Any, Any, None]) -> None:
    future = server.submit(coro)
    assert future is not None
    await asyncio.wrap_future(future)


async def test_engine_sends_reach_both_replicas_once(
    servers: list[ResourceServer], subscribers: list[Subscriber], redis: RedisServer
) -> None:
    a, b = servers
    assert await numsub(redis.url, CHANNEL) == 2
    await _send(a, a.notify(Updated(SETTINGS)))
    await _send(b, b.notify(ListChanged()))
    legacy_on_b = subscribers[2]
    assert legacy_on_b.session_id is not None and b.registry.get(legacy_on_b.session_id) is not None
    # From a, to a session that lives on b: a has no such session, b delivers.
    await _send(a, a.notify(Updated(SETTINGS, session_id=legacy_on_b.session_id)))
    expected_all = [("updated", SETTINGS), ("list_changed", "")]
    await until(lambda: all(len(s.received) >= 2 for s in subscribers) and len(legacy_on_b.received) == 3,
                what="every notification everywhere")
    await _send(b, b.notify(Updated("fence://0")))
    await until(lambda: all(("updated", "fence://0") in s.received for s in subscribers), what="the fence")
    for subscriber in subscribers:
        extra = [("updated", SETTINGS)] if subscriber is legacy_on_b else []
        assert sorted(subscriber.received[:-1]) == sorted(expected_all + extra), subscriber.name
        assert subscriber.received[-1] == ("updated", "fence://0")


async def test_observers_hear_the_bus_connect_and_go(tmp_path: Path) -> None:
    redis = RedisServer(tmp_path)
    server = ResourceServer(build_catalogue(), name="engine-bus", version="1",
                            bus=RedisBus(redis.url.replace("redis://", "redis://:pw@"), channel=CHANNEL,
                                         backoff_initial=0.05, backoff_max=0.1))
    seen: list[BusStateChanged] = []
    server.add_observer(lambda event: seen.append(event) if isinstance(event, BusStateChanged) else None)
    server.start_http(port=0)  # Redis is not there yet: the server starts all the same
    try:
        redis.password = "pw"
        redis.start()
        await until(lambda: [e.connected for e in seen] == [True], what="connected")
        redis.stop()
        await until(lambda: [e.connected for e in seen] == [True, False], what="lost")
    finally:
        server.close()
        redis.stop()
    assert seen[0].channel == CHANNEL and seen[0].url == f"redis://:***@127.0.0.1:{redis.port}/0"


async def test_the_bus_changes_only_while_stopped(redis: RedisServer) -> None:
    server = ResourceServer(build_catalogue(), name="engine-bus", version="1")
    assert server.bus is None
    server.start_http(port=0)
    try:
        with pytest.raises(RuntimeError, match="stopped"):
            server.set_bus(RedisBus(redis.url, channel=CHANNEL))
    finally:
        server.stop()
    bus = RedisBus(redis.url, channel=CHANNEL)
    server.set_bus(bus)
    server.start_http(port=0)
    try:
        await until(lambda: bus.connected, what="the new bus connected")
        assert await numsub(redis.url, CHANNEL) == 1
    finally:
        server.close()
    assert not bus.connected and await numsub(redis.url, CHANNEL) == 0


async def test_switches_of_the_receiving_replica_apply(
    servers: list[ResourceServer], subscribers: list[Subscriber]
) -> None:
    a, b = servers
    b.enable_resource_notifications = False  # b's listeners were honoured before; b now drops list_changed
    await _send(a, a.notify(ListChanged()))
    await _send(a, a.notify(Updated("fence://0")))
    await until(lambda: all(("updated", "fence://0") in s.received for s in subscribers), what="the fence")
    for subscriber in subscribers:
        on_a = subscriber.name.startswith("s0-")
        assert (("list_changed", "") in subscriber.received) == on_a, subscriber.name
