"""The only place the engine touches private parts of the MCP SDK (mcp 2.3), each access failing loudly.

Every function reads one private attribute directly (no `getattr` default),
so an SDK that renamed it raises `AttributeError` here instead of silently
degrading; tests/resources_qt/server/test_sdk_private.py checks each one
against the installed SDK, and pyproject pins the SDK's minor version.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http import GET_STREAM_KEY, EventStore, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

__all__ = [
    "discard_session",
    "give_sessions_event_stores",
    "http_transports",
    "live_session_manager",
    "request_connection",
]


def request_connection(ctx: Any) -> Any:
    """The SDK `Connection` behind a request (`ServerRequestContext`), or None outside a session.

    mcp 2.3 offers the per-connection object only through the request's
    `ServerSession._connection` (a public `ctx.connection` is the SDK's own
    TODO); the engine needs it for the standalone notification channel, the
    per-connection state and the exit stack that says when a session ends.
    """
    session = ctx.session
    if session is None:
        return None
    return session._connection


def live_session_manager(server: Server[Any]) -> StreamableHTTPSessionManager | None:
    """The server's HTTP session manager once `streamable_http_app()` made one, else None.

    The public `Server.session_manager` raises before that; stopping must work either way.
    """
    manager: StreamableHTTPSessionManager | None = server._session_manager
    return manager


def http_transports(manager: StreamableHTTPSessionManager) -> dict[str, StreamableHTTPServerTransport]:
    """The manager's live transports by session id: the SDK has no public view of them.

    Used to end sessions before uvicorn's own shutdown (open GET streams would
    hold it) and to pick the longest-idle session to evict at the session cap.
    """
    transports: dict[str, StreamableHTTPServerTransport] = manager._server_instances
    return transports


async def discard_session(
    manager: StreamableHTTPSessionManager, session_id: str, transport: StreamableHTTPServerTransport
) -> None:
    """End and forget one session as the manager does after a DELETE (no public way to end one)."""
    await manager._discard_session(session_id, transport)


def give_sessions_event_stores(
    manager: StreamableHTTPSessionManager, make: Callable[[Callable[[], bool]], EventStore]
) -> None:
    """Give every session the manager opens from now on an event store of its own: `make(listening)`.

    The SDK hands one store to every session's transport and names a stream
    by the request id it answers (or `_GET_stream`): ids that repeat across
    sessions, so with one shared store a client that names another session's
    event id in `Last-Event-ID` gets that session's messages replayed. The
    manager's `_admit_session` creates each transport; the new transport's
    `_event_store` is replaced before the opening request is served, so the
    shared store never holds anything. `listening()` says whether the
    session's standalone GET stream is open (the transport's `_request_streams`).
    """
    admit = manager._admit_session

    def admitted(requestor: AuthorizationContext | None) -> StreamableHTTPServerTransport | None:
        transport = admit(requestor)
        if transport is not None:
            streams = transport._request_streams
            transport._event_store = make(lambda: GET_STREAM_KEY in streams)
        return transport

    manager._admit_session = admitted  # type: ignore[method-assign]
