"""The serve command's snippet-output writer: a bounded queue to one writer thread, so no read waits on the sink."""

from __future__ import annotations

import logging
import queue
import threading
from typing import TextIO

from resources_qt.server.logtext import escape_controls
from resources_qt.snippets import SnippetOutput

__all__ = ["DEFAULT_PENDING", "OutputWriter"]

logger = logging.getLogger(__name__)

DEFAULT_PENDING = 256
"""Reads' output blocks that may wait for the sink; more are dropped and counted."""

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

    def __init__(self, sink: TextIO, *, max_pending: int = DEFAULT_PENDING) -> None:
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
    where = escape_controls(f"{output.key} {output.uri}".strip())
    return [
        f"[{where}] {stream}: {escape_controls(line)}\n"
        for stream, text in output.chunks
        for line in text.splitlines()
    ]
