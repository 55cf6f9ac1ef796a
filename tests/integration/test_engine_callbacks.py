"""on_list_resources, abrupt client loss, and notification sends from another thread's loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import mcp_types as types
import pytest
from engine_support import MODES, connect, settle_legacy, wait_for
from mcp.shared.exceptions import MCPError

from resources_qt import CacheHint, Resource, Resources
from resources_qt.notifications import Updated
from resources_qt.server import ResourceServer, SessionClosed

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]


@pytest.fixture
def server() -> Iterator[ResourceServer]:
    resources = Resources()
    resources.register_direct_resource("base", "doc://base", "", "text/plain", lambda uri: "base")
    srv = ResourceServer(resources, name="callbacks", version="1", session_idle_timeout=1.0)
    srv.enable_resource_notifications = srv.enable_resource_subscriptions = True
    yield srv
    srv.close()


@pytest.mark.parametrize("mode", MODES)
async def test_on_list_resources_sees_the_live_collection_before_the_split(server: ResourceServer, mode: str) -> None:
    calls: list[int] = []

    async def on_list(collection: Resources) -> None:
        calls.append(len(collection))
        if collection.find_by_uri("doc://open/notes.txt") is None:  # idempotent, as the seed asks
            collection.add_resource(Resource(name="open_document", uri="doc://open/notes.txt",
                                             mime_type="text/plain", reader=lambda uri: "notes"))

    server.on_list_resources = on_list
    server.start_http(port=0)
    async with connect(server.url, mode) as client:
        first = await client.list_resources(cursor=None, cache_mode="bypass")
        await client.list_resource_templates(cursor=None, cache_mode="bypass")
        second = await client.list_resources(cursor=None, cache_mode="bypass")
        read = await client.read_resource("doc://open/notes.txt", cache_mode="bypass")
    assert [r.uri for r in first.resources] == ["doc://base", "doc://open/notes.txt"]
    assert [r.uri for r in second.resources] == [r.uri for r in first.resources]
    assert calls == [1, 2, 2] and read.contents[0].text == "notes"


async def test_a_vanished_http_client_is_cleaned_up(server: ResourceServer) -> None:
    url = server.start_http(port=0)
    closed: list[str] = []
    server.add_observer(lambda event: closed.append(event.session_id) if isinstance(event, SessionClosed) else None)
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "gone", "version": "0"}}}
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.post(url, json=init, headers=headers)
        session_id = response.headers["mcp-session-id"]
        await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                        headers={**headers, "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"})
        await http.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
                                   "params": {"uri": "doc://base"}},
                        headers={**headers, "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"})
    # The client never sends DELETE; its session ends when it has been idle too long.
    assert [s.client_name for s in server.sessions()] == ["gone"]
    await wait_for(lambda: server.sessions() == [])
    assert closed == [session_id]


async def test_sends_work_from_another_threads_loop(server: ResourceServer) -> None:
    url = server.start_http(port=0)
    got: list[str] = []

    async def handler(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            got.append(message.params.uri)

    async with connect(url, "legacy", message_handler=handler) as client:
        await settle_legacy(client, server)
        await client.subscribe_resource("doc://base")
        errors: list[BaseException] = []

        def other_thread() -> None:
            try:
                loop = asyncio.SelectorEventLoop()
                loop.run_until_complete(server.notify(Updated("doc://base")))
                loop.close()
            except BaseException as exc:
                errors.append(exc)

        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join(15)
        assert not errors
        await wait_for(lambda: got == ["doc://base"])


async def test_server_level_cache_hint_on_the_modern_era() -> None:
    resources = Resources()
    resources.register_direct_resource("base", "doc://base", "", "text/plain", lambda uri: "base")
    hinted = ResourceServer(resources, name="cached", version="1", cache=CacheHint(5_000, "private"))
    try:
        url = hinted.start_http(port=0)
        async with connect(url, "2026-07-28") as client:
            listed = await client.list_resources(cursor=None, cache_mode="bypass")
            read = await client.read_resource("doc://base", cache_mode="bypass")
    finally:
        hinted.close()
    assert (listed.ttl_ms, listed.cache_scope) == (5_000, "private")
    assert (read.ttl_ms, read.cache_scope) == (5_000, "private")


async def test_listen_streams_are_bounded() -> None:
    bounded = ResourceServer(Resources(), name="bounded", version="1", max_listen_streams=1)
    bounded.enable_resource_notifications = True
    try:
        url = bounded.start_http(port=0)
        async with (
            connect(url, "2026-07-28") as first,
            first.listen(resources_list_changed=True),
            connect(url, "2026-07-28") as second,
        ):
            with pytest.raises(MCPError) as info:
                async with second.listen(resources_list_changed=True):
                    pass
            assert info.value.code == -32603 and "max_listen_streams" in info.value.message
            assert info.value.data == {"limit": "max_listen_streams", "max": 1}
    finally:
        bounded.close()
