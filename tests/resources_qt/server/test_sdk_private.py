"""Each private SDK access of resources_qt.server.sdk_private still exists in the installed SDK."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from types import SimpleNamespace

import pytest
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession
from mcp.server.streamable_http import GET_STREAM_KEY, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from resources_qt.server.event_store import BoundedEventStore
from resources_qt.server.sdk_private import (
    discard_session,
    give_sessions_event_stores,
    http_transports,
    live_session_manager,
    request_connection,
)


def test_the_session_manager_is_none_before_the_app_and_the_manager_after() -> None:
    server: Server[object] = Server("private-check")
    assert live_session_manager(server) is None
    server.streamable_http_app()
    manager = live_session_manager(server)
    assert isinstance(manager, StreamableHTTPSessionManager)
    assert manager is server.session_manager  # the public property names the same object


def test_the_manager_keeps_its_transports_in_a_dict_by_session_id() -> None:
    server: Server[object] = Server("private-check")
    server.streamable_http_app()
    manager = server.session_manager
    assert http_transports(manager) == {}
    assert isinstance(http_transports(manager), dict)


def test_a_request_reaches_its_connection_through_the_server_session() -> None:
    # The attribute is set in ServerSession.__init__; reading the class source keeps this test free of a live
    # session while still failing the day the SDK renames it.
    assert "self._connection" in inspect.getsource(ServerSession.__init__)
    marker = object()
    assert request_connection(SimpleNamespace(session=SimpleNamespace(_connection=marker))) is marker
    assert request_connection(SimpleNamespace(session=None)) is None
    with pytest.raises(AttributeError):
        request_connection(SimpleNamespace(session=SimpleNamespace()))


def test_each_session_the_manager_admits_gets_a_store_of_its_own() -> None:
    server: Server[object] = Server("private-check")
    server.streamable_http_app(event_store=BoundedEventStore(max_streams=1))
    manager = server.session_manager
    made: list[tuple[BoundedEventStore, Callable[[], bool]]] = []

    def make(listening: Callable[[], bool]) -> BoundedEventStore:
        made.append((BoundedEventStore(listening=listening), listening))
        return made[-1][0]

    give_sessions_event_stores(manager, make)
    first, second = manager._admit_session(None), manager._admit_session(None)
    assert first is not None and second is not None
    assert [first._event_store, second._event_store] == [store for store, _ in made]
    assert made[0][0] is not made[1][0]
    assert set(http_transports(manager)) == {first.mcp_session_id, second.mcp_session_id}
    assert "self._event_store = event_store" in inspect.getsource(StreamableHTTPServerTransport.__init__)
    # listening() follows the transport's registry of open streams, where the GET stream registers
    listening = made[0][1]
    assert listening() is False
    first._request_streams[GET_STREAM_KEY] = object()  # type: ignore[assignment]
    assert listening() is True and made[1][1]() is False
    assert "self._request_streams[GET_STREAM_KEY] =" in inspect.getsource(StreamableHTTPServerTransport)


def test_a_session_is_ended_the_way_a_delete_ends_it() -> None:
    server: Server[object] = Server("private-check")
    server.streamable_http_app()
    manager = server.session_manager
    transport = manager._admit_session(None)
    assert transport is not None and transport.mcp_session_id is not None
    asyncio.run(discard_session(manager, transport.mcp_session_id, transport))
    assert http_transports(manager) == {}
