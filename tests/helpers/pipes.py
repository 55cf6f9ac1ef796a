"""A stdio client and server joined by OS pipes inside one process: the SDK's stdio transport on both ends."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TextIO

import anyio
from mcp.server.stdio import stdio_server

from resources_qt.server.stdio import WakeableInput


@dataclass
class PipePair:
    """`server_in` / `server_out` go to `start_stdio(stdin=, stdout=)`; `client()` is an SDK client transport."""

    server_in: TextIO
    server_out: TextIO
    client_in: TextIO
    client_out: TextIO

    def client(self) -> Any:
        """A transport for `mcp.Client(...)`: the SDK's line-delimited stdio framing over the other ends."""
        return _client_transport(self.client_in, self.client_out)

    def hang_up_client(self) -> None:
        """The client closes its end, as a stdio client leaving does: the server reads EOF."""
        with contextlib.suppress(OSError):
            self.client_out.close()


@contextlib.contextmanager
def stdio_pipes() -> Iterator[PipePair]:
    to_server_r, to_server_w = os.pipe()
    to_client_r, to_client_w = os.pipe()
    pair = PipePair(
        server_in=os.fdopen(to_server_r, "r", encoding="utf-8"),
        server_out=os.fdopen(to_client_w, "w", encoding="utf-8"),
        client_in=os.fdopen(to_client_r, "r", encoding="utf-8"),
        client_out=os.fdopen(to_server_w, "w", encoding="utf-8"),
    )
    try:
        yield pair
    finally:
        for stream in (pair.client_out, pair.server_out, pair.server_in, pair.client_in):
            with contextlib.suppress(OSError):
                stream.close()


@asynccontextmanager
async def _client_transport(client_in: TextIO, client_out: TextIO) -> AsyncIterator[Any]:
    # The client's reader must end when the client does, whatever the server still holds open.
    wire = WakeableInput(client_in)
    try:
        async with stdio_server(stdin=wire.stdin, stdout=anyio.wrap_file(client_out)) as streams:
            try:
                yield streams
            finally:
                wire.hang_up()
    finally:
        wire.release()
