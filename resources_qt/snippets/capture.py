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
_PENDING_SECONDS = 0.1
"""How long collected Python-level output may wait before the pump forwards it."""


class OutputCapture:
    """Owns the worker's stdin, stdout and stderr once installed.

    fd 0 becomes /dev/null (a snippet must never eat the stdio transport's
    input) and fds 1 and 2 become a pipe each, so Python `print`, `os.write(1, ...)`
    and C-level writes alike end up here and never in the parent's stdout.
    Python-level writes (`print`, `sys.stderr.write`) skip the pipes: they are
    collected in writing order, tagged with their stream, so a read's stdout
    and stderr come out in the order written (C-level writes keep their order
    within each stream). A pump thread forwards what arrives as
    `(key, stream, text)` while a snippet runs (collected text at least every
    0.1 s); `finish()` forwards the rest so a read's output is forwarded before
    its answer. At most `limit` bytes are forwarded per call; the rest is
    counted and reported in one line.
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
        self._pending: list[list[str]] = []
        self._pending_size = 0
        self._poller: select.poll | None = None

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
        if hasattr(select, "poll"):
            self._poller = select.poll()
            for read_fd in self._fds:
                self._poller.register(read_fd, select.POLLIN)
        sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the worker
        sys.stdout = _CapturedStream(self, "stdout", 1)
        sys.stderr = _CapturedStream(self, "stderr", 2)
        try:
            self._libc = ctypes.CDLL(None)
        except OSError:
            self._libc = None
        threading.Thread(target=self._pump, name="snippet-output", daemon=True).start()

    def begin(self, key: str) -> None:
        """Attribute what is printed from now on to `key`, with a fresh byte budget."""
        with self._lock:
            self._drain()
            self._flush_pending()
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
            self._flush_pending()
            self._report_dropped()

    def write(self, stream: str, text: str) -> None:
        """Collect Python-level output of `stream`, within the call's byte budget."""
        if not text:
            return
        with self._lock:
            room = self._limit - self._sent
            size = len(text)  # characters: cheap, and the budget is about volume, not exact bytes
            if room <= 0:
                self._dropped += size
                return
            if size > room:
                self._dropped += size - room
                text = text[:room]
                size = room
            self._sent += size
            pending = self._pending
            if pending and pending[-1][0] == stream:
                pending[-1][1] += text
            else:
                pending.append([stream, text])
            self._pending_size += size
            if self._pending_size >= _CHUNK:
                self._flush_pending()

    def note(self, text: str) -> None:
        """Forward worker-made text (a traceback) for the current key, outside the budget."""
        with self._lock:
            self._flush_pending()
            self._forward(self._key, "stderr", text)

    def _flush_pending(self) -> None:
        pending, self._pending, self._pending_size = self._pending, [], 0
        for stream, text in pending:
            self._forward(self._key, stream, text)

    def _pump(self) -> None:
        fds = list(self._fds)
        while True:
            try:
                ready, _, _ = select.select(fds, [], [], _PENDING_SECONDS)
            except InterruptedError:
                continue
            with self._lock:
                if self._pending:
                    self._flush_pending()
                # Only what select() named: a read of the idle pipe would cost an exception per wakeup.
                for fd in ready:
                    self._drain_one(fd, self._fds[fd])

    def _drain(self) -> None:
        # Bounded, so a thread that prints without end cannot keep the
        # caller (finish(), before the answer is sent) here forever.
        if self._poller is None:
            for fd, stream in self._fds.items():
                self._drain_one(fd, stream)
            return
        # It runs twice per call and the pipes are nearly always empty: one poll(2) instead of a
        # read per pipe that fails with EAGAIN.
        for fd, _events in self._poller.poll(0):
            self._drain_one(fd, self._fds[fd])

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


class _CapturedStream(io.TextIOBase):
    """`sys.stdout` / `sys.stderr` of a worker: text goes to the capture, tagged, in writing order.

    `buffer` (bytes) and `fileno()` still reach the real descriptor, for code
    that writes bytes or hands the descriptor to a child process.
    """

    encoding = "utf-8"
    errors = "backslashreplace"

    def __init__(self, capture: OutputCapture, stream: str, fd: int) -> None:
        super().__init__()
        self._capture = capture
        self._stream = stream
        self._fd = fd
        self.buffer = io.BufferedWriter(io.FileIO(fd, "w", closefd=False))

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._capture.write(self._stream, text)
        return len(text)

    def flush(self) -> None:
        self.buffer.flush()

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return False
