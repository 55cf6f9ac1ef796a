"""Runs the render child (render_child.py) for one document, with a deadline and a memory limit, and reads its answer.

A PDF or SVG can be made to take minutes or gigabytes to draw (a 3 KB PDF deflated twice from
1.5 GB, 13 MB of drawing operators, a path of 20,000 crossing lines), and neither PDFium nor
QSvgRenderer can be interrupted; QSvgRenderer also holds the GIL while it draws, so a worker thread
drawing it stalls the window. In a child process the work is killed at the deadline, an
allocation past the limit fails there, and the window never waits on it. Qt-free: runs on a
preview worker thread.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

__all__ = ["CHILD_SCRIPT", "ChildAnswer", "ChildMessage", "run_render_child"]

CHILD_SCRIPT = Path(__file__).with_name("render_child.py")
_HEADER_LIMIT = 4096
_CRASH_SIGNALS = {signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS, signal.SIGTRAP, signal.SIGILL}


@dataclass(frozen=True)
class ChildMessage:
    """One message from the child: its JSON header and the raw bytes that followed it (often none)."""

    header: dict[str, Any]
    payload: bytes = b""


@dataclass
class ChildAnswer:
    """What the child sent before it finished or was stopped, and why it stopped early ("" when it did not).

    `failure` completes "the PDF ...": "took more than 10 s to render", "needed more than 512 MB".
    """

    messages: list[ChildMessage] = field(default_factory=list)
    failure: str = ""
    elapsed: float = 0.0


def _feed(stdin: Any, job: bytes, data: bytes) -> None:
    try:
        stdin.write(job)
        stdin.write(data)
    except (BrokenPipeError, OSError, ValueError):
        pass  # the child stopped (or was killed) before reading it all: its exit says why
    finally:
        with contextlib.suppress(OSError):
            stdin.close()


class _Reader:
    """Splits the child's output into messages as it arrives, refusing oversized ones."""

    def __init__(self, max_payload: int) -> None:
        self._buffer = bytearray()
        self._header: dict[str, Any] | None = None
        self._max_payload = max_payload
        self.messages: list[ChildMessage] = []

    def feed(self, chunk: bytes) -> str:
        """Take `chunk`; returns a problem when the child sent something it must not."""
        self._buffer += chunk
        while True:
            if self._header is None:
                end = self._buffer.find(b"\n")
                if end < 0:
                    return "sent a malformed answer" if len(self._buffer) > _HEADER_LIMIT else ""
                try:
                    header = json.loads(bytes(self._buffer[:end]))
                except ValueError:
                    return "sent a malformed answer"
                if not isinstance(header, dict):
                    return "sent a malformed answer"
                del self._buffer[: end + 1]
                size = header.get("bytes", 0)
                if not isinstance(size, int) or not 0 <= size <= self._max_payload:
                    return f"sent {size} bytes in one message, over the {self._max_payload} allowed"
                self._header = header
            size = self._header.get("bytes", 0)
            if len(self._buffer) < size:
                return ""
            self.messages.append(ChildMessage(self._header, bytes(self._buffer[:size])))
            del self._buffer[:size]
            self._header = None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def run_render_child(
    kind: str, data: bytes, *, options: dict[str, Any], seconds: float, memory_mb: int, max_payload: int
) -> ChildAnswer:
    """Draw `data` (kind "pdf" or "svg") in a child; blocks the calling thread (never the GIL) up to `seconds`.

    The child may use `memory_mb` of address space and send messages of up to `max_payload` bytes.
    """
    job = json.dumps({"kind": kind, "memory_mb": memory_mb, "size": len(data), "options": options}).encode() + b"\n"
    answer = ChildAnswer()
    started = time.monotonic()
    deadline = started + seconds
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            [sys.executable, "-I", str(CHILD_SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=env,
        )
        assert process.stdin is not None and process.stdout is not None
        feeder = threading.Thread(target=_feed, args=(process.stdin, job, data), daemon=True, name="render-feed")
        feeder.start()
        reader = _Reader(max_payload)
        try:
            problem = _read_until(process.stdout, reader, deadline, seconds)
        except BaseException:
            _reap(process, started)
            raise
        finally:
            process.stdout.close()
        status, usage = _reap(process, deadline if not problem else started)
        feeder.join()
        answer.messages = reader.messages
        answer.elapsed = time.monotonic() - started
        answer.failure = problem or _exit_problem(status, reader.messages, memory_mb, usage, errors)
    if answer.failure:
        logger.info("render child (%s, %d bytes) stopped: %s", kind, len(data), answer.failure)
    return answer


def _read_until(stdout: Any, reader: _Reader, deadline: float, seconds: float) -> str:
    """Read messages until the child closes its output; a problem when it is late or sends what it must not."""
    descriptor = stdout.fileno()
    with selectors.DefaultSelector() as selector:
        selector.register(descriptor, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return f"took more than {seconds:g} s to render"
            if not selector.select(left):
                continue
            chunk = os.read(descriptor, 1 << 20)
            if not chunk:
                return ""
            problem = reader.feed(chunk)
            if problem:
                return problem


def _reap(process: subprocess.Popen[bytes], kill_at: float) -> tuple[int, Any]:
    """Wait for the child (killing it at `kill_at`), and mark it reaped; its exit status and resource use."""
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            process.returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            return process.returncode, usage
        if time.monotonic() >= kill_at:
            process.kill()
            kill_at = float("inf")
        time.sleep(0.005)  # the child is exiting (it closed its output) or dying of SIGKILL


def _exit_problem(code: int, messages: list[ChildMessage], memory_mb: int, usage: Any, errors: Any) -> str:
    """Why the child ended without "done" ("" when it finished)."""
    if messages and messages[-1].header.get("done"):
        return ""
    for message in messages:
        if message.header.get("memory"):
            return f"needed more than {memory_mb} MB"
        if "error" in message.header and not message.header.get("unreadable"):
            return str(message.header["error"])
    if any(m.header.get("unreadable") or m.header.get("invalid") for m in messages):
        return ""  # an answer of its own: the caller reads it
    peak_mb = usage.ru_maxrss / 1024
    if code < 0 and -code in _CRASH_SIGNALS and peak_mb >= memory_mb * 0.4:
        # Native code (PDFium, Qt) aborts when an allocation fails under RLIMIT_AS.
        return f"needed more than {memory_mb} MB"
    errors.seek(0, os.SEEK_END)
    errors.seek(max(0, errors.tell() - 2000))
    tail = errors.read().decode("utf-8", "replace").strip().splitlines()
    last = tail[-1][:200] if tail else ""
    how = _signal_name(-code) if code < 0 else f"exit code {code}"
    if "MemoryError" in last:
        return f"needed more than {memory_mb} MB"
    return f"made the renderer stop ({how}{': ' + last if last else ''})"
