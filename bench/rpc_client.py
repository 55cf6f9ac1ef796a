"""A minimal Streamable HTTP JSON-RPC client, identical for both servers: one initialize, then requests.

It talks raw httpx so the client's own cost is small and the same for both systems.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
from typing import Any

import httpx

PROTOCOL = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
REQUEST_TIMEOUT = 30.0

_LINES = re.compile(r"\r\n|\r|\n")  # SSE line ends only; str.splitlines also splits on U+0085 etc.


class RpcError(Exception):
    """A JSON-RPC error answer."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = error.get("code")
        self.error = error


def parse_body(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message in a JSON or SSE-framed answer (the last `data:` message with an id)."""
    ctype = response.headers.get("content-type", "")
    if ctype.startswith("text/event-stream"):
        found: dict[str, Any] | None = None
        for line in _LINES.split(response.text):
            if line.startswith("data:"):
                payload = line[5:].strip()
                if payload:
                    message = json.loads(payload)
                    if "id" in message:
                        found = message
        if found is None:
            raise RuntimeError(f"no JSON-RPC response in the event stream: {response.text[:200]!r}")
        return found
    return response.json()  # type: ignore[no-any-return]


class RpcSession:
    """One legacy (initialize-handshake) session over a shared httpx client."""

    def __init__(self, client: httpx.AsyncClient, url: str) -> None:
        self.client = client
        self.url = url
        self.session_id: str | None = None
        self._ids = itertools.count(1)

    def _headers(self) -> dict[str, str]:
        headers = {"accept": ACCEPT, "content-type": "application/json", "mcp-protocol-version": PROTOCOL}
        if self.session_id:
            headers["mcp-session-id"] = self.session_id
        return headers

    async def initialize(self, name: str = "bench") -> dict[str, Any]:
        body = {
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": name, "version": "1"}},
        }
        response = await asyncio.wait_for(
            self.client.post(self.url, json=body, headers=self._headers()), REQUEST_TIMEOUT
        )
        response.raise_for_status()
        self.session_id = response.headers.get("mcp-session-id")
        result = parse_body(response)
        if "error" in result:
            raise RpcError(result["error"])
        await self.notify("notifications/initialized")
        return result["result"]  # type: ignore[no-any-return]

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            body["params"] = params
        response = await asyncio.wait_for(
            self.client.post(self.url, json=body, headers=self._headers()), REQUEST_TIMEOUT
        )
        response.raise_for_status()

    async def call(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float = REQUEST_TIMEOUT
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        if params is not None:
            body["params"] = params
        # A hard bound: an SSE answer with keep-alive pings would never trip httpx's read timeout.
        response = await asyncio.wait_for(self.client.post(self.url, json=body, headers=self._headers()), timeout)
        message = parse_body(response)
        if "error" in message:
            raise RpcError(message["error"])
        return message["result"]  # type: ignore[no-any-return]

    async def read(self, uri: str) -> dict[str, Any]:
        return await self.call("resources/read", {"uri": uri})

    async def close(self) -> None:
        if self.session_id:
            with contextlib.suppress(TimeoutError, httpx.HTTPError):
                await asyncio.wait_for(self.client.delete(self.url, headers=self._headers()), REQUEST_TIMEOUT)
