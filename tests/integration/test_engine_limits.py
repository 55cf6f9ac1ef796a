"""Issue 10, points 6, 7, 9, 10: template values, URI and subscription limits, session cap, empty token."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from engine_support import MODES, connect, settle_legacy, wait_for
from mcp.shared.exceptions import MCPError

from resources_qt import Resource, Resources
from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project
from resources_qt.server import ResourceServer

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


def _echo(uri: str, params: dict[str, Any]) -> str:
    return repr(sorted(params.items()))


def _catalogue() -> Resources:
    resources = Resources()
    resources.add_resource(Resource(name="file", uri_template="files://{name}", reader=_echo))
    resources.add_resource(Resource(name="tree", uri_template="tree://{+path}", reader=_echo))
    resources.add_resource(Resource(name="search", uri_template="search://q{?text}", reader=_echo))
    resources.add_resource(
        Resource(name="raw", uri_template="raw://{+path}", reader=_echo, unchecked_values=True)
    )
    resources.add_resource(Resource(name="plain", uri="plain://x", reader=lambda uri: "x"))
    return resources


@pytest.fixture
def limited() -> Iterator[ResourceServer]:
    server = ResourceServer(
        _catalogue(), name="limits", version="1", max_subscriptions=3, max_uri_length=512, max_sessions=3
    )
    server.enable_resource_subscriptions = True
    server.enable_resource_notifications = True
    server.start_http(port=0)
    yield server
    server.close()


# -- 6. template values -------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("uri", "variable", "why"),
    [
        ("files://..%2F..%2Fetc%2Fpasswd", "name", "'/'"),
        ("files://%2Fetc%2Fpasswd", "name", "'/'"),
        ("files://a%00b", "name", "NUL"),
        ("files://..", "name", "'..'"),
        ("tree://a/../../etc/passwd", "path", "'..'"),
        ("tree://a%00/b", "path", "NUL"),
        ("tree:///etc/passwd", "path", "absolute"),
        ("tree://C:%5Cwindows", "path", "absolute"),
        ("search://q?text=..%2F..", "text", "'..'"),
    ],
)
async def test_unsafe_template_values_are_refused_naming_the_variable(
    limited: ResourceServer, mode: str, uri: str, variable: str, why: str
) -> None:
    async with connect(limited.url, mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
    assert caught.value.code == -32602
    assert f"variable {variable!r}" in caught.value.message and why in caught.value.message


@pytest.mark.parametrize("mode", MODES)
async def test_safe_values_and_opted_out_templates_still_read(limited: ResourceServer, mode: str) -> None:
    async with connect(limited.url, mode) as client:
        ok = {
            "files://report..v2": "[('name', 'report..v2')]",
            "tree://docs/a/b.txt": "[('path', 'docs/a/b.txt')]",
            "raw://../etc/passwd": "[('path', '../etc/passwd')]",
            "raw:///etc/passwd": "[('path', '/etc/passwd')]",
        }
        for uri, expected in ok.items():
            result = await client.read_resource(uri)
            assert result.contents[0].text == expected  # type: ignore[union-attr]


# -- 7. URI length and subscriptions -------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_a_uri_over_the_limit_is_refused_everywhere(limited: ResourceServer, mode: str) -> None:
    long_uri = "files://" + "a" * 600
    async with connect(limited.url, mode) as client:
        with pytest.raises(MCPError, match="max_uri_length") as read:
            await client.read_resource(long_uri)
        if mode == "legacy":
            with pytest.raises(MCPError, match="max_uri_length") as sub:
                await client.subscribe_resource(long_uri)
            assert sub.value.code == -32602
    assert read.value.code == -32602
    assert long_uri not in read.value.message


async def test_subscriptions_per_session_are_capped_and_released(limited: ResourceServer) -> None:
    async with connect(limited.url, "legacy") as client:
        for i in range(3):
            await client.subscribe_resource(f"files://n{i}")
        await client.subscribe_resource("files://n0")  # held already: not counted twice
        with pytest.raises(MCPError, match="max_subscriptions") as caught:
            await client.subscribe_resource("files://n3")
        assert caught.value.code == -32602
        await client.unsubscribe_resource("files://n0")
        await client.subscribe_resource("files://n3")
        (session,) = limited.sessions()
        assert session.subscriptions == {"files://n1", "files://n2", "files://n3"}
    # Held memory goes with the session.
    await wait_for(lambda: not limited.sessions() and not limited.subscribed_uris())


# -- 10. session cap with eviction ---------------------------------------------------------


def _open_raw_session(url: str) -> str:
    with httpx.Client(timeout=10) as http:
        response = http.post(url, json=INIT, headers=HEADERS)
    assert response.status_code == 200, response.text
    return response.headers["mcp-session-id"]


def _ping(url: str, session_id: str) -> int:
    ping = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
    headers = {**HEADERS, "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
    with httpx.Client(timeout=10) as http:
        return http.post(url, json=ping, headers=headers).status_code


async def test_a_newcomer_evicts_the_longest_idle_session_without_a_stream(limited: ResourceServer) -> None:
    url = limited.url
    assert url is not None
    async with connect(url, "legacy") as streaming:
        await settle_legacy(streaming, limited)  # its GET stream is open: never evicted
        oldest = _open_raw_session(url)
        newer = _open_raw_session(url)
        assert _ping(url, newer) == 200  # touched: now oldest is the longest idle
        newcomer = _open_raw_session(url)  # a fourth session, over max_sessions=3
        assert _ping(url, oldest) == 404
        assert _ping(url, newer) == 200 and _ping(url, newcomer) == 200
        result = await streaming.read_resource("plain://x")
        assert result.contents[0].text == "x"  # type: ignore[union-attr]


# -- 9. empty token ------------------------------------------------------------------------


def test_an_empty_token_is_refused(tmp_path: Path) -> None:
    spec = ResourceSpec(name="g", uri="demo://g", reader="def read(uri, params):\n    return 'g'\n")
    path = save_project(Project(server=ServerSettings(name="t", workers=1), resources=[spec]), tmp_path / "p.toml")
    for args, env in (
        (["--token", ""], ENV),
        (["--token", "  "], ENV),
        ([], {**ENV, "RESOURCE_STUDIO_TOKEN": ""}),
    ):
        result = subprocess.run(
            [sys.executable, "-m", "studio", "serve", str(path), "--http", "0", *args],
            capture_output=True, text=True, check=False, env=env, cwd=ROOT, timeout=60,
        )
        assert result.returncode == 2
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "empty" in lines[0], result.stderr
