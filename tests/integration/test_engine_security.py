"""HTTP hosting: DNS-rebinding checks, bearer tokens, bind rules, body limit, start/stop and switches."""

from __future__ import annotations

import socket
from typing import Any

import httpx
import httpx2
import mcp_types as types
import pytest
from engine_support import MODES, build_catalogue, connect, settle_legacy
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from resources_qt import Resources
from resources_qt.notifications import ListChanged, Updated
from resources_qt.server import ResourceServer

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def quiet_server() -> Any:
    server = ResourceServer(build_catalogue(), name="plain", version="1", max_request_body_size=64 * 1024)
    yield server
    server.close()


def test_foreign_host_and_origin_are_rejected(live_server: ResourceServer) -> None:
    assert live_server.url is not None
    with httpx.Client(timeout=10) as http:
        ok = http.post(live_server.url, json=INIT, headers=HEADERS)
        foreign_host = http.post(live_server.url, json=INIT, headers={**HEADERS, "Host": "evil.example:80"})
        foreign_origin = http.post(live_server.url, json=INIT, headers={**HEADERS, "Origin": "http://evil.example"})
        modern_foreign = http.post(
            live_server.url,
            json={"jsonrpc": "2.0", "id": 2, "method": "resources/list", "params": {}},
            headers={**HEADERS, "Host": "evil.example", "mcp-protocol-version": "2026-07-28"},
        )
    assert ok.status_code == 200
    assert 400 <= foreign_host.status_code < 500
    assert 400 <= foreign_origin.status_code < 500
    assert 400 <= modern_foreign.status_code < 500


def test_request_body_limit(quiet_server: ResourceServer) -> None:
    url = quiet_server.start_http(port=0)
    big = dict(INIT, params=dict(INIT["params"], padding="x" * 100_000))
    with httpx.Client(timeout=10) as http:
        response = http.post(url, json=big, headers=HEADERS)
    assert response.status_code == 413


@pytest.mark.parametrize("mode", MODES)
async def test_token_is_enforced(quiet_server: ResourceServer, mode: str) -> None:
    url = quiet_server.start_http(port=0, token="s3cret")
    async with httpx.AsyncClient(timeout=10) as http:
        missing = await http.post(url, json=INIT, headers=HEADERS)
        wrong = await http.post(url, json=INIT, headers={**HEADERS, "Authorization": "Bearer nope"})
    assert missing.status_code == 401 and wrong.status_code == 401
    async with (
        httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret"}, timeout=10) as authed,
        connect(streamable_http_client(url, http_client=authed), mode) as client,
    ):
        listed = await client.list_resources(cursor=None, cache_mode="bypass")
    assert listed.resources


def test_non_loopback_bind_needs_a_token(quiet_server: ResourceServer) -> None:
    with pytest.raises(ValueError, match="without a token"):
        quiet_server.start_http("0.0.0.0", 0)
    assert not quiet_server.is_running


def test_busy_port_is_a_clear_error(quiet_server: ResourceServer) -> None:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen(1)
        port = blocker.getsockname()[1]
        with pytest.raises(OSError, match="already in use"):
            quiet_server.start_http(port=port)
    assert not quiet_server.is_running


async def test_stop_frees_the_port_and_restart_works(quiet_server: ResourceServer) -> None:
    url = quiet_server.start_http(port=0)
    port = quiet_server.port
    async with connect(url, "legacy") as client:
        await client.list_resources(cursor=None)
    quiet_server.stop()
    assert not quiet_server.is_running and quiet_server.url is None
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))  # free again
    url2 = quiet_server.start_http(port=port)
    async with connect(url2, "2026-07-28") as client:
        assert (await client.read_resource("config://app/settings", cache_mode="bypass")).contents


async def test_stop_with_clients_still_connected(quiet_server: ResourceServer) -> None:
    quiet_server.enable_resource_subscriptions = True
    url = quiet_server.start_http(port=0)
    async with (
        connect(url, "2026-07-28") as modern,
        modern.listen(resource_subscriptions=["config://app/settings"]) as sub,
    ):
        async with connect(url, "legacy") as legacy:
            await legacy.subscribe_resource("config://app/settings")
            assert len(quiet_server.sessions()) == 2
            quiet_server.stop()
            assert quiet_server.sessions() == []
        events = [event async for event in sub]  # a graceful close ends the stream
    assert events == []


@pytest.mark.parametrize("mode", MODES)
async def test_switched_off_capabilities(quiet_server: ResourceServer, mode: str) -> None:
    url = quiet_server.start_http(port=0)
    seen: list[Any] = []

    async def handler(message: Any) -> None:
        seen.append(message)

    async with connect(url, mode, message_handler=handler) as client:
        if mode == "legacy":
            caps = client.server_capabilities.resources
            assert caps is not None and not caps.subscribe and not caps.list_changed
            assert client.server_capabilities.completions is not None
            with pytest.raises(MCPError) as info:
                await client.subscribe_resource("config://app/settings")
            assert info.value.code == -32601
            await settle_legacy(client, quiet_server)
        else:
            async with connect(url, "auto") as probing:  # server/discover
                assert probing.protocol_version == "2026-07-28"
                caps = probing.server_capabilities.resources
                assert caps is not None and not caps.subscribe and not caps.list_changed
            with pytest.raises(MCPError):
                async with client.listen(resources_list_changed=True):
                    pass
        quiet_server.resources.register_direct_resource("n", "n://1", "", "text/plain", lambda uri: "")
        await quiet_server.notify(ListChanged())
        await quiet_server.notify(Updated("config://app/settings"))
        await client.list_resources(cursor=None, cache_mode="bypass")
    assert not [m for m in seen if isinstance(m, (types.ResourceListChangedNotification,
                                                     types.ResourceUpdatedNotification))]


async def test_sends_are_no_ops_while_stopped() -> None:
    server = ResourceServer(Resources(), name="idle", version="1")
    server.enable_resource_notifications = server.enable_resource_subscriptions = True
    await server.notify(ListChanged())
    await server.notify(Updated("x://1"))
    await server.notify(Updated("x://1", session_id="nobody"))
    assert server.sessions() == []


def test_public_bind_with_token_still_checks_the_host() -> None:
    server = ResourceServer(build_catalogue(), name="public", version="1")
    try:
        url = server.start_http("0.0.0.0", 0, token="t0k", allowed_hosts=["studio.lan"])
        assert url.startswith("http://127.0.0.1:")
        auth = {**HEADERS, "Authorization": "Bearer t0k"}
        with httpx.Client(timeout=10) as http:
            local = http.post(url, json=INIT, headers=auth)
            named = http.post(url, json=INIT, headers={**auth, "Host": f"studio.lan:{server.port}"})
            foreign = http.post(url, json=INIT, headers={**auth, "Host": "evil.example"})
    finally:
        server.close()
    assert local.status_code == 200 and named.status_code == 200
    assert 400 <= foreign.status_code < 500
