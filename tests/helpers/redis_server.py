"""A real, throwaway `redis-server` for tests: free port, temporary directory, no persistence."""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["REDIS_BINARY", "RedisServer", "redis_server", "require_redis_server"]

REDIS_BINARY = shutil.which("redis-server")
_START_TIMEOUT = 10.0


def require_redis_server() -> str:
    """The redis-server path, or skip the test naming the Debian package to install."""
    if REDIS_BINARY is None:
        pytest.skip("redis-server is not installed (Debian/Ubuntu: apt-get install redis-server)")
    return REDIS_BINARY


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _answers(port: int) -> bool:
    # A raw PING keeps this helper independent of the client library under test.
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One redis-server process; `stop()` and `start()` again keep the same port (for outage tests)."""

    def __init__(self, directory: Path, *, password: str | None = None) -> None:
        self.binary = require_redis_server()
        self.directory = directory
        self.password = password
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self) -> None:
        if self.process is not None:
            raise RuntimeError("redis-server is already running")
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--dir", str(self.directory), "--daemonize", "no", "--loglevel", "warning"]
        if self.password:
            args += ["--requirepass", self.password]
        log = (self.directory / "redis.log").open("ab")
        self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=self.directory)
        log.close()
        deadline = time.monotonic() + _START_TIMEOUT
        while not self._ready():
            if self.process.poll() is not None:
                self.process = None
                raise RuntimeError(f"redis-server exited at start; see {self.directory / 'redis.log'}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("redis-server did not answer in time")
            time.sleep(0.02)  # polling an external process; there is nothing to wait on

    def _ready(self) -> bool:
        if self.password:
            # With requirepass a PING answers -NOAUTH: the server is up all the same.
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    return sock.recv(64).startswith((b"+PONG", b"-NOAUTH"))
            except OSError:
                return False
        return _answers(self.port)

    def stop(self) -> None:
        """Kill the server (SIGKILL: an outage, not a clean shutdown) and reap it."""
        process, self.process = self.process, None
        if process is None:
            return
        process.kill()  # SIGKILL ends a stopped (paused) process too
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=10)

    def pause(self) -> None:
        """SIGSTOP: connections stay open and nothing answers (a hung server, a partition)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)

    def restart(self) -> None:
        self.stop()
        self.start()


@contextlib.contextmanager
def redis_server(directory: Path, *, password: str | None = None) -> Iterator[RedisServer]:
    """A started RedisServer in `directory`, killed on exit."""
    server = RedisServer(directory, password=password)
    server.start()
    try:
        yield server
    finally:
        server.stop()
