"""The engine with [server.auth] in process: who called reaches sessions and traffic (never the token); bind rules."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import pytest
from engine_support import MODES, connect
from helpers.auth_server import AuthServer, running_auth_server
from mcp.client.streamable_http import streamable_http_client

from resources_qt import Resources
from resources_qt.project import AuthConfig
from resources_qt.server import ResourceServer
from resources_qt.server.events import ServerEvent, SessionOpened, Traffic

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

RESOURCE = "https://mcp.example.com/mcp"


@pytest.fixture
def issuer() -> Iterator[AuthServer]:
    with running_auth_server("ES256") as server:
        yield server


def _server(issuer: AuthServer) -> ResourceServer:
    resources = Resources()
    resources.register_direct_resource("status", "desk://status", "Status", "text/plain", lambda uri: "up")
    resources.register_direct_resource("vip", "crm://vip", "VIP", "text/plain", lambda uri: "vip")
    server = ResourceServer(resources, name="auth", version="1")
    server.enable_resource_subscriptions = True
    server.access.config = AuthConfig(issuer=issuer.issuer, resource=RESOURCE, jwks_uri=issuer.jwks_uri)
    server.access.scopes.replace({"vip": ["crm:admin"]})
    return server


@pytest.mark.parametrize("mode", MODES)
async def test_sessions_and_traffic_name_the_subject_and_client_never_the_token(issuer: AuthServer, mode: str) -> None:
    server = _server(issuer)
    events: list[ServerEvent] = []
    server.add_observer(events.append)
    token = issuer.token(audience=RESOURCE, scopes="crm:admin", subject="agent-7", client_id="support-bot")
    try:
        url = server.start_http(port=0)
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=20) as http,
            connect(streamable_http_client(url, http_client=http), mode) as client,
        ):
            read = await client.read_resource("crm://vip", cache_mode="bypass")
            if mode != "legacy":
                async with client.listen(resource_subscriptions=["crm://vip"]):
                    listening = [s for s in server.sessions() if s.kind == "listen"]
            else:
                listening = server.sessions()
    finally:
        server.close()
    assert read.contents[0].text == "vip"
    assert [(s.subject, s.client_id) for s in listening] == [("agent-7", "support-bot")]
    if mode == "legacy":
        opened = [e.info for e in events if isinstance(e, SessionOpened)]
        assert [(i.subject, i.client_id) for i in opened] == [("agent-7", "support-bot")]
    reads = [e for e in events if isinstance(e, Traffic) and e.method == "resources/read"]
    assert reads and {(e.subject, e.client_id) for e in reads} == {("agent-7", "support-bot")}
    assert not any(token in repr(event) for event in events)


def test_a_static_token_beside_server_auth_is_refused(issuer: AuthServer) -> None:
    server = _server(issuer)
    try:
        with pytest.raises(ValueError, match=r"\[server.auth\].*static bearer token"):
            server.start_http(port=0, token="s3cret")
        assert not server.is_running
    finally:
        server.close()


def test_server_auth_serves_beyond_loopback_and_accepts_the_resources_host(issuer: AuthServer) -> None:
    server = _server(issuer)
    try:
        url = server.start_http("0.0.0.0", 0)
        token = issuer.token(audience=RESOURCE, scopes="")
        headers: dict[str, Any] = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                                   "Authorization": f"Bearer {token}", "Host": "mcp.example.com"}
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
        ok = httpx.post(url, json=init, headers=headers, timeout=10)
        foreign = httpx.post(url, json=init, headers={**headers, "Host": "evil.example.net"}, timeout=10)
    finally:
        server.close()
    assert ok.status_code == 200 and foreign.status_code == 421
