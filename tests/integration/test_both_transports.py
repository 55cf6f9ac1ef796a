"""One engine serving stdio and Streamable HTTP at once: both eras, one session registry, notifications to both."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from typing import Any

import mcp_types as types
import pytest
from engine_support import build_catalogue, connect, settle_legacy, wait_for
from helpers.pipes import stdio_pipes

from resources_qt.notifications import ListChanged, Updated
from resources_qt.server import ResourceServer, ServerEvent, ServerStopped
from resources_qt.server.events import TransportStopped

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

URI = "config://app/settings"


def _server() -> ResourceServer:
    server = ResourceServer(build_catalogue(), name="both", version="1")
    server.enable_resource_notifications = True
    server.enable_resource_subscriptions = True
    return server


class _Inbox:
    """What one client was sent: `updated` URIs and `list_changed` count."""

    def __init__(self) -> None:
        self.updated: Counter[str] = Counter()
        self.list_changed = 0

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.updated[message.params.uri] += 1
        elif isinstance(message, types.ResourceListChangedNotification):
            self.list_changed += 1


async def test_legacy_clients_on_both_transports_share_one_engine() -> None:
    server = _server()
    events: list[ServerEvent] = []
    server.add_observer(events.append)
    with stdio_pipes() as pipes:
        try:
            server.start_stdio(stdin=pipes.server_in, stdout=pipes.server_out)
            url = server.start_http("127.0.0.1", 0)
            assert server.transports == ("stdio", "http") and server.url == url
            over_stdio, over_http = _Inbox(), _Inbox()
            async with (
                connect(pipes.client(), "legacy", message_handler=over_stdio) as stdio_client,
                connect(url, "legacy", message_handler=over_http) as http_client,
            ):
                for client in (stdio_client, http_client):
                    listed = await client.list_resources(cursor=None, cache_mode="bypass")
                    assert URI in [r.uri for r in listed.resources]
                    read = await client.read_resource(URI, cache_mode="bypass")
                    assert read.contents[0].text == '{"theme": "dark"}'
                    await client.subscribe_resource(URI)
                await settle_legacy(http_client, server)
                infos = server.sessions()
                assert sorted(info.transport for info in infos) == ["http", "stdio"]
                assert all(info.subscriptions == frozenset({URI}) for info in infos)
                await server.notify(Updated(URI))
                await server.notify(ListChanged())
                await wait_for(lambda: all(i.updated[URI] and i.list_changed for i in (over_stdio, over_http)))
                # One each: nothing doubled by the two transports sharing the loop.
                await server.notify(Updated("config://app/other"))
                await http_client.send_ping()
                await stdio_client.send_ping()
                assert [dict(i.updated) for i in (over_stdio, over_http)] == [{URI: 1}, {URI: 1}]
                assert [i.list_changed for i in (over_stdio, over_http)] == [1, 1]
                # Stopping HTTP leaves stdio serving the same engine.
                await asyncio.to_thread(server.stop_http)
                assert server.transports == ("stdio",) and server.url is None and server.is_running
                assert [info.transport for info in server.sessions()] == ["stdio"]
                read = await stdio_client.read_resource(URI, cache_mode="bypass")
                assert read.contents[0].text == '{"theme": "dark"}'
            stopped = [e for e in events if isinstance(e, TransportStopped)]
            assert [(e.transport, e.message, e.remaining) for e in stopped] == [("http", "", ("stdio",))]
            assert not any(isinstance(e, ServerStopped) for e in events)
        finally:
            await asyncio.to_thread(server.close)
    assert not server.is_running and isinstance(events[-1], ServerStopped)


async def test_listen_streams_on_both_transports_get_one_update_each() -> None:
    server = _server()
    with stdio_pipes() as pipes:
        try:
            url = server.start_http("127.0.0.1", 0)
            server.start_stdio(stdin=pipes.server_in, stdout=pipes.server_out)
            async with (
                connect(pipes.client(), "2026-07-28") as stdio_client,
                connect(url, "2026-07-28") as http_client,
                stdio_client.listen(resources_list_changed=True, resource_subscriptions=[URI]) as stdio_sub,
                http_client.listen(resources_list_changed=True, resource_subscriptions=[URI]) as http_sub,
            ):
                for client in (stdio_client, http_client):
                    read = await client.read_resource(URI, cache_mode="bypass")
                    assert read.contents[0].text == '{"theme": "dark"}'
                await wait_for(lambda: len(server.sessions()) == 2)
                infos = server.sessions()
                assert sorted((i.transport, i.kind) for i in infos) == [("http", "listen"), ("stdio", "listen")]
                await server.notify(Updated(URI))
                await server.notify(ListChanged())
                for sub in (stdio_sub, http_sub):
                    seen = [await anext(sub), await anext(sub)]
                    assert [type(e).__name__ for e in seen] == ["ResourceUpdated", "ResourcesListChanged"]
                    assert seen[0].uri == URI
        finally:
            await asyncio.to_thread(server.close)
    assert not server.is_running and server.sessions() == []


def test_the_stdio_client_leaving_leaves_http_serving() -> None:
    server = _server()
    ended = threading.Event()
    server.add_observer(lambda e: ended.set() if isinstance(e, TransportStopped) and e.transport == "stdio" else None)

    async def use_stdio(pipes: Any) -> None:
        async with connect(pipes.client(), "legacy") as client:
            await client.read_resource(URI, cache_mode="bypass")

    async def use_http(url: str) -> str:
        async with connect(url, "2026-07-28") as client:
            read = await client.read_resource(URI, cache_mode="bypass")
        text = read.contents[0].text
        assert isinstance(text, str)
        return text

    with stdio_pipes() as pipes:
        try:
            server.start_stdio(stdin=pipes.server_in, stdout=pipes.server_out)
            url = server.start_http("127.0.0.1", 0)
            asyncio.run(use_stdio(pipes))
            pipes.hang_up_client()
            assert ended.wait(15), "the stdio transport did not end when its client left"
            assert server.transports == ("http",) and server.is_running
            assert asyncio.run(use_http(url)) == '{"theme": "dark"}'
        finally:
            server.close()


def test_one_transport_at_a_time_each_and_restart() -> None:
    server = _server()
    with stdio_pipes() as pipes:
        try:
            server.start_http("127.0.0.1", 0)
            with pytest.raises(RuntimeError, match="already serving HTTP"):
                server.start_http("127.0.0.1", 0)
            server.start_stdio(stdin=pipes.server_in, stdout=pipes.server_out)
            with pytest.raises(RuntimeError, match="already serving stdio"):
                server.start_stdio(stdin=pipes.server_in, stdout=pipes.server_out)
            server.stop_http()
            again = server.start_http("127.0.0.1", 0)
            assert server.url == again and set(server.transports) == {"stdio", "http"}
            # stop_stdio ends the stdio reader at once, though its client never closed the pipe.
            server.stop_stdio()
            assert server.transports == ("http",) and server.url == again and server.is_running
        finally:
            server.close()
    assert server.transports == () and not server.is_running


def test_http_started_as_the_stdio_client_leaves_is_served() -> None:
    """Whichever way the start and stdio's end interleave, HTTP ends up served (never refused, never on a dead loop)."""
    server = _server()
    try:
        for _ in range(5):
            with stdio_pipes() as pipes:
                server.start_stdio(stdin=pipes.server_in, stdout=pipes.server_out)
                pipes.hang_up_client()  # the last transport starts ending on the loop...
                url = server.start_http("127.0.0.1", 0)  # ...while this start runs on this thread
            assert server.transports == ("http",) and server.url == url
            server.stop()
            assert not server.is_running
    finally:
        server.close()
