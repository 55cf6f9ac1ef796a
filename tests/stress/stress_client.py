"""A small raw Streamable HTTP client for the stress tests: legacy sessions, GET streams, hard timeouts."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections import Counter
from typing import Any

import httpx

PROTOCOL = "2025-11-25"
TIMEOUT = 20.0
UPDATED = "notifications/resources/updated"

_LINES = re.compile(r"\r\n|\r|\n")  # SSE line ends only; str.splitlines also splits on U+0085 etc.


class RpcError(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = error.get("code")


def parse(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC answer in a JSON or SSE body."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        found: dict[str, Any] | None = None
        for line in _LINES.split(response.text):
            if line.startswith("data:") and line[5:].strip():
                message = json.loads(line[5:])
                if "id" in message:
                    found = message
        if found is None:
            raise RuntimeError(f"no answer in the event stream: {response.text[:200]!r}")
        return found
    return response.json()  # type: ignore[no-any-return]


class Session:
    """One handshake-era session; `stream()` opens its GET channel and counts the updates it carries."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.id: str | None = None
        self.updates: Counter[str] = Counter()
        self._ids = itertools.count(1)
        self._stream_task: asyncio.Task[None] | None = None

    def headers(self, accept: str = "application/json, text/event-stream") -> dict[str, str]:
        headers = {"accept": accept, "content-type": "application/json", "mcp-protocol-version": PROTOCOL}
        if self.id:
            headers["mcp-session-id"] = self.id
        return headers

    async def post(self, body: dict[str, Any]) -> httpx.Response:
        return await asyncio.wait_for(self.http.post(self.url, json=body, headers=self.headers()), TIMEOUT)

    async def initialize(self, name: str = "stress") -> None:
        response = await self.post({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": name, "version": "1"}},
        })
        response.raise_for_status()
        self.id = response.headers["mcp-session-id"]
        (await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})).raise_for_status()

    async def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        if params is not None:
            body["params"] = params
        message = parse(await self.post(body))
        if "error" in message:
            raise RpcError(message["error"])
        return message["result"]  # type: ignore[no-any-return]

    async def stream(self) -> None:
        """Open the GET notification channel; returns once the server accepted it."""
        opened = asyncio.Event()

        async def listen() -> None:
            async with self.http.stream("GET", self.url, headers=self.headers("text/event-stream")) as response:
                response.raise_for_status()
                opened.set()
                async for line in response.aiter_lines():
                    if line.startswith("data:") and line[5:].strip():
                        message = json.loads(line[5:])
                        if message.get("method") == UPDATED:
                            self.updates[message["params"]["uri"]] += 1

        self._stream_task = asyncio.create_task(listen())
        waiter = asyncio.create_task(opened.wait())
        done, _ = await asyncio.wait({waiter, self._stream_task}, timeout=TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
        if waiter not in done:
            waiter.cancel()
            if self._stream_task.done():
                self._stream_task.result()
            raise TimeoutError("the GET stream did not open")

    async def close(self) -> None:
        """End the session politely (DELETE) and stop listening."""
        if self._stream_task is not None:
            self._stream_task.cancel()
            await asyncio.gather(self._stream_task, return_exceptions=True)
        if self.id:
            await asyncio.wait_for(self.http.delete(self.url, headers=self.headers()), TIMEOUT)
