"""The serve command's snippet-output writer: a bounded queue to one writer thread, so no read waits on the sink."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import queue
import re
import stat
import threading
from typing import Protocol

from resources_qt.server.logtext import escape_controls
from resources_qt.snippets import SnippetOutput

__all__ = ["DEFAULT_PENDING", "MAX_OUTPUT_FILE_BYTES", "OutputFile", "OutputFileError", "OutputWriter",
           "escape_field", "unescape_field"]

logger = logging.getLogger(__name__)

DEFAULT_PENDING = 256
"""Reads' output blocks that may wait for the sink; more are dropped and counted."""

MAX_OUTPUT_FILE_BYTES = 64 * 1024 * 1024
"""`--snippet-output FILE` is moved to FILE.1 (replacing an older one) before it would grow past this."""

_NOTICE_ROOM = 512
"""Bytes kept free below the cap for the line saying the file continues elsewhere."""

# What a POSIX shell acts on in the middle of a command: substitutions, separators and redirections.
# Written \xNN, so a shell that sources the file runs nothing from what a client chose (a URI).
_SHELL = {ord(c): f"\\x{ord(c):02x}" for c in "$`;&|<>"}
# In the [resource uri] part, a space and ']' too: that part always splits at its one space and ends at ']'.
_WHERE = {**_SHELL, ord(" "): "\\x20", ord("]"): "\\x5d"}
_ESCAPE = re.compile(r"\\(\\|x[0-9a-f]{2}|u[0-9a-f]{4})")


class Sink(Protocol):
    """Where the writer thread puts lines: stderr, or an `OutputFile`."""

    def writelines(self, lines: list[str], /) -> None: ...

    def flush(self) -> None: ...


class OutputFileError(OSError):
    """`--snippet-output FILE` cannot be used; the message is one line naming the file and why."""


def escape_field(text: str, *, where: bool = False) -> str:
    r"""`text` as one line no shell acts on: `\\` for a backslash, `\xNN`/`\uNNNN` for control characters and
    for $ ` ; & | < > (with `where`, space and ] too). `unescape_field` gives `text` back."""
    return escape_controls(text.replace("\\", "\\\\")).translate(_WHERE if where else _SHELL)


def unescape_field(text: str) -> str:
    """The inverse of `escape_field`."""
    return _ESCAPE.sub(lambda m: "\\" if m.group(1) == "\\" else chr(int(m.group(1)[1:], 16)), text)


class OutputFile:
    """`--snippet-output FILE`: appended to, never through a symbolic link, moved to FILE.1 at the size cap.

    Opening refuses a symbolic link (O_NOFOLLOW: the file written is the one
    named, not one a link points at) and anything but a regular file. Before
    a line would take the file past `max_bytes`, a last line says where
    output continues, the file becomes FILE.1 (an older FILE.1 is replaced:
    at most twice the cap is kept) and a new FILE starts with a line saying
    so; the log says so too. When the new file cannot be created, output
    stops, and the log says why. Written from the writer thread only.
    """

    def __init__(self, path: str, *, max_bytes: int = MAX_OUTPUT_FILE_BYTES) -> None:
        if max_bytes < 2 * _NOTICE_ROOM:
            raise ValueError(f"max_bytes must be at least {2 * _NOTICE_ROOM}, not {max_bytes!r}")
        self.path = path
        self.max_bytes = max_bytes
        self.rotations = 0
        self._fd: int | None = _open(path, create_only=False)
        self._size = os.fstat(self._fd).st_size

    def writelines(self, lines: list[str], /) -> None:
        for line in lines:
            data = line.encode("utf-8", "backslashreplace")
            if self._fd is not None and self._size > 0 and self._size + len(data) > self.max_bytes - _NOTICE_ROOM:
                self._rotate()
            if self._fd is None:
                return  # stopped: the log said why
            self._write(data)

    def flush(self) -> None:
        """Nothing is buffered: each line is one write(2)."""

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def _write(self, data: bytes) -> None:
        assert self._fd is not None
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            self._size += written
            view = view[written:]

    def _rotate(self) -> None:
        cap = _mib(self.max_bytes)
        old = f"{self.path}.1"
        self._write(f"[snippet output] this file reached the {cap} cap: it is now {old}, and output "
                    f"continues in {self.path}\n".encode("utf-8", "backslashreplace"))
        self.close()
        try:
            with contextlib.suppress(FileNotFoundError):  # moved away meanwhile (logrotate): a new file starts
                os.replace(self.path, old)
            self._fd = _open(self.path, create_only=True)
        except OSError as exc:
            logger.warning("Snippet output: %s reached the %s cap and cannot be moved aside (%s); "
                           "further snippet output is not written", self.path, cap, _reason(exc))
            return
        self._size = 0
        self.rotations += 1
        self._write(f"[snippet output] continued from {old}, which reached the {cap} cap\n".encode(
            "utf-8", "backslashreplace"))
        logger.warning("Snippet output: %s reached the %s cap; moved to %s (replacing an older one), "
                       "continuing in a new %s", self.path, cap, old, self.path)


def _open(path: str, *, create_only: bool) -> int:
    # O_NONBLOCK: a FIFO at the path must not hold the start (it is refused below, not waited on).
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_NONBLOCK", 0) | (os.O_EXCL if create_only else 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (exc.errno == errno.EEXIST and os.path.islink(path)):
            raise OutputFileError(exc.errno, f"{path} is a symbolic link; give the file itself") from None
        if exc.errno == errno.ENXIO:  # a FIFO (or socket) with no reader
            raise OutputFileError(exc.errno, f"{path} is not a regular file") from None
        raise OutputFileError(exc.errno, f"{path}: {_reason(exc)}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OutputFileError(errno.EINVAL, f"{path} is not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _mib(size: int) -> str:
    return f"{size // (1024 * 1024)} MiB" if size >= 1024 * 1024 else f"{size} bytes"

_CLOSE_SECONDS = 2.0
"""How long closing waits for queued output to reach a sink that is slow (or never drained)."""


class OutputWriter:
    """A read-output listener writing one line per printed line, `[resource uri] stream: text`, escaped.

    With the direct path a read's output is delivered on the server loop; a sink
    nobody drains (a client that launched `serve --stdio` and ignores stderr)
    must not stall the loop, so the listener only queues. When `max_pending`
    blocks are waiting the block is dropped and counted, and the count is
    written as one line once the sink keeps up again.
    """

    def __init__(self, sink: Sink, *, max_pending: int = DEFAULT_PENDING) -> None:
        if max_pending < 1:
            raise ValueError(f"max_pending must be at least 1, not {max_pending!r}")
        self._sink = sink
        self._queue: queue.Queue[SnippetOutput | None] = queue.Queue(max_pending)
        self._lock = threading.Lock()
        self._dropped = 0
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="snippet-output-writer", daemon=True)
        self._thread.start()

    @property
    def dropped(self) -> int:
        """Blocks dropped so far because the sink did not keep up."""
        with self._lock:
            return self._dropped

    def __call__(self, output: SnippetOutput) -> None:
        if self._closed:
            return
        try:
            self._queue.put_nowait(output)
        except queue.Full:
            with self._lock:
                self._dropped += 1

    def close(self, *, timeout: float = _CLOSE_SECONDS) -> None:
        """Stop taking output; write what is queued within `timeout` seconds (a stuck sink is left behind)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._queue.put(None, timeout=timeout)
        except queue.Full:
            logger.warning("Snippet output: the sink did not keep up; queued output is left unwritten")
            return
        self._thread.join(timeout)

    def _run(self) -> None:
        reported = 0
        while True:
            output = self._queue.get()
            lines = _lines(output) if output is not None else []
            with self._lock:
                dropped = self._dropped
            if dropped > reported:
                lines.append(f"[snippet output] {dropped - reported} reads' output dropped: the sink did not keep up\n")
                reported = dropped
            if lines:
                try:
                    self._sink.writelines(lines)
                    self._sink.flush()
                except (OSError, ValueError) as exc:  # closed or broken sink: serving goes on without it
                    logger.debug("Snippet output not written: %s", exc)
            if output is None:
                return


def _lines(output: SnippetOutput) -> list[str]:
    where = escape_field(output.key, where=True) + (f" {escape_field(output.uri, where=True)}" if output.uri else "")
    return [
        f"[{where}] {stream}: {escape_field(line)}\n"
        for stream, text in output.chunks
        for line in text.splitlines()
    ]
