"""The pre-bound listening socket: connections get TCP_NODELAY, a busy port is named."""

from __future__ import annotations

import asyncio
import socket

import pytest

from resources_qt.server.http import bind_socket


def test_accepted_connections_have_nagle_off() -> None:
    async def accept_one() -> int:
        sock = bind_socket("127.0.0.1", 0)
        port = sock.getsockname()[1]
        accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            conn = writer.get_extra_info("socket")
            accepted.set_result(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connect, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            flag = await asyncio.wait_for(accepted, 5)
            writer.close()
            return flag

    assert asyncio.run(accept_one()) != 0


def test_a_busy_port_is_named() -> None:
    first = bind_socket("127.0.0.1", 0)
    try:
        port = first.getsockname()[1]
        with pytest.raises(OSError, match=f"Port {port} on 127.0.0.1 is already in use"):
            bind_socket("127.0.0.1", port)
    finally:
        first.close()
