"""A fleet for bus tests: `serve --bus` replicas as real processes, and SDK subscribers recording what arrives."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated

from resources_qt.bus.events import Updated
from resources_qt.bus.publish import publish_once

__all__ = ["ROOT", "Replica", "Subscriber", "numsub", "until"]

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 20.0
_numbers = itertools.count()
_SERVING = re.compile(r"Serving .* at (http://\S+/mcp)")


async def until(predicate: Callable[[], bool], timeout: float = TIMEOUT, what: str = "condition") -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{what} not reached in {timeout:.0f} s")
        await asyncio.sleep(0.02)


async def numsub(url: str, channel: str) -> int:
    """How many connections Redis has subscribed to `channel` (every replica's bus is one)."""
    import redis.asyncio

    client = redis.asyncio.from_url(url)
    try:
        counts = await client.pubsub_numsub(channel)
    finally:
        await client.aclose()
    return int(counts[0][1]) if counts else 0


class Replica:
    """One `resource-studio serve` process; stderr goes to a file the test can read."""

    def __init__(self, project: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.project = project
        self.log = project.with_name(f"{project.stem}-{next(_numbers)}.log")  # replicas may share a project
        environment = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        environment.pop("RESOURCE_STUDIO_BUS", None)
        environment.update(env or {})
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "studio", "serve", str(project), "--http", "127.0.0.1:0", *args],
                stdout=subprocess.DEVNULL, stderr=log, env=environment, cwd=ROOT,
            )
        self.url = ""

    async def started(self) -> str:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            found = _SERVING.search(self.stderr())
            if found:
                self.url = found.group(1)
                return self.url
            if self.process.poll() is not None:
                raise AssertionError(f"serve exited with {self.process.returncode}: {self.stderr()}")
            await asyncio.sleep(0.05)
        raise AssertionError(f"serve did not start: {self.stderr()}")

    def stderr(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                return self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(30)
                raise AssertionError(f"serve ignored SIGTERM for 30 s:\n{self.stderr()}") from None
        return self.process.returncode


class Subscriber:
    """One SDK client of one replica, recording ("updated", uri) / ("list_changed", "") in arrival order.

    `legacy`: a handshake-era session subscribed with resources/subscribe;
    otherwise a 2026-07-28 `subscriptions/listen` stream.
    """

    def __init__(self, name: str, url: str, *, legacy: bool, uris: list[str]) -> None:
        self.name = name
        self.url = url
        self.legacy = legacy
        self.uris = uris
        self.prime = f"prime://{name}"
        self.received: list[tuple[str, str]] = []
        self.primed = False
        self.session_id: str | None = None
        self.client: Client | None = None

    def record(self, kind: str, uri: str) -> None:
        if uri == self.prime:
            self.primed = True
        else:
            self.received.append((kind, uri))

    async def _on_message(self, message: Any) -> None:
        if not self.legacy:
            return  # the SDK tees listen-stream frames here too; the stream's own events are counted
        if isinstance(message, types.ResourceUpdatedNotification):
            self.record("updated", str(message.params.uri))
        elif isinstance(message, types.ResourceListChangedNotification):
            self.record("list_changed", "")

    def _on_response(self, response: Any) -> None:
        found = response.headers.get("mcp-session-id")
        if found:
            self.session_id = found

    @asynccontextmanager
    async def running(self, bus_url: str, channel: str) -> AsyncIterator[Subscriber]:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        async def hook(response: Any) -> None:
            self._on_response(response)

        async with AsyncExitStack() as stack:
            http = await stack.enter_async_context(httpx2.AsyncClient(timeout=TIMEOUT,
                                                                      event_hooks={"response": [hook]}))
            client = Client(streamable_http_client(self.url, http_client=http),
                            mode="legacy" if self.legacy else "2026-07-28", read_timeout_seconds=TIMEOUT,
                            message_handler=self._on_message)
            await stack.enter_async_context(client)
            self.client = client
            if self.legacy:
                for uri in [*self.uris, self.prime]:
                    await client.subscribe_resource(uri)
                await self._settle(bus_url, channel)
                yield self
            else:
                sub = await stack.enter_async_context(
                    client.listen(resources_list_changed=True, resource_subscriptions=self.uris)
                )
                task = asyncio.create_task(self._consume(sub))
                try:
                    yield self
                finally:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await task

    async def _consume(self, sub: Any) -> None:
        async for event in sub:
            if isinstance(event, ResourceUpdated):
                self.record("updated", event.uri)
            elif isinstance(event, ResourcesListChanged):
                self.record("list_changed", "")

    async def _settle(self, bus_url: str, channel: str) -> None:
        # The SDK opens a legacy client's GET stream in the background after the
        # handshake and drops notifications sent before it exists; a priming
        # `updated` for a URI only this client holds, sent over the bus until it
        # arrives, proves the stream is up (and the bus with it).
        deadline = asyncio.get_running_loop().time() + TIMEOUT
        while not self.primed:
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"{self.name}: the notification stream never opened")
            await publish_once(bus_url, channel=channel, events=[Updated(self.prime)])
            with contextlib.suppress(AssertionError):
                await until(lambda: self.primed, timeout=0.2)
