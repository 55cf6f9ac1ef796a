"""NotificationRelay over a real Redis: local delivery at once, remote delivery once, per-session routing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from helpers.redis_server import RedisServer, redis_server

from resources_qt.bus.events import BusEvent, ListChanged, Updated
from resources_qt.bus.redis_bus import RedisBus
from resources_qt.bus.relay import NotificationRelay
from resources_qt.notifications import Notification

pytestmark = pytest.mark.anyio

TIMEOUT = 10.0
LC = ("list_changed", "", None)


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


class Replica:
    """A server's own subscribers, reduced to what they received (the LocalDelivery side of a relay)."""

    def __init__(self, sessions: set[str], *, notifications: bool = True, subscriptions: bool = True) -> None:
        self.sessions = sessions
        self.notifications = notifications
        self.subscriptions = subscriptions
        self.received: list[tuple[str, str, str | None]] = []
        self.heard: list[BusEvent] = []
        """Events from other replicas not delivered here (what drops the server's read cache)."""

    async def deliver(self, notification: Notification) -> int:
        if isinstance(notification, ListChanged):
            self.received.append(("list_changed", "", None))
            return len(self.sessions)
        self.received.append(("updated", notification.uri, notification.session_id))
        return 1

    def changed(self, event: BusEvent) -> None:
        self.heard.append(event)

    def holds_session(self, session_id: str) -> bool:
        return session_id in self.sessions

    def accepts(self, event: BusEvent) -> bool:
        return self.notifications if isinstance(event, ListChanged) else self.subscriptions


@pytest.fixture
async def fleet(server: RedisServer) -> AsyncIterator[list[tuple[Replica, NotificationRelay]]]:
    members = []
    for index, sessions in enumerate(({"a-1", "a-2"}, {"b-1"}, set())):
        replica = Replica(sessions, subscriptions=index != 2)
        bus = RedisBus(server.url, channel="resource-studio:relay", origin=f"replica-{index}", backoff_initial=0.05)
        relay = NotificationRelay(replica, bus, hold=0.5)
        await relay.start()
        assert await bus.wait_connected(TIMEOUT)
        members.append((replica, relay))
    yield members
    for _, relay in members:
        await relay.close()


async def test_each_replica_delivers_each_notification_once(fleet: list[tuple[Replica, NotificationRelay]]) -> None:
    (a, relay_a), (b, relay_b), (c, _relay_c) = fleet
    assert await relay_a.send(ListChanged()) == 2
    await relay_b.send(Updated("demo://x"))
    # The sender delivered at once, before anything crossed Redis.
    assert a.received == [("list_changed", "", None)]
    assert b.received[-1] == ("updated", "demo://x", None)
    await until(lambda: len(a.received) == 2 and len(b.received) == 2)
    await until(lambda: len(c.received) == 1)
    assert a.received == [("list_changed", "", None), ("updated", "demo://x", None)]
    assert b.received == [("updated", "demo://x", None), ("list_changed", "", None)]
    # Replica c serves without subscriptions: updated is not for it, list_changed is.
    assert c.received == [("list_changed", "", None)]


async def test_per_session_sends_reach_only_where_the_session_lives(
    fleet: list[tuple[Replica, NotificationRelay]],
) -> None:
    (a, relay_a), (b, relay_b), (_c, relay_c) = fleet
    await relay_a.send(Updated("demo://mine", session_id="a-1"))  # local: never published
    await relay_a.send(Updated("demo://theirs", session_id="b-1"))  # b delivers
    await relay_b.send(Updated("demo://nobody", session_id="gone"))  # lives nowhere: everyone else ignores it
    await until(lambda: ("updated", "demo://theirs", "b-1") in b.received)
    await relay_c.send(ListChanged())  # a marker: once it arrived everywhere, everything before it has too
    await until(lambda: ("list_changed", "", None) in a.received and ("list_changed", "", None) in b.received)
    assert a.received == [("updated", "demo://mine", "a-1"), ("updated", "demo://theirs", "b-1"),
                          ("list_changed", "", None)]
    assert b.received == [("updated", "demo://nobody", "gone"), ("updated", "demo://theirs", "b-1"),
                          ("list_changed", "", None)]
    bus_a = relay_a.bus
    assert isinstance(bus_a, RedisBus)
    assert bus_a.stats.published == 1  # only the send for b's session left replica a


async def test_what_a_replica_does_not_deliver_it_still_hears_as_a_change(
    fleet: list[tuple[Replica, NotificationRelay]],
) -> None:
    (a, relay_a), (b, _relay_b), (c, _relay_c) = fleet
    await relay_a.send(Updated("demo://x"))  # c serves without subscriptions
    await relay_a.send(Updated("demo://theirs", session_id="b-1"))  # only b holds the session
    await relay_a.send(ListChanged())  # a marker: delivered everywhere
    await until(lambda: LC in b.received and LC in c.received)
    assert c.received == [LC]
    # Every replica's cache must forget what changed, told or not (issue 14).
    assert c.heard == [Updated("demo://x"), Updated("demo://theirs")]
    assert b.received == [("updated", "demo://x", None), ("updated", "demo://theirs", "b-1"), LC]
    assert b.heard == []
    assert a.heard == []  # its own sends are delivered, never heard back


async def test_a_keyed_change_is_delivered_once_per_replica_whoever_raises_it(
    fleet: list[tuple[Replica, NotificationRelay]],
) -> None:
    (a, relay_a), (b, relay_b), (c, relay_c) = fleet
    bus_b = relay_b.bus
    assert isinstance(bus_b, RedisBus)
    # a raises a change first: b and c hold it, waiting for their own reload of it.
    assert await relay_a.send(ListChanged(), key="reload:1") == 2
    await until(lambda: bus_b.stats.received == 1)
    assert b.received == [] and c.received == []
    # b's reload raises the same change: delivered now, once, and not published again.
    assert await relay_b.send(ListChanged(), key="reload:1") == 1
    assert b.received == [LC]
    # c never raises it: the hold ends and c delivers it anyway.
    await until(lambda: c.received == [LC])
    assert await relay_c.send(ListChanged(), key="reload:1") == 0
    # b and c raise the next one at the same moment, before either hears of the other.
    await relay_b.send(Updated("demo://x"), key="reload:2")
    await relay_c.send(Updated("demo://x"), key="reload:2")
    await until(lambda: ("updated", "demo://x", None) in a.received)
    await relay_a.send(ListChanged())  # unkeyed marker: once it is everywhere, nothing earlier is in flight
    await until(lambda: len(b.received) == 3 and len(c.received) == 3)
    assert a.received == [LC, ("updated", "demo://x", None), LC]
    assert b.received == [LC, ("updated", "demo://x", None), LC]
    assert c.received == [LC, ("updated", "demo://x", None), LC]
    assert bus_b.stats.published == 1  # reload:2 only; reload:1 was a's to publish


async def test_without_a_bus_the_relay_only_delivers_locally() -> None:
    replica = Replica({"s"})
    relay = NotificationRelay(replica)
    await relay.start()
    await relay.send(Updated("demo://x"))
    await relay.send(ListChanged())
    await relay.close()
    assert replica.received == [("updated", "demo://x", None), ("list_changed", "", None)]


async def test_with_redis_down_the_sender_still_delivers(tmp_path: Path) -> None:
    replica = Replica({"s"})
    bus = RedisBus(RedisServer(tmp_path).url, channel="resource-studio:relay", backoff_initial=0.05)
    relay = NotificationRelay(replica, bus)
    await relay.start()
    try:
        await until(lambda: bus.stats.attempts >= 1)
        await relay.send(Updated("demo://x"))
        await relay.send(ListChanged())
        assert replica.received == [("updated", "demo://x", None), ("list_changed", "", None)]
        assert bus.stats.unpublished == 2
    finally:
        await relay.close()


async def test_an_unpublishable_uri_is_delivered_locally_and_logged(
    server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    replica = Replica(set())
    bus = RedisBus(server.url, channel="resource-studio:relay")
    relay = NotificationRelay(replica, bus)
    await relay.start()
    try:
        assert await bus.wait_connected(TIMEOUT)
        await relay.send(Updated("has space"))
    finally:
        await relay.close()
    assert replica.received == [("updated", "has space", None)]
    assert bus.stats.unpublished == 1 and bus.stats.published == 0
    assert any("not published" in r.getMessage() and "uri: must not contain spaces" in r.getMessage()
               for r in caplog.records)
