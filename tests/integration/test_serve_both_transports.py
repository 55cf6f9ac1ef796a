"""`serve PROJECT --stdio --http`: one process serves its launching stdio client and HTTP clients at once."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import mcp_types as types
import pytest
from helpers.bus_fleet import ROOT, Subscriber, numsub, until
from helpers.redis_server import RedisServer, redis_server
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated

from resources_qt.bus.cli import notify_main
from resources_qt.bus.events import Updated
from resources_qt.bus.publish import publish_once
from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project
from resources_qt.project.model import WatchSpec

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

CHANNEL = "resource-studio:both"
GREETING = "demo://greeting"
DATA = "demo://data"
FENCES = [f"fence://{n}" for n in range(4)]
_SERVING = re.compile(r"Serving .* at (http://\S+/mcp)")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    directory = tmp_path / "redis"
    directory.mkdir()
    with redis_server(directory) as server:
        yield server


def _project(greeting: str = "hello") -> Project:
    return Project(
        server=ServerSettings(name="Both", version="1", notifications=True, subscriptions=True, workers=1),
        resources=[
            ResourceSpec(name="greeting", uri=GREETING, mime_type="text/plain",
                         reader=f"def read(uri, params):\n    return {greeting!r}\n"),
            ResourceSpec(name="data", uri=DATA, mime_type="text/plain", watch=WatchSpec(files=["data.txt"]),
                         reader="def read(uri, params):\n    return (PROJECT_DIR / 'data.txt').read_text()\n"),
        ],
    )  # fmt: skip


class _StdioRecorder:
    """The launching client, recording ("updated", uri) / ("list_changed", "") like the HTTP Subscriber."""

    def __init__(self, client: Client, *, legacy: bool) -> None:
        self.client = client
        self.legacy = legacy
        self.name = "stdio-legacy" if legacy else "stdio-listen"
        self.prime = f"prime://{self.name}"
        self.received: list[tuple[str, str]] = []
        self.primed = False

    def record(self, kind: str, uri: str) -> None:
        if uri == self.prime:
            self.primed = True
        else:
            self.received.append((kind, uri))

    async def on_message(self, message: Any) -> None:
        if not self.legacy:
            return  # the listen stream's own events are counted
        if isinstance(message, types.ResourceUpdatedNotification):
            self.record("updated", str(message.params.uri))
        elif isinstance(message, types.ResourceListChangedNotification):
            self.record("list_changed", "")

    async def consume(self, sub: Any) -> None:
        async for event in sub:
            if isinstance(event, ResourceUpdated):
                self.record("updated", event.uri)
            elif isinstance(event, ResourcesListChanged):
                self.record("list_changed", "")


@asynccontextmanager
async def _launch(project: Path, log: Path, redis: RedisServer, *, legacy: bool) -> AsyncIterator[Any]:
    env = {"PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "studio", "serve", str(project), "--stdio", "--http", "127.0.0.1:0", "--watch",
              "--bus", redis.url, "--bus-channel", CHANNEL],
        env=env, cwd=ROOT,
    )  # fmt: skip
    recorder: _StdioRecorder | None = None

    async def forward(message: Any) -> None:
        if recorder is not None:
            await recorder.on_message(message)

    with log.open("w") as errlog:
        client = Client(stdio_client(params, errlog=errlog), mode="legacy" if legacy else "2026-07-28",
                        read_timeout_seconds=20, message_handler=forward)  # fmt: skip
        async with AsyncExitStack() as stack:
            await stack.enter_async_context(client)
            recorder = _StdioRecorder(client, legacy=legacy)
            if legacy:
                for uri in [GREETING, DATA, *FENCES, recorder.prime]:
                    await client.subscribe_resource(uri)
            else:
                sub = await stack.enter_async_context(
                    client.listen(resources_list_changed=True, resource_subscriptions=[GREETING, DATA, *FENCES])
                )
                task = asyncio.create_task(recorder.consume(sub))
                stack.callback(task.cancel)
            yield recorder


async def _settle_stdio(recorder: _StdioRecorder, redis: RedisServer) -> None:
    # The process's bus subscription comes up in the background: prime until it delivers.
    deadline = asyncio.get_running_loop().time() + 20
    while recorder.legacy and not recorder.primed:
        assert asyncio.get_running_loop().time() < deadline, "the stdio client never got a bus notification"
        await publish_once(redis.url, channel=CHANNEL, events=[Updated(recorder.prime)])
        with contextlib.suppress(AssertionError):
            await until(lambda: recorder.primed, timeout=0.2)


# About 5 s each: one real `serve` process with a snippet worker, a redis-server, four changes fenced.
@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
async def test_stdio_and_http_clients_of_one_process_get_each_change_once(
    tmp_path: Path, redis: RedisServer, era: str
) -> None:
    legacy = era == "legacy"
    project = save_project(_project(), tmp_path / "both.toml")
    (tmp_path / "data.txt").write_text("version 0", encoding="utf-8")
    log = tmp_path / "serve.log"
    async with _launch(project, log, redis, legacy=legacy) as over_stdio:
        found = _SERVING.search(log.read_text())
        assert found, log.read_text()
        url = found.group(1)
        deadline = asyncio.get_running_loop().time() + 20
        while await numsub(redis.url, CHANNEL) < 1:
            assert asyncio.get_running_loop().time() < deadline, "serve never joined the bus"
            await asyncio.sleep(0.05)
        await _settle_stdio(over_stdio, redis)
        http = Subscriber(f"http-{era}", url, legacy=legacy, uris=[GREETING, DATA, *FENCES])
        async with http.running(redis.url, CHANNEL):
            assert over_stdio.client is not None
            for client in (over_stdio.client, http.client):
                assert client is not None
                read = await client.read_resource(GREETING, cache_mode="bypass")
                assert read.contents[0].text == "hello"
            subscribers: list[Any] = [over_stdio, http]
            expected: list[tuple[str, str]] = []

            async def step(entry: tuple[str, str]) -> None:
                expected.append(entry)
                await until(lambda: all(s.received[: len(expected)] == expected for s in subscribers),
                            what=f"{entry} at both")  # fmt: skip
                # A fence through Redis: a second delivery of `entry` would arrive before it.
                fence = FENCES[sum(1 for e in expected if e[1].startswith("fence://"))]
                await publish_once(redis.url, channel=CHANNEL, events=[Updated(fence)])
                expected.append(("updated", fence))
                await until(lambda: all(("updated", fence) in s.received for s in subscribers), what=fence)
                for subscriber in subscribers:
                    assert subscriber.received == expected, subscriber.name

            save_project(_project("bonjour"), project)  # --watch reloads: the changed reader is announced
            await step(("updated", GREETING))
            for client in (over_stdio.client, http.client):
                assert client is not None
                read = await client.read_resource(GREETING, cache_mode="bypass")
                assert read.contents[0].text == "bonjour"
            code = await asyncio.to_thread(notify_main, ["--bus", redis.url, "--channel", CHANNEL,
                                                         "updated", GREETING])  # fmt: skip
            assert code == 0
            await step(("updated", GREETING))
            code = await asyncio.to_thread(notify_main, ["--bus", redis.url, "--channel", CHANNEL, "list-changed"])
            assert code == 0
            await step(("list_changed", ""))

            # Live data: a watched file written reaches the subscribers of both transports. The
            # watcher may still be starting, so the write repeats until one is heard; then both
            # must have heard the same number (a fence first lets any in flight arrive).
            def heard(subscriber: Any) -> int:
                return sum(1 for entry in subscriber.received if entry == ("updated", DATA))

            deadline = asyncio.get_running_loop().time() + 20
            version = 0
            while not all(heard(s) for s in subscribers):
                assert asyncio.get_running_loop().time() < deadline, "the watched change never reached both"
                version += 1
                (project.parent / "data.txt").write_text(f"version {version}", encoding="utf-8")
                with contextlib.suppress(AssertionError):
                    await until(lambda: all(heard(s) for s in subscribers), timeout=0.5)
            await publish_once(redis.url, channel=CHANNEL, events=[Updated(FENCES[-1])])
            await until(lambda: all(("updated", FENCES[-1]) in s.received for s in subscribers), what="last fence")
            assert heard(over_stdio) == heard(http) >= 1
    # The launching client left: the process ended, HTTP with it.
    with pytest.raises(httpx.HTTPError):
        httpx.post(url, json={}, timeout=2)
    assert "Traceback" not in log.read_text()


# About 3 s: one real `serve` process (its snippet worker starts before stdio is served).
async def test_the_token_guards_http_only(tmp_path: Path) -> None:
    project = save_project(_project(), tmp_path / "both.toml")
    env = {"PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "studio", "serve", str(project), "--stdio", "--http", "127.0.0.1:0", "--token", "sesame"],
        env=env, cwd=ROOT,
    )  # fmt: skip
    log = tmp_path / "serve.log"
    with log.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="2026-07-28", read_timeout_seconds=20) as client:
            read = await client.read_resource(GREETING, cache_mode="bypass")  # stdio needs no token
            assert read.contents[0].text == "hello"
            found = _SERVING.search(log.read_text())
            assert found, log.read_text()
            headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28"}
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            async with httpx.AsyncClient(timeout=10) as http:
                refused = await http.post(found.group(1), json=ping, headers=headers)
            assert refused.status_code == 401
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            async with (
                httpx2.AsyncClient(headers={"Authorization": "Bearer sesame"}, timeout=10) as authorized,
                Client(streamable_http_client(found.group(1), http_client=authorized), mode="2026-07-28",
                       read_timeout_seconds=20) as over_http,
            ):  # fmt: skip
                read = await over_http.read_resource(GREETING, cache_mode="bypass")
            assert read.contents[0].text == "hello"
