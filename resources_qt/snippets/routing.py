"""Per-call output capture in one process: a stdout/stderr proxy installed once, routed by a context variable."""

from __future__ import annotations

import io
import sys
import threading
from contextvars import ContextVar
from typing import Any, TextIO

from resources_qt.snippets.capture import OutputCapture

__all__ = ["Collected", "ThreadCapture", "install_output_routing", "route"]


class Collected:
    """What one call printed, bounded by `limit` bytes (the rest counted and reported in one line)."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._lock = threading.Lock()  # a snippet's own threads inherit the context and print too
        self.chunks: list[list[str]] = []
        self._sent = 0
        self._dropped = 0

    def add(self, stream: str, text: str, *, budgeted: bool = True) -> None:
        with self._lock:
            if budgeted:
                size = len(text.encode("utf-8", "replace"))
                room = self._limit - self._sent
                if size > room:
                    self._dropped += size - max(room, 0)
                    text = text.encode("utf-8", "replace")[: max(room, 0)].decode("utf-8", "ignore")
                self._sent += len(text.encode("utf-8", "replace"))
            if not text:
                return
            if self.chunks and self.chunks[-1][0] == stream:
                self.chunks[-1][1] += text
            else:
                self.chunks.append([stream, text])

    def finish(self) -> tuple[tuple[str, str], ...]:
        if self._dropped:
            self.add("stderr", f"\n[output truncated: {self._dropped} more bytes were dropped]\n", budgeted=False)
            self._dropped = 0
        with self._lock:
            return tuple((stream, text) for stream, text in self.chunks)


route: ContextVar[Collected | None] = ContextVar("resource_snippet_output", default=None)


class _RoutedStream(io.TextIOBase):
    """`sys.stdout`/`sys.stderr` of a server running thread readers: a read's text goes to its call, the rest
    to the stream this one replaced (the server's own prints and every other thread are unaffected)."""

    def __init__(self, stream: str, inner: TextIO) -> None:
        super().__init__()
        self._stream = stream
        self.inner = inner

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        collected = route.get()
        if collected is None:
            return self.inner.write(text)
        collected.add(self._stream, str(text))
        return len(text)

    def flush(self) -> None:
        if route.get() is None:
            self.inner.flush()

    @property
    def buffer(self) -> Any:
        """The replaced stream's bytes (the SDK's stdio transport claims fd 1 through it)."""
        return self.inner.buffer

    def close(self) -> None:
        """Nothing: the proxy owns no stream (and Python flushes `sys.stdout` at exit, after collecting it)."""

    @property
    def closed(self) -> bool:
        return bool(self.inner.closed)

    def fileno(self) -> int:
        return self.inner.fileno()

    def isatty(self) -> bool:
        return False if route.get() is not None else self.inner.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.inner, "encoding", "utf-8") or "utf-8"


_install_lock = threading.Lock()


def install_output_routing() -> None:
    """Make `sys.stdout`/`sys.stderr` route per call; idempotent (again after someone replaced them)."""
    with _install_lock:
        if not isinstance(sys.stdout, _RoutedStream):
            sys.stdout = _RoutedStream("stdout", sys.stdout)
        if not isinstance(sys.stderr, _RoutedStream):
            sys.stderr = _RoutedStream("stderr", sys.stderr)


class ThreadCapture(OutputCapture):
    """The worker's capture as `CallRunner` uses it (`begin`, `note`), writing to the current call's output."""

    def __init__(self) -> None:
        super().__init__(forward=lambda key, stream, text: None, limit=0)

    def begin(self, key: str) -> None:
        return None

    def note(self, text: str) -> None:
        collected = route.get()
        if collected is not None:
            collected.add("stderr", text, budgeted=False)
