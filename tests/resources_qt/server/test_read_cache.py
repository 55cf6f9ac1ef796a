"""The read cache: hinted resources answered within their TTL without the reader, through a real SDK client."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.pools import MEMORY_MB, TIMEOUT
from mcp import Client
from mcp.shared.exceptions import MCPError

from resources_qt import CacheHint, Resource, Resources
from resources_qt.notifications import ListChanged, Updated
from resources_qt.project import Project, ResourceSpec, ServerSettings
from resources_qt.server import ResourceServer
from resources_qt.server.read_cache import MAX_ENTRY_BYTES, ReadCache, VersionedReader
from resources_qt.snippets import SnippetPool, bind_project

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

MODES = ("legacy", "2026-07-28")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Counting:
    """A reader that counts its calls and answers `text-N`."""

    def __init__(self, text: str = "text", *, fail_first: bool = False) -> None:
        self.text = text
        self.calls = 0
        self.fail_first = fail_first

    def __call__(self, uri: str) -> str:
        self.calls += 1
        if self.fail_first and self.calls == 1:
            raise RuntimeError("not yet")
        return f"{self.text}-{self.calls}"


@pytest.fixture(scope="module")
def served() -> Iterator[ResourceServer]:
    server = ResourceServer(Resources(), name="cache", version="1")
    server.enable_resource_notifications = True
    server.enable_resource_subscriptions = True
    server.start_http(port=0)
    yield server
    server.close()


def _add(server: ResourceServer, name: str, reader: Any, hint: CacheHint | None, **where: str) -> Resource:
    uri = where.get("uri", f"test://{name}")
    template = where.get("uri_template")
    resource = Resource(name=name, uri="" if template else uri, uri_template=template or "", mime_type="text/plain",
                        reader=reader, cache=hint)
    return server.resources.add_resource(resource)


def _url(server: ResourceServer) -> str:
    url = server.url
    assert url is not None, "the server is not serving HTTP"
    return url


async def _texts(client: Client, uri: str, times: int) -> list[str]:
    out = []
    for _ in range(times):
        result = await client.read_resource(uri, cache_mode="bypass")  # the client's own cache stays out of it
        out.append(result.contents[0].text)  # type: ignore[union-attr]
    return out


@pytest.mark.parametrize("mode", MODES)
async def test_hinted_resource_reads_once_within_ttl(served: ResourceServer, mode: str) -> None:
    reader = Counting()
    _add(served, f"hinted_{mode[:3]}", reader, CacheHint(60_000, "public"))
    async with Client(_url(served), mode=mode) as client:
        first = await client.read_resource(f"test://hinted_{mode[:3]}", cache_mode="bypass")
        texts = await _texts(client, f"test://hinted_{mode[:3]}", 2)
        kept = await client.read_resource(f"test://hinted_{mode[:3]}", cache_mode="bypass")
    assert [first.contents[0].text, *texts] == ["text-1"] * 3  # type: ignore[union-attr]
    assert reader.calls == 1
    if mode != "legacy":
        assert (first.ttl_ms, first.cache_scope) == (60_000, "public")
        # A kept answer says what is left of its TTL, so a client does not keep it past the server's.
        assert kept.ttl_ms is not None and 0 < kept.ttl_ms < 60_000 and kept.cache_scope == "public"


@pytest.mark.parametrize("mode", MODES)
async def test_unhinted_and_zero_ttl_resources_always_reach_the_reader(served: ResourceServer, mode: str) -> None:
    plain, zero = Counting(), Counting()
    _add(served, f"plain_{mode[:3]}", plain, None)
    _add(served, f"zero_{mode[:3]}", zero, CacheHint(0))
    async with Client(_url(served), mode=mode) as client:
        assert await _texts(client, f"test://plain_{mode[:3]}", 3) == ["text-1", "text-2", "text-3"]
        assert await _texts(client, f"test://zero_{mode[:3]}", 2) == ["text-1", "text-2"]


async def test_updated_notification_drops_that_uri_only(served: ResourceServer) -> None:
    one, two = Counting("one"), Counting("two")
    _add(served, "notified_one", one, CacheHint(60_000))
    _add(served, "notified_two", two, CacheHint(60_000))
    async with Client(_url(served), mode="legacy") as client:
        await _texts(client, "test://notified_one", 1)
        await _texts(client, "test://notified_two", 1)
        await served.notify(Updated("test://notified_one"))
        assert await _texts(client, "test://notified_one", 2) == ["one-2", "one-2"]
        assert await _texts(client, "test://notified_two", 1) == ["two-1"]


async def test_list_changed_drops_everything(served: ResourceServer) -> None:
    reader = Counting()
    _add(served, "listed", reader, CacheHint(60_000))
    async with Client(_url(served), mode="2026-07-28") as client:
        await _texts(client, "test://listed", 1)
        await served.notify(ListChanged())
        assert await _texts(client, "test://listed", 2) == ["text-2", "text-2"]


async def test_edit_in_place_serves_the_new_reader(served: ResourceServer) -> None:
    old, new = Counting("old"), Counting("new")
    stored = _add(served, "edited", old, CacheHint(60_000))
    async with Client(_url(served), mode="legacy") as client:
        assert await _texts(client, "test://edited", 2) == ["old-1", "old-1"]
        # replace() is an in-place edit: no change callback, only the collection's version moves.
        edited = stored.copy()
        edited.reader = new
        served.resources.replace("edited", edited)
        assert await _texts(client, "test://edited", 2) == ["new-1", "new-1"]
        served.resources.remove("edited")
        with pytest.raises(MCPError):
            await client.read_resource("test://edited", cache_mode="bypass")
    assert old.calls == 1


async def test_template_instances_are_kept_apart_and_failures_are_not_kept(served: ResourceServer) -> None:
    reader = Counting(fail_first=True)

    def read(uri: str, params: dict[str, str]) -> str:
        return f"{params['id']}:{reader(uri)}"

    _add(served, "tpl", read, CacheHint(60_000), uri_template="tpl://{id}")
    async with Client(_url(served), mode="legacy") as client:
        with pytest.raises(MCPError):
            await client.read_resource("tpl://a", cache_mode="bypass")
        assert await _texts(client, "tpl://a", 2) == ["a:text-2", "a:text-2"]
        assert await _texts(client, "tpl://b", 2) == ["b:text-3", "b:text-3"]


async def test_entries_expire_after_their_ttl(served: ResourceServer) -> None:
    reader = Counting()
    _add(served, "short", reader, CacheHint(30))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5.0
    async with Client(_url(served), mode="legacy") as client:
        first = (await _texts(client, "test://short", 1))[0]
        # Read until a new answer comes: within 30 ms the kept one may repeat, never after.
        while (await _texts(client, "test://short", 1))[0] == first:
            assert loop.time() < deadline, "the entry outlived its TTL"
    assert reader.calls == 2


def test_cache_is_bounded_by_entries_and_bytes() -> None:
    now = [0.0]
    cache = ReadCache(max_entries=3, max_bytes=100, clock=lambda: now[0])
    resources = Resources()
    resource = resources.register_direct_resource("r", "b://r", "", "text/plain", lambda uri: "x")
    for index in range(5):
        _, ticket, _ = cache.lookup(f"b://{index}", resource, resources)
        assert ticket is not None
        assert cache.store(ticket, index, ttl_ms=1000, size=10)
    assert len(cache) == 3
    assert cache.lookup("b://0", resource, resources)[0] is None  # the oldest went first
    assert cache.lookup("b://4", resource, resources)[0] == 4
    _, ticket, _ = cache.lookup("b://big", resource, resources)
    assert ticket is not None
    assert cache.store(ticket, "big", ttl_ms=1000, size=90)
    assert cache.size_bytes == 100  # the least recently used went until it fit: b://4 (just read) stays
    assert len(cache) == 2
    assert cache.lookup("b://4", resource, resources)[0] == 4
    _, ticket, _ = cache.lookup("b://huge", resource, resources)
    assert ticket is not None
    assert not ReadCache().store(ticket, "huge", ttl_ms=1000, size=MAX_ENTRY_BYTES + 1)
    now[0] = 2.0
    assert cache.lookup("b://big", resource, resources)[0] is None  # expired


def test_a_hit_says_how_long_its_answer_stays_valid() -> None:
    now = [10.0]
    cache = ReadCache(clock=lambda: now[0])
    resources = Resources()
    resource = resources.register_direct_resource("r", "b://r", "", "text/plain", lambda uri: "x")
    miss = cache.lookup("b://r", resource, resources)
    assert miss.value is None and miss.ticket is not None
    assert cache.store(miss.ticket, "kept", ttl_ms=3000, size=4)
    now[0] = 12.5
    assert cache.lookup("b://r", resource, resources) == ("kept", None, 500)
    now[0] = 12.9999
    assert cache.lookup("b://r", resource, resources).ttl_left_ms == 1  # never 0: that would mean "do not cache"
    now[0] = 13.0
    assert cache.lookup("b://r", resource, resources).value is None


def test_a_read_running_across_an_invalidation_is_not_kept() -> None:
    cache = ReadCache()
    resources = Resources()
    resource = resources.register_direct_resource("r", "b://r", "", "text/plain", lambda uri: "x")
    _, ticket, _ = cache.lookup("b://r", resource, resources)
    assert ticket is not None
    cache.invalidate("b://r")  # the notification arrives while the reader runs
    assert not cache.store(ticket, "stale", ttl_ms=1000, size=5)
    assert cache.lookup("b://r", resource, resources)[0] is None


@pytest.fixture
def snippet_pool() -> Iterator[SnippetPool]:
    pool = SnippetPool(workers=1, timeout=TIMEOUT, memory_limit_mb=MEMORY_MB)
    assert pool.wait_ready(60)
    yield pool
    pool.close()


async def test_snippet_reader_hits_its_worker_once_and_again_after_a_prelude_change(
    snippet_pool: SnippetPool, tmp_path: Path
) -> None:
    counter = tmp_path / "calls.txt"
    reader = (
        "def read(uri, params):\n"
        f"    with open({str(counter)!r}, 'a') as f:\n"
        "        f.write('x')\n"
        "    return GREETING\n"
    )
    hinted = ResourceSpec(name="hinted", uri="snip://hinted", mime_type="text/plain", reader=reader,
                          cache=CacheHint(60_000))
    project = Project(server=ServerSettings(name="snip"), prelude="GREETING = 'hello'\n", resources=[hinted])
    server = ResourceServer(bind_project(project, snippet_pool, apply_settings=False), name="snip", version="1")
    server.start_http(port=0)
    try:
        async with Client(_url(server), mode="2026-07-28") as client:
            assert await _texts(client, "snip://hinted", 3) == ["hello"] * 3
            assert counter.read_text() == "x"
            snippet_pool.set_prelude("GREETING = 'bonjour'\n")
            assert await _texts(client, "snip://hinted", 2) == ["bonjour"] * 2
        assert counter.read_text() == "xx"
        assert server.read_cache.hits == 3
    finally:
        server.close()


@pytest.mark.parametrize("mode", MODES)
async def test_notifications_switched_off_still_drop_what_changed(mode: str) -> None:
    server = ResourceServer(Resources(), name="quiet", version="1")  # notifications and subscriptions off
    one, two = Counting("one"), Counting("two")
    _add(server, "one", one, CacheHint(60_000))
    _add(server, "two", two, CacheHint(60_000))
    server.start_http(port=0)
    try:
        async with Client(_url(server), mode=mode) as client:
            assert await _texts(client, "test://one", 2) == ["one-1", "one-1"]
            await _texts(client, "test://two", 1)
            await server.notify(Updated("test://one"))
            assert await _texts(client, "test://one", 2) == ["one-2", "one-2"]
            assert await _texts(client, "test://two", 1) == ["two-1"]
            await server.notify(ListChanged())
            assert await _texts(client, "test://two", 1) == ["two-2"]
    finally:
        server.close()


async def test_notifications_sent_while_the_server_is_stopped_drop_what_changed() -> None:
    server = ResourceServer(Resources(), name="paused", version="1")
    server.enable_resource_notifications = server.enable_resource_subscriptions = True
    _add(server, "one", Counting("one"), CacheHint(600_000))
    _add(server, "two", Counting("two"), CacheHint(600_000))

    async def served_after_a_restart() -> list[str]:
        server.start_http(port=0)
        async with Client(_url(server), mode="2026-07-28") as client:
            texts = await _texts(client, "test://one", 1) + await _texts(client, "test://two", 1)
        server.stop()
        return texts

    try:
        assert await served_after_a_restart() == ["one-1", "two-1"]
        await server.notify(Updated("test://one"))  # from the server page, with the server stopped
        assert await served_after_a_restart() == ["one-2", "two-1"]
        await server.notify(ListChanged())
        assert await served_after_a_restart() == ["one-3", "two-2"]
    finally:
        server.close()


def test_a_closed_engine_leaves_no_cache_on_a_long_lived_collection() -> None:
    resources = Resources()
    server = ResourceServer(resources, name="short", version="1")
    server.start_http(port=0)
    cache = weakref.ref(server.read_cache)
    server.close()
    del server
    gc.collect()
    assert cache() is None  # the collection's listener no longer holds it
    resources.add_resource(Resource(name="later", uri="test://later", mime_type="text/plain", reader=Counting()))


def test_snippet_readers_name_their_content_version(snippet_pool: SnippetPool) -> None:
    source = "def read(uri, params):\n    return 1\n"
    spec = ResourceSpec(name="versioned", uri="snip://v", mime_type="text/plain", reader=source)
    project = Project(server=ServerSettings(name="snip"), resources=[spec])
    resources = bind_project(project, snippet_pool, apply_settings=False)
    resource = resources.get("versioned")
    assert resource is not None
    reader = resource.reader
    assert isinstance(reader, VersionedReader)
    before = reader.content_version()
    snippet_pool.set_prelude("X = 1\n")
    assert reader.content_version() != before


def _result(text: str) -> Any:
    import mcp_types as types

    return types.ReadResourceResult(contents=[types.TextResourceContents(uri="b://r", text=text)])


def test_the_byte_bounds_count_utf8_not_characters() -> None:
    cache = ReadCache(max_bytes=1_000_000)
    resources = Resources()
    resource = resources.register_direct_resource("r", "b://r", "", "text/plain", lambda uri: "x")
    stored = []
    for index in range(4):
        ticket = cache.lookup(f"b://{index}", resource, resources).ticket
        assert ticket is not None
        # 100,000 emoji: 100,000 characters as a caller counting characters says, 400,000 bytes.
        stored.append(cache.store(ticket, _result("\N{GRINNING FACE}" * 100_000), ttl_ms=1000, size=100_000))
    assert stored == [True] * 4
    assert len(cache) == 2  # two of them are 800,012 bytes; a third would pass 1,000,000
    assert cache.size_bytes == 2 * (400_000 + len("b://r"))
    ticket = cache.lookup("b://big", resource, resources).ticket
    assert ticket is not None
    assert not cache.store(ticket, _result("é" * 600_000), ttl_ms=1000, size=600_000)  # 1.2 MB of UTF-8
    assert cache.store(ticket, _result("e" * 600_000), ttl_ms=1000, size=600_000)  # ASCII: as many bytes
