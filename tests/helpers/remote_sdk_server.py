"""A remote server for client-mode tests, run as a script: the SDK's MCPServer, FastMCP 4, or one with no resources.

`python remote_sdk_server.py KIND stdio|http`; over HTTP it prints its port on stdout, then serves.
KIND is "sdk", "fastmcp" or "tools-only".
"""

from __future__ import annotations

import json
import socket
import sys
from typing import Any

GREETING = "remote://greeting"
DATA = "remote://data.json"
USERS = "remote://users/{name}"
NAMES = ("alice", "albert", "bob")
INSTRUCTIONS = "Read remote://greeting first."


def _sdk() -> Any:
    import mcp_types as types
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("remote-sdk", version="3.1", instructions=INSTRUCTIONS, log_level="WARNING")

    @server.resource(GREETING, name="greeting", title="The greeting", mime_type="text/plain",
                     annotations=types.Annotations(priority=0.5, audience=["user"]))  # fmt: skip
    def greeting() -> str:
        return "hello from the SDK server"

    @server.resource(DATA, name="data", mime_type="application/json")
    def data() -> str:
        return json.dumps({"answer": 42})

    @server.resource(USERS, name="user", title="A user", mime_type="text/plain")
    def user(name: str) -> str:
        if name not in NAMES:
            raise ValueError(f"no user {name}")
        return f"user {name}"

    @server.completion()
    async def complete(ref: Any, argument: Any, context: Any) -> types.Completion:
        return types.Completion(values=[n for n in NAMES if n.startswith(argument.value)])

    return server


def _fastmcp() -> Any:
    from fastmcp import FastMCP

    # One entry a page: the client must follow every cursor.
    server = FastMCP("remote-fastmcp", instructions=INSTRUCTIONS, version="4.0", list_page_size=1)

    @server.resource(GREETING, name="greeting", title="The greeting", mime_type="text/plain")
    def greeting() -> str:
        return "hello from FastMCP"

    @server.resource(DATA, name="data", mime_type="application/json")
    def data() -> str:
        return json.dumps({"answer": 42})

    @server.resource(USERS, name="user", mime_type="text/plain")
    def user(name: str) -> str:
        return f"user {name}"

    return server


def _tools_only() -> Any:
    from mcp.server.lowlevel import Server

    return Server("tools-only")


def main(kind: str, transport: str) -> None:
    if kind == "tools-only":
        import anyio
        from mcp.server.stdio import stdio_server

        server = _tools_only()

        async def run() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(run)
        return
    server = _sdk() if kind == "sdk" else _fastmcp()
    if transport == "stdio":
        server.run("stdio") if kind == "sdk" else server.run(transport="stdio", show_banner=False)
        return
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(sock.getsockname()[1], flush=True)
    app = server.streamable_http_app(host="127.0.0.1") if kind == "sdk" else server.http_app(path="/mcp")
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
