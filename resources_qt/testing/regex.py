"""`matches` expectations searched in a child process that is killed at a deadline: `re` cannot be interrupted."""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Self

__all__ = ["DEFAULT_DEADLINE", "RegexSearcher", "RegexTimeout", "shared_searcher"]

logger = logging.getLogger(__name__)

DEFAULT_DEADLINE = 2.0
"""Seconds one test's `matches` search may take. Python's `re` backtracks: `(a|aa)+b` against 40
characters runs for 42 s, holding the GIL all along, so no thread can stop it; a process can be killed."""

_START_TIMEOUT = 30.0


class RegexTimeout(Exception):
    """The search did not finish within the deadline (the child process that ran it was killed)."""

    def __init__(self, deadline: float) -> None:
        super().__init__(f"timed out after {deadline:g} s")
        self.deadline = deadline


class RegexSearcher:
    """`re.search(pattern, text) is not None`, answered by a child process within `deadline` seconds.

    The child (a fork of the snippet workers' forkserver, started on first
    use) keeps `re`'s compiled-pattern cache between searches; a search that
    outlives the deadline kills it, and the next search starts a new one. The
    semantics are `re`'s own: the child runs the same Python. Thread-safe: one
    search at a time, and the time spent waiting for the previous one does not
    count against the deadline.
    """

    def __init__(self, *, deadline: float = DEFAULT_DEADLINE) -> None:
        if not deadline > 0:
            raise ValueError(f"deadline must be a positive number of seconds, not {deadline!r}")
        self.deadline = deadline
        self._lock = threading.Lock()
        self._conn: Connection | None = None
        self._process: BaseProcess | None = None
        self.started = 0
        """Child processes started so far (one, plus one after each timeout)."""

    def search(self, pattern: str, text: str) -> bool:
        """Whether `pattern` occurs in `text`.

        Raises:
            RegexTimeout: the search took longer than the deadline.
            re.error: `pattern` is not a valid regular expression.
            RuntimeError: the child process could not be started or died.
        """
        with self._lock:
            conn = self._connection()
            try:
                conn.send((pattern, text))
                ready = conn.poll(self.deadline)
            except (OSError, EOFError) as exc:
                self._stop()
                raise RuntimeError(f"the regex search process failed: {exc}") from exc
            if not ready:
                self._stop()
                raise RegexTimeout(self.deadline)
            try:
                kind, value = conn.recv()
            except (OSError, EOFError) as exc:
                self._stop()
                raise RuntimeError(f"the regex search process died: {exc}") from exc
        if kind == "error":
            raise re.error(str(value))
        return bool(value)

    def close(self) -> None:
        """Stop the child process (a later search starts another)."""
        with self._lock:
            self._stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _connection(self) -> Connection:
        if self._conn is not None and self._process is not None and self._process.is_alive():
            return self._conn
        self._stop()
        # The snippet workers' context: a forkserver (never a plain fork of a process running Qt and
        # asyncio threads) whose fork is a few milliseconds.
        from resources_qt.snippets.process import worker_context

        context = worker_context()
        parent, child = context.Pipe(duplex=True)
        process = context.Process(target=_serve, args=(child,), name="regex-search", daemon=True)  # type: ignore[attr-defined]
        try:
            process.start()
        except Exception as exc:
            parent.close()
            child.close()
            raise RuntimeError(f"cannot start the regex search process: {exc}") from exc
        child.close()
        self._conn, self._process = parent, process
        # Waited for apart from the deadline: on a busy machine a fork and an import can take a while.
        try:
            ready = parent.poll(_START_TIMEOUT) and parent.recv() == ("ready", None)
        except (OSError, EOFError):
            ready = False
        if not ready:
            self._stop()
            raise RuntimeError("the regex search process did not start")
        self.started += 1
        return parent

    def _stop(self) -> None:
        conn, process = self._conn, self._process
        self._conn = self._process = None
        if conn is not None:
            conn.close()
        if process is not None:
            with contextlib.suppress(OSError, ValueError):
                process.kill()
                process.join(_START_TIMEOUT)
                process.close()


def _serve(conn: Connection) -> None:
    """The child: answer (pattern, text) with ("found", bool) or ("error", message) until the pipe closes."""
    conn.send(("ready", None))
    while True:
        try:
            pattern, text = conn.recv()
        except (EOFError, OSError):
            return
        try:
            answer: tuple[str, object] = ("found", re.search(pattern, text) is not None)
        except re.error as exc:
            answer = ("error", str(exc))
        conn.send(answer)


_shared_lock = threading.Lock()
_shared: list[RegexSearcher] = []


def shared_searcher() -> RegexSearcher:
    """The process's own searcher with the default deadline, for callers that bring none."""
    with _shared_lock:
        if not _shared:
            _shared.append(RegexSearcher())
        return _shared[0]
