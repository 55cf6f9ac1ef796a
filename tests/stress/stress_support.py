"""Helpers shared by the stress tests: scaled counts, free ports, subprocess plumbing."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

FULL = os.environ.get("STRESS_FULL") == "1"
REPO = Path(__file__).resolve().parents[2]


def scaled(reduced: int, full: int) -> int:
    """`full` under STRESS_FULL=1, else `reduced`."""
    return full if FULL else reduced


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_is_free(port: int) -> bool:
    """True when a fresh socket can bind 127.0.0.1:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def child_env() -> dict[str, str]:
    """The environment for a Python child process that must import the repository's packages."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    return env


PYTHON = sys.executable
