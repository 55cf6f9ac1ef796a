"""The baseline: the SDK's MCPServer serving the benchmark resource over Streamable HTTP (uvicorn).

Run as `python bench/sdk_server.py PORT`; the resource and its text match the project that
`resource-studio serve` gets (see bench/projects.py).
"""

from __future__ import annotations

import sys

import uvicorn
from mcp.server.mcpserver import MCPServer

SMALL_URI = "bench://small"
SMALL_TEXT = "hello from the benchmark resource\n"


def build() -> MCPServer:
    server = MCPServer("sdk-bench", log_level="WARNING", warn_on_duplicate_resources=False)

    @server.resource(SMALL_URI, name="small", mime_type="text/plain")
    def small() -> str:
        return SMALL_TEXT

    return server


def main(port: int) -> None:
    app = build().streamable_http_app(host="127.0.0.1")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main(int(sys.argv[1]))
