"""The wrk bench's peers as separate processes: the SDK's MCPServer and FastMCP, each in its production settings
and in its defaults, and the ceiling of a bare ASGI app answering a fixed JSON body.

`python bench/peers.py NAME PORT` serves one of `PEERS` on 127.0.0.1:PORT at /mcp. Production settings are
what the peers document for deployment: JSON answers instead of SSE (`json_response=True`), no server-side
sessions (`stateless_http=True`), uvicorn with httptools and uvloop. Defaults are each peer's own (SSE
answers, sessions) with uvicorn's defaults (which pick httptools and uvloop themselves when they are
installed, as they are with the bench extra). Each also serves the slow readers of `bench.slow_readers`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.sdk_server import SMALL_TEXT, SMALL_URI
from bench.slow_readers import API_URI, ASYNC_URI, SYNC_URI, api_read, async_read, sync_read

PEERS: dict[str, str] = {
    "sdk": "SDK MCPServer, production (json_response, stateless_http; httptools, uvloop)",
    "sdk-default": "SDK MCPServer, defaults (SSE answers, sessions)",
    "fastmcp": "FastMCP, production (json_response, stateless_http; httptools, uvloop)",
    "fastmcp-default": "FastMCP, defaults (SSE answers, sessions)",
    "asgi": "bare ASGI app, fixed JSON body (the ceiling; httptools, uvloop)",
}
"""Series label -> what it is, as the results say."""

_PRODUCTION = {"http": "httptools", "loop": "uvloop"}

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def _sdk(production: bool) -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("sdk-bench", log_level="WARNING", warn_on_duplicate_resources=False)

    @server.resource(SMALL_URI, name="small", mime_type="text/plain")
    def small() -> str:
        return SMALL_TEXT

    server.resource(SYNC_URI, name="slow_sync", mime_type="text/plain")(sync_read)
    server.resource(ASYNC_URI, name="slow_async", mime_type="text/plain")(async_read)
    server.resource(API_URI, name="slow_api", mime_type="text/plain")(api_read)
    if production:
        return server.streamable_http_app(host="127.0.0.1", json_response=True, stateless_http=True)
    return server.streamable_http_app(host="127.0.0.1")


def _fastmcp(production: bool) -> Any:
    from fastmcp import FastMCP

    mcp = FastMCP("fastmcp-bench")

    @mcp.resource(SMALL_URI, name="small", mime_type="text/plain")
    def small() -> str:
        return SMALL_TEXT

    mcp.resource(SYNC_URI, name="slow_sync", mime_type="text/plain")(sync_read)
    mcp.resource(ASYNC_URI, name="slow_async", mime_type="text/plain")(async_read)
    mcp.resource(API_URI, name="slow_api", mime_type="text/plain")(api_read)
    if production:
        return mcp.http_app(path="/mcp", json_response=True, stateless_http=True)
    return mcp.http_app(path="/mcp")


def _bare() -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    """Answers every POST with the same read result (id 1): HTTP parsing, one body read, one JSON write."""
    result = {"contents": [{"uri": SMALL_URI, "mimeType": "text/plain", "text": SMALL_TEXT}]}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        more = True
        while more:
            more = (await receive()).get("more_body", False)
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


def main(name: str, port: int) -> None:
    options: dict[str, Any] = {}
    if name == "asgi":
        app: Any = _bare()
        options = {**_PRODUCTION, "lifespan": "off"}
    elif name.startswith("sdk"):
        app = _sdk(name == "sdk")
    else:
        app = _fastmcp(name == "fastmcp")
    if name in ("sdk", "fastmcp"):
        options = _PRODUCTION
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False, **options)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
