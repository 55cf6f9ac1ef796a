"""EvictingAdmission: at the session cap, a newcomer evicts the longest-idle session without a stream."""

from __future__ import annotations

import hmac
import logging
import time
from typing import Any

from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from resources_qt.server.sdk_private import discard_session, http_transports

__all__ = ["EvictingAdmission", "session_header"]

logger = logging.getLogger(__name__)

_HEADER = MCP_SESSION_ID_HEADER.encode("latin-1")
_VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.lower().encode("latin-1")


class EvictingAdmission:
    """ASGI wrapper around the SDK's Streamable HTTP app.

    It watches which session each request belongs to: when it was last
    active and how many of its requests (an open GET stream included) are
    in flight. When a request that would open a session arrives while the
    SDK's manager holds `max_sessions`, the session idle longest with nothing
    in flight is ended first (as if its client had sent DELETE), so one
    client that opens sessions and walks away cannot lock everyone out. If
    every session is busy, the SDK answers 503 as before.
    """

    def __init__(
        self, app: ASGIApp, manager: StreamableHTTPSessionManager, *, path: str, token: str | None = None
    ) -> None:
        self.app = app
        self.manager = manager
        self._path = path
        self._token = token.encode("utf-8") if token else None
        self._last_active: dict[str, float] = {}
        self._in_flight: dict[str, int] = {}
        self.evicted = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session_id = session_header(scope)
        if session_id is None:
            if self._may_open_session(scope) and self._full():
                await self._evict_one()
            await self.app(scope, receive, _LearnSession(send, self))
            return
        self._in_flight[session_id] = self._in_flight.get(session_id, 0) + 1
        try:
            await self.app(scope, receive, send)
        finally:
            left = self._in_flight.get(session_id, 1) - 1
            if left > 0:
                self._in_flight[session_id] = left
            else:
                self._in_flight.pop(session_id, None)
            if session_id in self._sessions():
                self._last_active[session_id] = time.monotonic()
            else:
                self._last_active.pop(session_id, None)

    def _may_open_session(self, scope: Scope) -> bool:
        """Whether the SDK would open a session for this request: only then may it cost another one.

        A JSON POST to the endpoint in the handshake era (the SDK's own
        routing: no protocol-version header, or a handshake version), with the
        bearer token when one is required. A 2026-07-28 request opens none, and
        a request the SDK will refuse as unauthorised must not end anyone's
        session. (A JSON POST that is not an `initialize`, say a `ping`
        without a session, still counts: telling needs the body.)
        """
        if scope.get("method") != "POST" or scope.get("path") != self._path:
            return False
        version = _header(scope, _VERSION_HEADER)
        if version is not None and version.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS:
            return False
        if not (_header(scope, b"content-type") or b"").lower().startswith(b"application/json"):
            return False  # the SDK answers 415 before it opens anything
        if self._token is None:
            return True
        # As the SDK reads it: the scheme in any case, then the token verbatim.
        authorization = _header(scope, b"authorization") or b""
        return authorization[:7].lower() == b"bearer " and hmac.compare_digest(authorization[7:], self._token)

    def learned(self, session_id: str) -> None:
        self._last_active[session_id] = time.monotonic()

    def _sessions(self) -> dict[str, Any]:
        return dict(http_transports(self.manager))

    def _full(self) -> bool:
        limit = self.manager.max_sessions
        return limit is not None and len(self._sessions()) >= limit

    async def _evict_one(self) -> None:
        sessions = self._sessions()
        for gone in [sid for sid in self._last_active if sid not in sessions]:
            del self._last_active[gone]
        idle = [(self._last_active.get(sid, 0.0), sid) for sid in sessions if not self._in_flight.get(sid)]
        if not idle:
            return
        _, victim = min(idle)
        transport = sessions.get(victim)
        if transport is None:
            return
        logger.info("Session limit reached: ending the longest-idle session %r", victim)
        self._last_active.pop(victim, None)
        self.evicted += 1
        await discard_session(self.manager, victim, transport)


class _LearnSession:
    """A `send` that notes the session id the SDK gives a newly opened session."""

    def __init__(self, send: Send, admission: EvictingAdmission) -> None:
        self._send = send
        self._admission = admission

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            for name, value in message.get("headers", ()):
                if name.lower() == _HEADER:
                    self._admission.learned(value.decode("latin-1"))
                    break
        await self._send(message)


def session_header(scope: Scope) -> str | None:
    """The request's `Mcp-Session-Id`, or None."""
    value = _header(scope, _HEADER)
    return value.decode("latin-1") if value is not None else None


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            found: bytes = value
            return found
    return None
