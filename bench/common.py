"""Shared benchmark plumbing: result rows, statistics, ports, child processes and the environment."""

from __future__ import annotations

import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PYTHON = sys.executable


@dataclass
class Row:
    """One line of the results table; `value` None means the benchmark could not run."""

    key: str
    label: str
    value: float | None
    unit: str
    goal: str = ""
    met: bool | None = None
    detail: str = ""
    extra: dict[str, float] = field(default_factory=dict)
    markdown: str = ""
    """Tables results.md shows under the suite's figures (one per era and mode for the wrk reads)."""

    @classmethod
    def unavailable(cls, key: str, label: str, unit: str, why: str, goal: str = "") -> Row:
        return cls(key, label, None, unit, goal, None, f"not available: {why}")


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (pct in 0..100) of a non-empty sample."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(pct / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, timeout: float, proc: subprocess.Popen[bytes] | None = None) -> None:
    """Block until 127.0.0.1:port accepts connections; raise if `proc` dies or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server process exited with {proc.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port} after {timeout:.0f} s")


def child_env(**extra: str) -> dict[str, str]:
    """Environment for a child Python that imports the repository's packages."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    env.update(extra)
    return env


def stop_process(proc: subprocess.Popen[bytes], timeout: float = 5.0) -> None:
    """Terminate a child we started, then kill it if it lingers."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=timeout)


def versions() -> dict[str, str]:
    """CPU count and the versions results.md records."""
    from importlib import metadata

    info = {
        "cpus": str(os.cpu_count()),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
    }
    for dist, key in (("mcp", "mcp_sdk"), ("PySide6-Essentials", "pyside6"), ("uvicorn", "uvicorn"),
                      ("httpx", "httpx")):
        try:
            info[key] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            info[key] = "not installed"
    try:
        from PySide6 import QtCore

        info["qt"] = QtCore.qVersion()
    except ImportError:
        info["qt"] = "not installed"
    return info
