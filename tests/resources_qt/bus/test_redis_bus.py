"""RedisBus against a real redis-server: fan-out, own echoes dropped, foreign messages ignored, outages survived."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
import redis.asyncio
from helpers.redis_server import RedisServer, redis_server

from resources_qt.bus.events import Envelope, ListChanged, Updated
from resources_qt.bus.redis_bus import RedisBus

pytestmark = pytest.mark.anyio

TIMEOUT = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    with redis_server(tmp_path) as started:
        yield started


async def until(predicate: Callable[[], bool], timeout: float = TIMEOUT) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.01)


class Inbox:
    """Collects what a bus hands its listeners."""

    def __init__(self, bus: RedisBus) -> None:
        self.items: list[Envelope] = []
        bus.add_listener(self.receive)

    async def receive(self, envelope: Envelope) -> None:
        self.items.append(envelope)


def _bus(url: str, origin: str, **kwargs: object) -> RedisBus:
    return RedisBus(url, channel="resource-studio:test", origin=origin, backoff_initial=0.05, backoff_max=0.2,
                    **kwargs)  # type: ignore[arg-type]


@pytest.fixture
async def pair(server: RedisServer) -> AsyncIterator[tuple[RedisBus, RedisBus]]:
    a, b = _bus(server.url, "replica-a"), _bus(server.url, "replica-b")
    await a.start()
    await b.start()
    assert await a.wait_connected(TIMEOUT) and await b.wait_connected(TIMEOUT)
    yield a, b
    await a.close()
    await b.close()


async def test_events_reach_other_replicas_once_and_never_echo(pair: tuple[RedisBus, RedisBus]) -> None:
    a, b = pair
    inbox_a, inbox_b = Inbox(a), Inbox(b)
    assert a.post(Updated("demo://one"))
    assert a.post(ListChanged())
    assert b.post(Updated("demo://two"), session_id="s-1")
    await until(lambda: len(inbox_b.items) == 2 and len(inbox_a.items) == 1)
    assert inbox_b.items == [Envelope(Updated("demo://one"), "replica-a"), Envelope(ListChanged(), "replica-a")]
    assert inbox_a.items == [Envelope(Updated("demo://two"), "replica-b", session_id="s-1")]
    # Each bus saw its own messages come back from Redis and dropped them.
    await until(lambda: a.stats.own == 2 and b.stats.own == 1)
    assert await a.publish(ListChanged()) == 2  # both replicas are subscribed
    await until(lambda: len(inbox_b.items) == 3)
    assert len(inbox_a.items) == 1


async def test_foreign_and_malformed_messages_are_logged_and_ignored(
    pair: tuple[RedisBus, RedisBus], server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    a, b = pair
    inbox = Inbox(b)
    raw = redis.asyncio.from_url(server.url)
    try:
        for junk in (b"not json", b'{"jsonrpc": "2.0", "method": "x"}', b"\xff" * 10):
            await raw.publish(b.channel, junk)
    finally:
        await raw.aclose()
    a.post(Updated("demo://after-junk"))
    await until(lambda: len(inbox.items) == 1)
    assert inbox.items[0].event == Updated("demo://after-junk")
    assert a.stats.rejected == b.stats.rejected == 3
    warnings = [r.getMessage() for r in caplog.records if "not a notification event" in r.getMessage()]
    assert len(warnings) == 6  # each bus logs each of the three
    assert any("(format: is None" in w for w in warnings) and any("(message: is not JSON)" in w for w in warnings)


@pytest.mark.allow_error_logs  # the failing listener is logged with its traceback, which is the point
async def test_a_failing_listener_does_not_end_the_subscription(pair: tuple[RedisBus, RedisBus]) -> None:
    a, b = pair

    async def broken(envelope: Envelope) -> None:
        raise RuntimeError("listener bug")

    b.add_listener(broken)
    inbox = Inbox(b)
    a.post(Updated("demo://1"))
    a.post(Updated("demo://2"))
    await until(lambda: len(inbox.items) == 2)


async def test_redis_missing_at_start_then_arriving(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    server = RedisServer(tmp_path)  # not started yet
    caplog.set_level(logging.DEBUG, logger="resources_qt.bus")
    a, b = _bus(server.url, "replica-a"), _bus(server.url, "replica-b")
    await a.start()  # returns at once although nothing listens on the port
    await b.start()
    inbox = Inbox(b)
    try:
        await until(lambda: a.stats.attempts >= 4)
        assert not a.connected
        unavailable = [r for r in caplog.records if r.name == "resources_qt.bus.redis_bus"
                       and r.levelno == logging.WARNING and "unavailable" in r.getMessage()]
        assert len(unavailable) == 2  # one per bus, however many retries
        assert "retrying with back-off" in unavailable[0].getMessage()
        assert not a.post(Updated("demo://lost"))
        assert await a.publish(ListChanged()) is None
        not_published = [r for r in caplog.records if "not published" in r.getMessage()]
        assert len(not_published) == 2 and not_published[0].levelno == logging.WARNING
        assert a.stats.unpublished == 2
        server.start()
        assert await a.wait_connected(TIMEOUT) and await b.wait_connected(TIMEOUT)
        assert any("is back" in r.getMessage() and "2 notifications were not published" in r.getMessage()
                   for r in caplog.records)
        a.post(Updated("demo://delivered"))
        await until(lambda: len(inbox.items) == 1)
        assert inbox.items[0].event == Updated("demo://delivered")  # nothing replayed from the outage
    finally:
        await a.close()
        await b.close()
        server.stop()


async def test_delivery_resumes_after_redis_is_killed_and_restarted(
    pair: tuple[RedisBus, RedisBus], server: RedisServer
) -> None:
    a, b = pair
    inbox = Inbox(b)
    states: list[bool] = []
    b.add_state_listener(states.append)
    a.post(Updated("demo://before"))
    await until(lambda: len(inbox.items) == 1)
    server.stop()
    await until(lambda: not a.connected and not b.connected)
    assert not a.post(Updated("demo://during"))
    server.start()
    assert await a.wait_connected(TIMEOUT) and await b.wait_connected(TIMEOUT)
    a.post(Updated("demo://after"))
    await until(lambda: len(inbox.items) == 2)
    assert [e.event for e in inbox.items] == [Updated("demo://before"), Updated("demo://after")]
    assert states == [False, True]


async def test_a_redis_that_stops_answering_is_noticed(server: RedisServer, caplog: pytest.LogCaptureFixture) -> None:
    a = _bus(server.url, "replica-a", timeout=0.5, health_check_interval=0.3)
    b = _bus(server.url, "replica-b", timeout=0.5, health_check_interval=0.3)
    for bus in (a, b):
        await bus.start()
    inbox = Inbox(b)
    try:
        assert await a.wait_connected(TIMEOUT) and await b.wait_connected(TIMEOUT)
        server.pause()  # the connections stay open; nothing answers
        try:
            await until(lambda: not a.connected and not b.connected)
            assert any("did not answer a ping" in r.getMessage() for r in caplog.records)
            assert await a.publish(ListChanged()) is None
        finally:
            server.resume()
        assert await a.wait_connected(TIMEOUT) and await b.wait_connected(TIMEOUT)
        a.post(Updated("demo://after-the-pause"))
        await until(lambda: len(inbox.items) == 1)
    finally:
        for bus in (a, b):
            await bus.close()


async def test_password_urls_authenticate(tmp_path: Path) -> None:
    with redis_server(tmp_path, password="s3cret") as server:
        a, b = _bus(server.url, "replica-a"), _bus(server.url, "replica-b")
        wrong = _bus(server.url.replace("s3cret", "wrong"), "replica-c")
        for bus in (a, b, wrong):
            await bus.start()
        inbox = Inbox(b)
        try:
            assert await a.wait_connected(TIMEOUT) and await b.wait_connected(TIMEOUT)
            a.post(ListChanged())
            await until(lambda: len(inbox.items) == 1)
            await until(lambda: wrong.stats.attempts >= 2)
            assert not wrong.connected
        finally:
            for bus in (a, b, wrong):
                await bus.close()


async def test_close_is_prompt_while_redis_is_away(tmp_path: Path) -> None:
    bus = _bus(RedisServer(tmp_path).url, "replica-a")
    await bus.start()
    await until(lambda: bus.stats.attempts >= 1)
    await asyncio.wait_for(bus.close(), 5)
    assert not bus.post(ListChanged())
