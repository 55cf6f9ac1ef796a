"""Stdins for the SDK's stdio transport that stop() can hang up, so a stopping server never waits on a read."""

from __future__ import annotations

import contextlib
import os
import select
import sys
import threading
from typing import Any

import anyio

__all__ = ["StdinClaim", "WakeableInput"]

_claim_state = {"claimed": False}
_claimed_lock = threading.Lock()

_CHUNK = 1 << 20
"""Bytes per read: large, so a long line takes few system calls."""


class _WakeableLines:
    """`readline()` over a descriptor that returns "" (EOF) as soon as `wake_fd` becomes readable.

    The SDK reads stdin line by line in a worker thread; a plain blocking read
    cannot be cancelled, so a stop would wait for the client's next message.
    Waiting in poll() on the wire and a wake pipe lets stop() end the read.
    """

    def __init__(self, fd: int, wake_fd: int) -> None:
        self._fd = fd
        self._wake_fd = wake_fd
        self._buffer = bytearray()
        self._scanned = 0
        self._eof = False
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        self._poll.register(wake_fd, select.POLLIN)

    def readline(self) -> str:
        while True:
            # Search only the bytes not searched yet: rescanning the whole
            # buffer per chunk made a long line quadratic (200 MB: 20 s).
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                self._scanned = 0
                return line.decode("utf-8", errors="replace")
            self._scanned = len(self._buffer)
            if self._eof:
                rest = bytes(self._buffer)
                self._buffer.clear()
                self._scanned = 0
                return rest.decode("utf-8", errors="replace")
            ready = {fd for fd, _ in self._poll.poll()}
            if self._wake_fd in ready:
                self._eof = True
                self._buffer.clear()  # a partial message from a client being hung up on is dropped
                self._scanned = 0
                continue
            chunk = os.read(self._fd, _CHUNK)
            if chunk:
                self._buffer += chunk
            else:
                self._eof = True

    def close(self) -> None:
        """Nothing to release here: the claim owns the descriptors."""


class WakeableInput:
    """An explicit input stream (a pipe, a socket file) for a stdio transport, which `hang_up()` ends at once.

    For serving a client over descriptors other than fd 0 (embedding, tests);
    the stream itself stays the caller's to close.
    """

    def __init__(self, stream: Any) -> None:
        self._wake_read, self._wake_write = os.pipe()
        self._lock = threading.Lock()
        self._closed = False
        self.stdin: Any = anyio.AsyncFile(_WakeableLines(stream.fileno(), self._wake_read))  # type: ignore[arg-type]

    def hang_up(self) -> None:
        with self._lock:
            if not self._closed:
                os.write(self._wake_write, b"x")

    def release(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for fd in (self._wake_read, self._wake_write):
                with contextlib.suppress(OSError):
                    os.close(fd)


class StdinClaim:
    """Owns fd 0 while a stdio server runs: the wire moves to a private duplicate, fd 0 reads /dev/null.

    Handlers and child processes therefore cannot steal protocol bytes, and
    `hang_up()` ends the transport's reader at once (it sees EOF).
    `release()` puts the wire back on fd 0; only one claim exists at a time.
    """

    def __init__(self) -> None:
        with _claimed_lock:
            if _claim_state["claimed"]:
                raise RuntimeError("stdin is already being served by another stdio server in this process")
            _claim_state["claimed"] = True
        try:
            self._wire = os.dup(0)
            os.set_inheritable(self._wire, False)
            self._wake_read, self._wake_write = os.pipe()
            devnull = os.open(os.devnull, os.O_RDONLY)
            try:
                os.dup2(devnull, 0)
            finally:
                os.close(devnull)
        except BaseException:
            with _claimed_lock:
                _claim_state["claimed"] = False
            raise
        self._lock = threading.Lock()
        self._released = False
        self._hung_up = False
        self.stdin: Any = anyio.AsyncFile(_WakeableLines(self._wire, self._wake_read))  # type: ignore[arg-type]

    @staticmethod
    def supported() -> bool:
        """poll() on pipes is POSIX-only; elsewhere the SDK's own stdin handling is used."""
        return sys.platform != "win32" and hasattr(select, "poll")

    def hang_up(self) -> None:
        """Make the reader see EOF now; safe from any thread, idempotent."""
        with self._lock:
            if self._hung_up or self._released:
                return
            self._hung_up = True
            os.write(self._wake_write, b"x")

    def release(self) -> None:
        """Give fd 0 its wire back; call once the reader has finished. Idempotent."""
        with self._lock:
            if self._released:
                return
            self._released = True
            try:
                os.dup2(self._wire, 0)
            finally:
                for fd in (self._wire, self._wake_read, self._wake_write):
                    with contextlib.suppress(OSError):
                        os.close(fd)
                with _claimed_lock:
                    _claim_state["claimed"] = False
