"""Experiment: `resource-studio serve` with TCP_NODELAY on the pre-bound listening socket.

`python bench/serve_nodelay.py serve PROJECT --http HOST:PORT` behaves as the real command, except that
the listening socket is created with proto=IPPROTO_TCP; asyncio then sets TCP_NODELAY on each accepted
connection (it skips sockets whose proto is 0), which removes the Nagle/delayed-ACK wait of ~40 ms on
every multi-write SSE answer. Used by `python bench/run.py --only read --nodelay-experiment`.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _bind_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


if __name__ == "__main__":  # the snippet pool's forkserver re-imports __main__: keep it inert
    import resources_qt.server.http as http_host

    http_host.bind_socket = _bind_socket
    from studio.cli import main

    sys.exit(main(sys.argv[1:]))
