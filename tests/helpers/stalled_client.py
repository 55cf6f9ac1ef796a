"""A hostile handshake-era client over raw httpx: subscribes to many long URIs, never reads its GET stream."""

from __future__ import annotations

from contextlib import AsyncExitStack
from types import TracebackType

import httpx

__all__ = ["HANDSHAKE", "HEADERS", "StalledClient", "long_uris"]

HANDSHAKE = "2025-11-25"
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def long_uris(count: int, *, length: int = 8000, prefix: str = "stall://") -> list[str]:
    """`count` distinct URIs of `length` characters (under the default max_uri_length of 8192)."""
    return [f"{prefix}{n}/" + "x" * (length - len(prefix) - len(str(n)) - 1) for n in range(count)]


class StalledClient:
    """`async with StalledClient(url, uris)`: a session subscribed to `uris` whose open GET stream is never read.

    `session_id` names the session; `stream_status` is the GET answer's status.
    Leaving the block hangs up (what ends the stall on a server without a fix); `read_to_end`
    reads at last, to see the server end the stream.
    """

    def __init__(self, url: str, uris: list[str], *, timeout: float = 15.0) -> None:
        self.url = url
        self.uris = uris
        self.session_id = ""
        self.stream_status = 0
        # The socket buffers stay the kernel's: a small receive buffer stalls sooner, but reading
        # what was buffered then crawls (a few kilobytes per delayed ACK).
        self._http = httpx.AsyncClient(timeout=timeout)
        self._exits = AsyncExitStack()
        self._stream: httpx.Response

    async def __aenter__(self) -> StalledClient:
        await self._exits.enter_async_context(self._http)
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": HANDSHAKE, "capabilities": {},
                           "clientInfo": {"name": "stalled", "version": "1"}}}  # fmt: skip
        answer = await self._http.post(self.url, json=init, headers=HEADERS)
        answer.raise_for_status()
        self.session_id = answer.headers["mcp-session-id"]
        headers = self.headers
        await self._http.post(self.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                              headers=headers)
        for number, uri in enumerate(self.uris, start=1):
            reply = await self._http.post(
                self.url,
                json={"jsonrpc": "2.0", "id": number, "method": "resources/subscribe", "params": {"uri": uri}},
                headers=headers,
            )
            if "error" in reply.json():
                raise AssertionError(f"subscribing {uri[:40]}... failed: {reply.text[:200]}")
        self._stream = await self._exits.enter_async_context(self._http.stream("GET", self.url, headers=headers))
        self.stream_status = self._stream.status_code  # headers only: the body is not read
        return self

    async def read_to_end(self) -> int:
        """Read what the server had buffered until it ends the stream; returns the bytes read."""
        total = 0
        async for chunk in self._stream.aiter_raw():
            total += len(chunk)
        return total

    @property
    def headers(self) -> dict[str, str]:
        return {**HEADERS, "mcp-session-id": self.session_id, "mcp-protocol-version": HANDSHAKE}

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self._exits.aclose()
