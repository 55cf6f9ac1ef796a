"""Streamable HTTP hosting: the SDK's Starlette app under uvicorn, Host/Origin checks, bearer token."""

from __future__ import annotations

import asyncio
import errno
import hmac
import ipaddress
import logging
import socket
from collections.abc import Callable, Sequence
from typing import Any

import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.lowlevel import Server
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, TransportSecuritySettings
from pydantic import AnyHttpUrl
from starlette.types import ASGIApp

from resources_qt.server.admission import EvictingAdmission
from resources_qt.server.auth.gate import ResourceServerAuth
from resources_qt.server.disconnects import install_disconnect_filter
from resources_qt.server.event_store import (
    SESSION_BYTES,
    SESSION_EVENTS_PER_STREAM,
    SESSION_STREAMS,
    BoundedEventStore,
)
from resources_qt.server.sdk_private import give_sessions_event_stores
from resources_qt.server.streams import StreamBudget, StreamGuard

__all__ = [
    "DEFAULT_MAX_REQUEST_BODY_SIZE",
    "StaticTokenVerifier",
    "bind_socket",
    "build_app",
    "check_bind",
    "endpoint_url",
    "is_loopback",
    "security_settings",
    "serve_uvicorn",
]

logger = logging.getLogger(__name__)

MCP_PATH = "/mcp"
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


class StaticTokenVerifier:
    """An SDK `TokenVerifier` accepting exactly one shared secret (compared in constant time)."""

    def __init__(self, token: str) -> None:
        if not token:
            raise ValueError("The bearer token must not be empty")
        self._token = token.encode("utf-8")

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode("utf-8"), self._token):
            return AccessToken(token="***", client_id="resource-studio", scopes=[])
        return None


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None, *, oauth: bool = False) -> None:
    """Refuse to expose the server beyond this machine without a token (or `[server.auth]`: `oauth`)."""
    if not host:
        raise ValueError("The host to bind must not be empty")
    if not is_loopback(host) and not token and not oauth:
        raise ValueError(
            f"Refusing to serve on non-loopback address {host} without a token: "
            "pass a bearer token, or bind 127.0.0.1"
        )


def security_settings(host: str, extra_hosts: Sequence[str] = ()) -> TransportSecuritySettings:
    """DNS-rebinding protection: only Host/Origin values naming this machine are accepted."""
    names = list(_LOOPBACK_HOSTS)
    if not is_loopback(host):
        wildcard = host in ("0.0.0.0", "::", "")
        names.append(f"[{host}]" if ":" in host else host)
        if wildcard:
            names.extend({socket.gethostname(), socket.getfqdn()})
    names.extend(extra_hosts)
    unique = list(dict.fromkeys(n for n in names if n and n not in ("0.0.0.0", "[::]")))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{n}:*" for n in unique] + unique,
        allowed_origins=[f"{scheme}://{n}:*" for n in unique for scheme in ("http", "https")]
        + [f"{scheme}://{n}" for n in unique for scheme in ("http", "https")],
    )


def build_app(
    server: Server[Any],
    *,
    host: str,
    port: int,
    token: str | None,
    max_request_body_size: int = DEFAULT_MAX_REQUEST_BODY_SIZE,
    session_idle_timeout: float | None = None,
    max_sessions: int | None = None,
    extra_hosts: Sequence[str] = (),
    json_response: bool = True,
    streams: StreamBudget | None = None,
    oauth: ResourceServerAuth | None = None,
) -> StreamGuard:
    """The SDK's Streamable HTTP app at /mcp, with our security settings and optional bearer auth.

    With `json_response` (the default) a request is answered with one JSON
    body instead of an SSE stream of one event: half the work per read for
    the transport. Streams stay where they carry notifications: the
    standalone GET stream and 2026-07-28 `subscriptions/listen` (the SDK
    always answers listen as SSE). Nothing here sends a message inside a
    request (no progress, no server-to-client requests), so no frame is lost.

    At `max_sessions` open sessions a newcomer first evicts the longest-idle
    session that has no request in flight and no stream open
    (`resources_qt.server.admission`); only when every session is busy does
    it get the SDK's 503. Open GET streams count against `streams` (no limit
    without one) and can be cut (`resources_qt.server.streams.StreamGuard`).

    With `oauth` (`[server.auth]`) the app is an OAuth 2.1 resource server: it serves RFC 9728 metadata
    and requests to /mcp need an access token of the issuer (the SDK's bearer middleware and
    `resources_qt.server.auth.gate`); a static `token` cannot be given with it.
    """
    if oauth is not None and token:
        raise ValueError("A static bearer token and [server.auth] cannot be combined: use one of the two")
    install_disconnect_filter()
    auth: AuthSettings | None = None
    verifier: StaticTokenVerifier | None = None
    if token:
        verifier = StaticTokenVerifier(token)
        # The SDK wires bearer checking through AuthSettings; no authorization
        # server or metadata routes are mounted since resource_server_url is None.
        auth = AuthSettings(issuer_url=AnyHttpUrl(f"http://127.0.0.1:{port or 1}"), resource_server_url=None)
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        transport_security=security_settings(host, extra_hosts),
        host=host,
        auth=auth,
        token_verifier=verifier,
        max_request_body_size=max_request_body_size,
        session_idle_timeout=session_idle_timeout,
        max_sessions=max_sessions,
        json_response=json_response,
        custom_starlette_routes=oauth.routes() if oauth is not None else None,
        # Resumable streams: a client that lost its GET stream reconnects with Last-Event-ID and gets
        # what it missed (bounded), instead of the HTTP 500 the SDK answers without a store. Each
        # session gets a store of its own below; this one only switches resumability on.
        event_store=BoundedEventStore(max_streams=1),
    )
    give_sessions_event_stores(
        server.session_manager,
        lambda listening: BoundedEventStore(
            per_stream=SESSION_EVENTS_PER_STREAM,
            max_streams=SESSION_STREAMS,
            max_bytes=SESSION_BYTES,
            keep_responses=not json_response,
            listening=listening,
        ),
    )
    admission: ASGIApp = EvictingAdmission(app, server.session_manager, path=MCP_PATH, token=token)
    if oauth is not None:
        # Inside the gate: a request refused 401/403 never reaches admission, so it opens and evicts nothing.
        admission = oauth.wrap(admission)
    return StreamGuard(admission, path=MCP_PATH, budget=streams if streams is not None else StreamBudget())


KEEP_ALIVE_SECONDS = 30
"""How long an idle HTTP connection stays open for the client's next request."""


def bind_socket(host: str, port: int) -> socket.socket:
    """Bind and listen before uvicorn starts, so a busy port fails in the caller's thread."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    # proto must say TCP: asyncio sets TCP_NODELAY on accepted connections only
    # then, and without it Nagle holds the SSE answer's last write until the
    # client's delayed ACK, 40 ms per read (bench/analysis.md).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise OSError(exc.errno, f"Port {port} on {host} is already in use") from exc
        raise OSError(exc.errno, f"Cannot listen on {host}:{port}: {exc.strerror}") from exc
    return sock


def endpoint_url(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"http://{shown}:{port}{MCP_PATH}"


async def serve_uvicorn(
    app: Any,
    sock: socket.socket,
    *,
    on_started: Callable[[], None],
    stopper: Callable[[uvicorn.Server], None],
    graceful_timeout: int = 2,
) -> bool:
    """Run uvicorn on an already-listening socket until told to exit; False if it never started.

    `on_started` fires once the app's lifespan (the SDK session manager) is up.
    """
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=graceful_timeout,
        # Longer than common clients' pool expiry (httpx: 5 s, uvicorn's own
        # default): with equal values a request can race the server's close
        # of an idle connection and fail with a read error (bench/analysis.md).
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        ws="none",
    )
    server = uvicorn.Server(config)
    stopper(server)

    started = False

    async def watch() -> None:
        nonlocal started
        while not server.started:
            await asyncio.sleep(0.01)
        started = True
        on_started()

    watcher = asyncio.create_task(watch())
    try:
        await server.serve(sockets=[sock])
    finally:
        watcher.cancel()
    return started
