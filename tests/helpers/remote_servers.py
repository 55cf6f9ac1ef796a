"""Real servers for client-mode tests: scripts of tests/helpers/remote_sdk_server.py and `resource-studio serve`."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from resources_qt.client import RemoteClient, RemoteEvent, Target

__all__ = [
    "SCRIPT", "EventLog", "Served", "connected", "free_port", "script_command", "script_http", "serve_http",
    "stdio_children", "wait_for",
]

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("remote_sdk_server.py")
TIMEOUT = 30.0
_SERVING = re.compile(r"Serving .* at (http://\S+/mcp)")


def wait_for(predicate: Callable[[], bool], timeout: float = TIMEOUT, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached in {timeout:.0f} s")
        time.sleep(0.02)


def script_command(kind: str) -> str:
    """The command line running the script server `kind` over stdio."""
    return shlex.join([sys.executable, str(SCRIPT), kind, "stdio"])


class Served:
    """One server process and its URL; stderr goes to a file the test can read."""

    def __init__(self, argv: list[str], log: Path, *, port_on_stdout: bool) -> None:
        self.log = log
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        with log.open("w") as errors:
            self.process = subprocess.Popen(argv, stdout=subprocess.PIPE if port_on_stdout else subprocess.DEVNULL,
                                            stderr=errors, env=env, cwd=ROOT, text=True)  # fmt: skip
        self.url = ""
        if port_on_stdout:
            assert self.process.stdout is not None
            line = self.process.stdout.readline().strip()
            assert line.isdigit(), f"the server printed {line!r}: {self.stderr()}"
            self.url = f"http://127.0.0.1:{line}/mcp"
        else:
            wait_for(self._found_url, what=f"serve started ({log})")

    def _found_url(self) -> bool:
        found = _SERVING.search(self.stderr())
        if found:
            self.url = found.group(1)
            return True
        assert self.process.poll() is None, f"serve exited: {self.stderr()}"
        return False

    def stderr(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(30)
        if self.process.stdout is not None:
            self.process.stdout.close()


@contextmanager
def script_http(kind: str, log: Path) -> Iterator[Served]:
    served = Served([sys.executable, str(SCRIPT), kind, "http"], log, port_on_stdout=True)
    try:
        yield served
    finally:
        served.stop()


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serve_http(project: Path, *args: str, port: int = 0) -> Iterator[Served]:
    """`resource-studio serve PROJECT --http 127.0.0.1:PORT ARGS…`."""
    argv = [sys.executable, "-m", "studio", "serve", str(project), "--http", f"127.0.0.1:{port}", *args]
    served = Served(argv, project.with_suffix(f".serve-{port}.log"), port_on_stdout=False)
    try:
        yield served
    finally:
        served.stop()


class EventLog:
    """A RemoteClient's events, gathered from its thread."""

    def __init__(self) -> None:
        self.events: list[RemoteEvent] = []
        self._lock = threading.Lock()

    def __call__(self, event: RemoteEvent) -> None:
        with self._lock:
            self.events.append(event)

    def of(self, kind: type[RemoteEvent]) -> list[RemoteEvent]:
        with self._lock:
            return [event for event in self.events if isinstance(event, kind)]


@contextmanager
def connected(target: Target, *, timeout_s: float = TIMEOUT) -> Iterator[tuple[RemoteClient, EventLog]]:
    """A started RemoteClient of `target` (closed and joined afterwards)."""
    log = EventLog()
    client = RemoteClient(target, on_event=log, timeout_s=timeout_s)
    client.start()
    try:
        yield client, log
    finally:
        client.close().result(TIMEOUT)
        assert client.join(TIMEOUT)


def stdio_children() -> set[int]:
    """The pids of this process's live children (a stdio server left behind shows here)."""
    me = os.getpid()
    children: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1 and int(fields[1]) == me and fields[0] != "Z":
            children.add(int(entry.name))
    return children
