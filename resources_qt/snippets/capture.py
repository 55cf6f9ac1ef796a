"""Worker-side output capture: fds 1 and 2 go to pipes whose text is forwarded, bounded, per snippet."""

from __future__ import annotations

import codecs
import contextlib
import ctypes
import io
import os
import select
import sys
import threading
from collections.abc import Callable

__all__ = ["OutputCapture"]

_CHUNK = 65536
_MAX_CHUNKS_PER_DRAIN = 64


class OutputCapture:
    """Owns the worker's stdin, stdout and stderr once installed.

    fd 0 becomes /dev/null (a snippet must never eat the stdio transport's
    input) and fds 1 and 2 become a pipe each, so Python `print`, `os.write(1, ...)`
    and C-level writes alike end up here and never in the parent's stdout.
    A pump thread forwards what arrives as `(key, stream, text)` while a snippet runs;
    `finish()` drains the rest so a read's output is forwarded before its
    answer. At most `limit` bytes are forwarded per call; the rest is counted
    and reported in one line.
    """

    def __init__(self, *, forward: Callable[[str, str, str], None], limit: int) -> None:
        self._forward = forward
        self._limit = limit
        self._lock = threading.Lock()
        self._key = ""
        self._sent = 0
        self._dropped = 0
        decoder = codecs.getincrementaldecoder("utf-8")
        self._decoders = {"stdout": decoder(errors="replace"), "stderr": decoder(errors="replace")}
        self._fds: dict[int, str] = {}
        self._libc: ctypes.CDLL | None = None

    def install(self) -> None:
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        for target, stream in ((1, "stdout"), (2, "stderr")):
            read_fd, write_fd = os.pipe()
            os.set_blocking(read_fd, False)
            os.dup2(write_fd, target)
            os.close(write_fd)
            self._fds[read_fd] = stream
        sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the worker
        sys.stdout = _text_stream(1)
        sys.stderr = _text_stream(2)
        try:
            self._libc = ctypes.CDLL(None)
        except OSError:
            self._libc = None
        threading.Thread(target=self._pump, name="snippet-output", daemon=True).start()

    def begin(self, key: str) -> None:
        """Attribute what is printed from now on to `key`, with a fresh byte budget."""
        with self._lock:
            self._drain()
            self._report_dropped()
            self._key = key
            self._sent = 0
            self._dropped = 0

    def finish(self) -> None:
        """Flush Python and C buffers and forward everything printed so far."""
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        if self._libc is not None:
            # printf() output sits in libc's buffer until flushed.
            self._libc.fflush(None)
        with self._lock:
            self._drain()
            self._report_dropped()

    def note(self, text: str) -> None:
        """Forward worker-made text (a traceback) for the current key, outside the budget."""
        with self._lock:
            self._forward(self._key, "stderr", text)

    def _pump(self) -> None:
        fds = list(self._fds)
        while True:
            try:
                ready, _, _ = select.select(fds, [], [])
            except InterruptedError:
                continue
            with self._lock:
                # Only what select() named: a read of the idle pipe would cost an exception per wakeup.
                for fd in ready:
                    self._drain_one(fd, self._fds[fd])

    def _drain(self) -> None:
        # Bounded, so a thread that prints without end cannot keep the
        # caller (finish(), before the answer is sent) here forever.
        for fd, stream in self._fds.items():
            self._drain_one(fd, stream)

    def _drain_one(self, fd: int, stream: str) -> None:
        for _ in range(_MAX_CHUNKS_PER_DRAIN):
            try:
                data = os.read(fd, _CHUNK)
            except BlockingIOError:
                return
            except InterruptedError:
                continue
            if not data:
                return
            room = self._limit - self._sent
            if room <= 0:
                self._dropped += len(data)
                continue
            if len(data) > room:
                self._dropped += len(data) - room
                data = data[:room]
            self._sent += len(data)
            text = self._decoders[stream].decode(data)
            if text:
                self._forward(self._key, stream, text)

    def _report_dropped(self) -> None:
        if self._dropped:
            notice = f"\n[output truncated: {self._dropped} more bytes were dropped]\n"
            self._forward(self._key, "stderr", notice)
            self._dropped = 0


def _text_stream(fd: int) -> io.TextIOWrapper:
    raw = io.FileIO(fd, "w", closefd=False)
    return io.TextIOWrapper(
        io.BufferedWriter(raw), encoding="utf-8", errors="backslashreplace", line_buffering=True
    )
