"""The last lines a stdio server wrote to stderr, kept in a bounded buffer to explain why it failed."""

from __future__ import annotations

import contextlib
import io
import os
import threading
from collections import deque

__all__ = ["StderrTail"]

TAIL_LINES = 20
LINE_CHARS = 500


class StderrTail:
    """A pipe for a child's stderr (`writer`), read by a thread that keeps the last TAIL_LINES lines.

    The thread ends when every copy of the write end is closed: the child's when it exits,
    ours in `close_writer` (after the SDK has terminated the child).
    """

    def __init__(self) -> None:
        read_fd, write_fd = os.pipe()
        self.writer: io.TextIOWrapper = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        self._reader = os.fdopen(read_fd, "rb")
        self._lines: deque[str] = deque(maxlen=TAIL_LINES)
        self._thread = threading.Thread(target=self._run, name="remote-stderr", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        with self._reader:
            for raw in self._reader:
                line = raw.decode("utf-8", "replace").rstrip()
                if line:
                    self._lines.append(line[:LINE_CHARS])

    def tail(self) -> str:
        """The last line written that says something (tracebacks end with the error itself)."""
        lines = list(self._lines)
        return lines[-1] if lines else ""

    def lines(self) -> list[str]:
        return list(self._lines)

    def close_writer(self) -> None:
        with contextlib.suppress(OSError):
            self.writer.close()

    def close(self, timeout: float = 2.0) -> None:
        """Close our write end and wait for the reader (it ends once the child's copy is closed too)."""
        self.close_writer()
        self._thread.join(timeout)
