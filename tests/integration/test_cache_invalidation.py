"""The read cache forgets what live-data watches and other replicas' notifications change, told or not (issue 14)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Coroutine, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from engine_support import MODES, connect, wait_for
from helpers.live_project import Served, serve_live
from helpers.redis_server import RedisServer, redis_server

from resources_qt import CacheHint
from resources_qt.bus.redis_bus import RedisBus
from resources_qt.notifications import ListChanged, Updated
from resources_qt.project import Project, ResourceSpec, ServerSettings
from resources_qt.server import ResourceServer
from resources_qt.snippets import SnippetPool, bind_project

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

LIVE_PROJECT = """format = 1

[server]
name = "cache-live"
notifications = true
subscriptions = true
reader_timeout = 5.0

[[resources]]
name = "note"
uri_template = "notes://{+path}"
mime_type = "text/plain"
cache = { ttl_ms = 600000, scope = "public" }
watch = { files = ["notes"] }
reader = '''
def read(uri, params):
    return (PROJECT_DIR / "notes" / params["path"]).read_text()
'''

[[resources]]
name = "counter"
uri_template = "poll://{id}"
mime_type = "text/plain"
cache = { ttl_ms = 600000, scope = "public" }
watch = { interval = 0.1 }
reader = '''
def read(uri, params):
    return (PROJECT_DIR / "value.txt").read_text() + "-" + params["id"]
'''

[[resources]]
name = "plain"
uri = "plain://value"
mime_type = "text/plain"
reader = '''
def read(uri, params):
    return (PROJECT_DIR / "value.txt").read_text()
'''
"""
"""Hinted for ten minutes: within a test only an invalidation can make the cache let go of an answer."""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("A1")
    (tmp_path / "notes" / "b.md").write_text("B1")
    (tmp_path / "value.txt").write_text("v1")
    path = tmp_path / "cache.toml"
    path.write_text(LIVE_PROJECT)
    with serve_live(path) as running:
        yield running


async def _text(client: Any, uri: str) -> str:
    text: str = (await client.read_resource(uri, cache_mode="bypass")).contents[0].text
    return text


@pytest.mark.parametrize("mode", MODES)
async def test_a_watched_file_change_drops_every_cached_instance_for_unsubscribed_clients(
    served: Served, mode: str
) -> None:
    cache = served.server.read_cache
    async with connect(served.url, mode) as client:
        assert [await _text(client, "notes://a.md"), await _text(client, "notes://b.md")] == ["A1", "B1"]
        hits = cache.hits
        assert await _text(client, "notes://a.md") == "A1" and cache.hits == hits + 1  # answered from the cache
        (served.root / "notes" / "a.md").write_text("A2")
        await wait_for(lambda: served.changes("note"))
        # Nobody subscribed, so no `updated` named either URI: the watch itself dropped them, both.
        assert served.changes("note")[0].uris == ()
        assert len(cache) == 0
        assert [await _text(client, "notes://a.md"), await _text(client, "notes://b.md")] == ["A2", "B1"]


async def test_a_polled_change_drops_the_unsubscribed_instances_too(served: Served) -> None:
    async with connect(served.url, "legacy") as watcher, connect(served.url, "2026-07-28") as reader:
        await watcher.subscribe_resource("poll://1")  # what is polled
        assert await _text(reader, "poll://2") == "v1-2"  # kept: nobody polls poll://2
        reads = served.live.poll_reads("counter")
        await wait_for(lambda: served.live.poll_reads("counter") >= reads + 2)  # the first digest is taken
        (served.root / "value.txt").write_text("v2")
        await wait_for(lambda: served.changes("counter"))
        assert served.changes("counter")[0].uris == ("poll://1",)
        assert await _text(reader, "poll://2") == "v2-2"


@pytest.mark.parametrize("mode", MODES)
async def test_a_resource_without_a_hint_is_never_cached(served: Served, mode: str) -> None:
    cache = served.server.read_cache
    async with connect(served.url, mode) as client:
        assert await _text(client, "plain://value") == "v1"
        # Not watched, nothing is announced: only a read that reaches the reader sees the new value.
        (served.root / "value.txt").write_text("v2")
        assert await _text(client, "plain://value") == "v2"
    assert len(cache) == 0 and cache.hits == 0


# -- other replicas ------------------------------------------------------------------------------------

HINTED = "data://hinted"
FENCE = "fence://0"


@pytest.fixture(scope="module")
def pool() -> Iterator[SnippetPool]:
    started = SnippetPool(workers=1, timeout=5.0, memory_limit_mb=256)
    assert started.wait_ready(60)
    yield started
    started.close()


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server


class Pair:
    """Two replicas sharing a channel: `sender` with every switch on, `receiver` as the test sets it."""

    def __init__(self, value: Path, sender: ResourceServer, receiver: ResourceServer, bus: RedisBus) -> None:
        self.value = value
        self.sender = sender
        self.receiver = receiver
        self.bus = bus
        """The receiver's bus: its `received` count says what has been handled."""

    async def send(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run one of the sender's sends, then wait until the receiver handled it (a fence behind it)."""
        before = self.bus.stats.received
        await coro
        await self.sender.notify(Updated(FENCE))
        # Envelopes are handled one after the other: the fence counted means the send was handled.
        await wait_for(lambda: self.bus.stats.received >= before + 2)


@asynccontextmanager
async def _pair(tmp_path: Path, pool: SnippetPool, redis: RedisServer, channel: str) -> AsyncIterator[Pair]:
    value = tmp_path / "value.txt"
    value.write_text("v1")
    reader = f"def read(uri, params):\n    return open({str(value)!r}).read()\n"
    project = Project(server=ServerSettings(name="cache-bus"), resources=[
        ResourceSpec(name="hinted", uri=HINTED, mime_type="text/plain", reader=reader,
                     cache=CacheHint(600_000, "public")),
    ])
    buses = [RedisBus(redis.url, channel=channel, backoff_initial=0.05) for _ in range(2)]
    servers = [ResourceServer(bind_project(project, pool, apply_settings=False), name="cache-bus", version="1",
                              bus=bus) for bus in buses]
    try:
        for server in servers:
            server.enable_resource_notifications = True
            server.enable_resource_subscriptions = True
            server.start_http(port=0)
        await wait_for(lambda: all(bus.connected for bus in buses))
        yield Pair(value, servers[0], servers[1], buses[1])
    finally:
        for server in servers:
            server.close()


CHANGES = [
    pytest.param("updated", "subscriptions", True, id="updated-subscriptions-on"),
    pytest.param("updated", "subscriptions", False, id="updated-subscriptions-off"),
    pytest.param("session-elsewhere", "subscriptions", True, id="updated-for-a-session-held-elsewhere"),
    pytest.param("list_changed", "notifications", True, id="list_changed-notifications-on"),
    pytest.param("list_changed", "notifications", False, id="list_changed-notifications-off"),
]


@pytest.mark.parametrize(("change", "switch", "on"), CHANGES)
async def test_another_replicas_notification_drops_what_this_one_kept(
    tmp_path: Path, pool: SnippetPool, redis: RedisServer, change: str, switch: str, on: bool
) -> None:
    async with _pair(tmp_path, pool, redis, f"cache-bus:{tmp_path.name}") as pair:
        setattr(pair.receiver, f"enable_resource_{switch}", on)
        assert pair.receiver.url is not None
        async with connect(pair.receiver.url, "2026-07-28") as client:
            assert await _text(client, HINTED) == "v1"
            pair.value.write_text("v2")
            assert await _text(client, HINTED) == "v1"  # kept: nothing said it changed yet
            if change == "updated":
                await pair.send(pair.sender.notify(Updated(HINTED)))
            elif change == "session-elsewhere":
                # Locally a per-session send drops the cache whoever holds the session; so must the others.
                await pair.send(pair.sender.notify(Updated(HINTED, session_id="held-by-a-third-replica")))
            else:
                await pair.send(pair.sender.notify(ListChanged()))
            assert await _text(client, HINTED) == "v2"
