"""`serve` proxying imported resources from a declared upstream: reads, errors in the era's terms, timeouts,
`updated` forwarded, and the upstream going away and coming back (real processes, a real SDK client)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from helpers.remote_servers import free_port, serve_http
from mcp import Client
from mcp.shared.exceptions import MCPError

from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project
from resources_qt.project.model import WatchSpec
from resources_qt.project.upstreams import UpstreamSpec

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

DATA = "demo://data"
ITEMS = "demo://items/{id}"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _upstream_project(folder: Path) -> Path:
    (folder / "data.txt").write_text("upstream data")
    return save_project(Project(
        # The upstream's own reader timeout outlasts the proxy's: the slow read is the proxy's timeout to answer.
        server=ServerSettings(name="Upstream", notifications=True, subscriptions=True, workers=1, reader_timeout=40.0),
        resources=[
            ResourceSpec(name="data", uri=DATA, mime_type="text/plain", watch=WatchSpec(files=["data.txt"]),
                         reader="def read(uri, params):\n    return (PROJECT_DIR / 'data.txt').read_text()\n"),
            ResourceSpec(name="item", uri_template=ITEMS, mime_type="text/plain",
                         reader="def read(uri, params):\n    if params['id'] == '0':\n"
                                "        raise NotFound('no item 0')\n"
                                "    if params['id'] == 'slow':\n        import time\n        time.sleep(12)\n"
                                "    return 'item ' + params['id']\n"),
        ],
    ), folder / "upstream.toml")  # fmt: skip


def _proxy_project(folder: Path, url: str, *, timeout: float = 8.0) -> Path:
    # 8 s: under CI load a first connection (initialize, then the read) has taken over 3 s.
    return save_project(Project(
        server=ServerSettings(name="Proxy", notifications=True, subscriptions=True, workers=1),
        upstreams=[UpstreamSpec(name="up", url=url, timeout=timeout)],
        resources=[ResourceSpec(name="data", uri=DATA, mime_type="text/plain", upstream="up"),
                   ResourceSpec(name="item", uri_template=ITEMS, mime_type="text/plain", upstream="up")],
    ), folder / "proxy.toml")  # fmt: skip


@contextlib.asynccontextmanager
async def _client(url: str, mode: str, received: list[str] | None = None) -> AsyncIterator[Client]:
    async def on_message(message: Any) -> None:
        if received is not None and isinstance(message, types.ResourceUpdatedNotification):
            received.append(str(message.params.uri))

    async with Client(url, mode=mode, read_timeout_seconds=30, message_handler=on_message, cache=None) as client:
        yield client


async def _text(client: Client, uri: str) -> str:
    result = await client.read_resource(uri, cache_mode="bypass")
    content = result.contents[0]
    assert isinstance(content, types.TextResourceContents)
    return content.text


@pytest.mark.parametrize(("mode", "not_found"), [("legacy", -32002), ("2026-07-28", -32602)])
async def test_reads_go_through_the_upstream_with_its_errors_in_the_era_s_terms(tmp_path: Path, mode: str,
                                                                                not_found: int) -> None:  # fmt: skip
    (tmp_path / "up").mkdir()
    with serve_http(_upstream_project(tmp_path / "up")) as upstream, \
            serve_http(_proxy_project(tmp_path, upstream.url)) as proxy:  # fmt: skip
        async with _client(proxy.url, mode) as client:
            assert await _text(client, DATA) == "upstream data"
            assert await _text(client, "demo://items/7") == "item 7"
            with pytest.raises(MCPError) as missing:
                await client.read_resource("demo://items/0", cache_mode="bypass")
            assert missing.value.code == not_found and "no item 0" in missing.value.message


async def test_an_upstream_read_past_its_timeout_is_an_error_naming_the_upstream(tmp_path: Path) -> None:
    # One era: the timeout is answered as -32000 in both, and waiting it out twice cost CI 8 s.
    (tmp_path / "up").mkdir()
    with serve_http(_upstream_project(tmp_path / "up")) as upstream, \
            serve_http(_proxy_project(tmp_path, upstream.url)) as proxy:  # fmt: skip
        async with _client(proxy.url, "2026-07-28") as client:
            assert await _text(client, "demo://items/7") == "item 7"
            with pytest.raises(MCPError) as slow:
                await client.read_resource("demo://items/slow", cache_mode="bypass")
            assert slow.value.code == -32000 and "upstream 'up' did not answer in 8 s" in slow.value.message


async def test_the_upstream_going_away_and_coming_back(tmp_path: Path) -> None:
    (tmp_path / "up").mkdir()
    upstream_path = _upstream_project(tmp_path / "up")
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with serve_http(_proxy_project(tmp_path, url)) as proxy:
        async with _client(proxy.url, "2026-07-28") as client:
            with pytest.raises(MCPError) as down:
                await client.read_resource(DATA, cache_mode="bypass")
            assert down.value.code == -32000 and "upstream 'up'" in down.value.message
            with serve_http(upstream_path, port=port):
                assert await _text(client, DATA) == "upstream data"
            with pytest.raises(MCPError) as gone:
                await client.read_resource(DATA, cache_mode="bypass")
            assert gone.value.code == -32000 and "upstream 'up'" in gone.value.message
            with serve_http(upstream_path, port=port):
                assert await _text(client, DATA) == "upstream data"


async def test_updated_from_the_upstream_reaches_subscribers_here(tmp_path: Path) -> None:
    (tmp_path / "up").mkdir()
    upstream_path = _upstream_project(tmp_path / "up")
    received: list[str] = []
    with serve_http(upstream_path) as upstream, serve_http(_proxy_project(tmp_path, upstream.url)) as proxy:
        async with _client(proxy.url, "legacy", received) as client:
            await client.session.send_request(
                types.SubscribeRequest(params=types.SubscribeRequestParams(uri=DATA)), types.EmptyResult
            )
            assert await _text(client, DATA) == "upstream data"
            # The upstream's watch thread and the proxy's upstream subscription come up in the background.
            for n in range(300):
                (tmp_path / "up" / "data.txt").write_text(f"changed {n}")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(_until(lambda: DATA in received), 0.5)
                    break
            assert DATA in received
            assert (await _text(client, DATA)).startswith("changed")


async def _until(predicate: Any) -> None:
    while not predicate():
        await asyncio.sleep(0.02)


async def test_serve_watch_connects_an_upstream_the_edit_declares(tmp_path: Path) -> None:
    """An import saved while `serve --watch` runs is proxied at once (it answered "restart the server")."""
    (tmp_path / "up").mkdir()
    local = ResourceSpec(name="local", uri="demo://local", mime_type="text/plain",
                         reader="def read(uri, params):\n    return 'here'\n")  # fmt: skip
    path = save_project(Project(server=ServerSettings(name="Proxy", workers=1), resources=[local]),
                        tmp_path / "proxy.toml")  # fmt: skip
    with serve_http(_upstream_project(tmp_path / "up")) as upstream, serve_http(path, "--watch") as proxy:
        async with _client(proxy.url, "2026-07-28") as client:
            assert await _text(client, "demo://local") == "here"
            save_project(Project(
                server=ServerSettings(name="Proxy", workers=1),
                upstreams=[UpstreamSpec(name="up", url=upstream.url, timeout=8.0)],
                resources=[local, ResourceSpec(name="data", uri=DATA, mime_type="text/plain", upstream="up")],
            ), path)  # fmt: skip
            for _ in range(600):  # the watcher settles the save, then reloads
                listed = await client.list_resources()
                if any(str(r.uri) == DATA for r in listed.resources):
                    break
                await asyncio.sleep(0.05)
            assert await _text(client, DATA) == "upstream data"


async def test_updated_of_an_imported_templates_instance_reaches_subscribers_here(tmp_path: Path) -> None:
    """Subscribing here to an instance of an imported template subscribes to it upstream."""
    up = tmp_path / "up"
    (up / "docs").mkdir(parents=True)
    (up / "docs" / "a.txt").write_text("first")
    upstream_path = save_project(Project(
        server=ServerSettings(name="Upstream", notifications=True, subscriptions=True, workers=1),
        resources=[ResourceSpec(name="doc", uri_template="demo://docs/{name}", mime_type="text/plain",
                                watch=WatchSpec(files=["docs/*.txt"]),
                                reader="def read(uri, params):\n"
                                       "    return (PROJECT_DIR / 'docs' / (params['name'] + '.txt')).read_text()\n")],
    ), up / "upstream.toml")  # fmt: skip
    received: list[str] = []
    with serve_http(upstream_path) as upstream:
        proxy_path = save_project(Project(
            server=ServerSettings(name="Proxy", notifications=True, subscriptions=True, workers=1),
            upstreams=[UpstreamSpec(name="up", url=upstream.url, timeout=8.0)],
            resources=[ResourceSpec(name="doc", uri_template="demo://docs/{name}", mime_type="text/plain",
                                    upstream="up")],
        ), tmp_path / "proxy.toml")  # fmt: skip
        with serve_http(proxy_path) as proxy:
            async with _client(proxy.url, "legacy", received) as client:
                uri = "demo://docs/a"
                await client.session.send_request(
                    types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri)), types.EmptyResult
                )
                assert await _text(client, uri) == "first"
                # The proxy's upstream subscription and the upstream's watch come up in the background.
                for n in range(300):
                    (up / "docs" / "a.txt").write_text(f"changed {n}")
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(_until(lambda: uri in received), 0.5)
                        break
                assert uri in received
                assert (await _text(client, uri)).startswith("changed")
