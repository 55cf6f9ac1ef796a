"""One snippet worker process seen from the pool: start it, call it with a deadline, stop or kill it."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import select
import signal
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess

from resources_qt.snippets import messages, wire
from resources_qt.snippets.protocol import (
    Call,
    CompleteDone,
    Failed,
    NeedSource,
    Output,
    ReadDone,
    Ready,
    Reply,
    Shutdown,
    ValueDone,
    WorkerConfig,
)
from resources_qt.snippets.worker import worker_main

__all__ = ["OutputCallback", "WorkerProcess", "WorkerStartError", "signal_text", "worker_context"]

logger = logging.getLogger(__name__)

_poll = getattr(select, "poll", None)  # not on Windows, where `wait` is used
_POLLIN = getattr(select, "POLLIN", 1)

OutputCallback = Callable[[str, str, str], None]
"""`on_output(key, stream, text)`."""

_MAX_WAIT = 60.0
"""Longest single wait: poll()/select() overflow on timeouts of weeks."""

_SUPERVISOR_SECONDS = 6.0
"""How long a kill waits for the supervisor to end the worker and what it started (it gives itself 5 s)."""

_context_lock = threading.Lock()
_contexts: list[BaseContext] = []


def worker_context() -> BaseContext:
    """The multiprocessing context workers start from: forkserver where available, else spawn.

    Never plain fork: the parent runs Qt and asyncio threads. The forkserver
    preloads the worker module once, so starting or replacing a worker is a
    fork of a small, single-threaded process rather than a new interpreter.
    """
    with _context_lock:
        if not _contexts:
            if "forkserver" in multiprocessing.get_all_start_methods():
                context = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload(["__main__", "resources_qt.snippets.worker"])
                _contexts.append(context)
            else:
                _contexts.append(multiprocessing.get_context("spawn"))
        return _contexts[0]


class WorkerStartError(RuntimeError):
    """A worker process did not come up (it died or did not report ready in time)."""


class WorkerProcess:
    """A worker and the pool's belief about which snippet versions it holds.

    Not thread-safe: one pool slot thread owns it; only `interrupt()` may be
    called from another thread (the pool closing).
    """

    def __init__(self, *, config: WorkerConfig, name: str) -> None:
        self.config = config
        self.name = name
        self._conn: Connection | None = None
        self._process: BaseProcess | None = None
        self._snippets: dict[tuple[str, str], str] = {}
        self._prelude_digest: str | None = None
        self._supervised = False
        self._worker_pid: int | None = None

    @property
    def pid(self) -> int | None:
        """The process running snippets (below its supervisor, where there is one)."""
        if self._process is None:
            return None
        return self._worker_pid or self._process.pid

    @property
    def connection(self) -> Connection | None:
        """The pipe to the worker (for a loop that drives a call itself, `resources_qt.snippets.direct`)."""
        return self._conn

    @property
    def process(self) -> BaseProcess | None:
        return self._process

    def looks_alive(self) -> bool:
        """`alive` from one non-blocking wait on the exit sentinel (poll-based: select() fails at fd 1024)."""
        process = self._process
        if process is None:
            return False
        try:
            if _poll is None:
                return not wait([process.sentinel], 0)
            # One poll(2) with a timeout of 0: it runs before every lent read, and `wait` builds a
            # selector for one descriptor each time.
            poller = _poll()
            poller.register(process.sentinel, _POLLIN)
            return not poller.poll(0)
        except (OSError, ValueError):  # closed meanwhile (the owner's kill)
            return False

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.is_alive()

    def start(self, *, timeout: float = 60.0) -> None:
        """Start the process and wait for it to report ready; raises `WorkerStartError`."""
        context = worker_context()
        parent_conn, child_conn = context.Pipe(duplex=True)
        process = context.Process(  # type: ignore[attr-defined]
            target=worker_main, args=(child_conn, self.config), name=self.name, daemon=True
        )
        started = time.monotonic()
        try:
            process.start()
        except Exception as exc:
            parent_conn.close()
            child_conn.close()
            raise WorkerStartError(f"cannot start a snippet worker: {exc}") from exc
        child_conn.close()
        self._conn, self._process = parent_conn, process
        ready = wait([parent_conn, process.sentinel], timeout)
        message: object = None
        if parent_conn in ready:
            try:
                message = wire.decode(parent_conn.recv_bytes())
            except (EOFError, OSError, wire.WireError):
                message = None
        if not isinstance(message, Ready):
            code = process.exitcode
            self.kill()
            raise WorkerStartError(
                f"the snippet worker process did not start (exit code {code}); if the program's main "
                "script starts a pool when imported, guard that code with if __name__ == '__main__'"
            )
        # A worker answering with a pid other than the process started runs below its supervisor.
        self._supervised = message.pid != process.pid
        self._worker_pid = message.pid
        elapsed_ms = (time.monotonic() - started) * 1000
        logger.debug("Snippet worker %s (pid %s) ready in %.0f ms", self.name, message.pid, elapsed_ms)

    def call(self, call: Call, *, timeout: float, on_output: OutputCallback) -> Reply:
        """Run `call` and return its reply; a timeout or a dead worker becomes a `Failed`.

        After a `Failed` with reason timeout, exited, crashed or memory the
        process is gone and the owner must start a new one.
        """
        conn = self._conn
        process = self._process
        if conn is None or process is None:
            return Failed("unavailable", messages.unavailable(call, "the worker is not running"))
        outgoing = self._strip(call)
        if not self._send(outgoing):
            return self._death(call)
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                return Failed("timeout", messages.timed_out(call, timeout))
            ready = wait([conn, process.sentinel], min(remaining, _MAX_WAIT))
            if not ready:
                continue
            if conn not in ready:
                self._drain_output(on_output)
                return self._death(call)
            try:
                data = conn.recv_bytes()
            except (EOFError, OSError):
                return self._death(call)
            try:
                message = wire.decode(data)
            except wire.WireError as exc:
                # The channel can no longer be trusted to be in step: this
                # call fails and the worker is replaced; nothing else is touched.
                logger.error("Snippet worker %s sent a message that does not decode: %r", self.name, str(exc))
                self.kill()
                return Failed("internal", messages.call_failed(call, f"its answer could not be decoded ({exc})"))
            if isinstance(message, Output):
                _deliver(on_output, message)
            elif isinstance(message, NeedSource):
                if outgoing is call:
                    return Failed(
                        "unavailable", messages.unavailable(call, "the worker lost the snippet source")
                    )
                self._forget()
                outgoing = call
                if not self._send(call):
                    return self._death(call)
            elif isinstance(message, ReadDone | CompleteDone | ValueDone | Failed):
                if isinstance(message, Failed) and message.reason == "memory":
                    self.kill()
                return message

    def stop(self, *, grace: float = 1.0) -> None:
        """Ask the worker to exit; kill it if it does not within `grace` seconds."""
        process = self._process
        if process is None:
            return
        if process.is_alive() and self._conn is not None:
            with contextlib.suppress(OSError, ValueError):
                self._conn.send(Shutdown())
            process.join(grace)
        self.kill()

    def interrupt(self) -> None:
        """Kill the process (and its group) from another thread; the owner's `call` then sees it die."""
        process = self._process
        if process is None:
            return
        # The owner's kill() may close the process object meanwhile: its pid and exitcode then raise.
        with contextlib.suppress(OSError, ValueError):
            if self._supervised:
                self._end_supervised(process)
                return
            _kill_group(process.pid)
            if process.exitcode is None:
                process.kill()

    def kill(self) -> None:
        """End the worker and every process it started, release the connection; idempotent; owner thread only."""
        process = self._process
        if process is not None:
            if self._supervised:
                with contextlib.suppress(OSError, ValueError):
                    self._end_supervised(process)
                process.join(_SUPERVISOR_SECONDS)
            if not self._supervised or process.exitcode is None:
                # No supervisor, or one that did not finish in time: the group is all that can be reached.
                _kill_group(process.pid)
                if process.exitcode is None:
                    with contextlib.suppress(OSError, ValueError):
                        process.kill()
            process.join(5.0)
            with contextlib.suppress(ValueError):  # still running: nothing more can be done from here
                process.close()
        if self._conn is not None:
            self._conn.close()
        self._process = None
        self._conn = None
        self._worker_pid = None

    @staticmethod
    def _end_supervised(process: BaseProcess) -> None:
        # SIGTERM asks the supervisor to kill the worker at once and then everything below it
        # (its session, double forks: the supervisor is their subreaper) before it exits; a
        # SIGKILL would end the supervisor first and leave them to init.
        if process.exitcode is None and process.pid is not None:
            os.kill(process.pid, signal.SIGTERM)

    def prepare(self, call: Call) -> Call:
        """`call` as it goes to this worker: without the sources it already holds."""
        return self._strip(call)

    def sent(self, call: Call) -> None:
        """Record the sources `call` carried (it was written to the pipe)."""
        if call.source is not None:
            self._snippets[(type(call).__name__, call.key)] = call.digest
        if call.prelude is not None:
            self._prelude_digest = call.prelude_digest

    def forget(self) -> None:
        """Believe the worker holds no source (it answered NeedSource)."""
        self._forget()

    def _strip(self, call: Call) -> Call:
        # Source travels only when this worker has not seen that version yet.
        slot = (type(call).__name__, call.key)
        known = self._snippets.get(slot) == call.digest
        prelude_known = self._prelude_digest == call.prelude_digest
        if known or prelude_known:
            return call.without(source=known, prelude=prelude_known)
        return call

    def _send(self, call: Call) -> bool:
        assert self._conn is not None
        try:
            self._conn.send(call)
        except (OSError, ValueError):
            return False
        self.sent(call)
        return True

    def _forget(self) -> None:
        self._snippets.clear()
        self._prelude_digest = None

    def _drain_output(self, on_output: OutputCallback) -> None:
        # What a worker printed just before dying is still in the pipe.
        conn = self._conn
        try:
            while conn is not None and conn.poll(0):
                message = wire.decode(conn.recv_bytes())
                if isinstance(message, Output):
                    _deliver(on_output, message)
        except (EOFError, OSError, wire.WireError):
            pass

    def _death(self, call: Call) -> Failed:
        process = self._process
        code = None
        if process is not None:
            process.join(2.0)
            code = process.exitcode
        self.kill()
        if code is None:
            return Failed("crashed", messages.crashed(call, "the connection to it broke"))
        if code < 0:
            return Failed("crashed", messages.crashed(call, signal_text(-code)))
        return Failed("exited", messages.exited(call, code))


def signal_text(number: int) -> str:
    """How a worker killed by signal `number` is described to the user."""
    try:
        name = signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
    if number == signal.SIGKILL:
        return f"killed by {name}, perhaps by the system's out-of-memory killer"
    described = signal.strsignal(number)
    return f"signal {name}: {described}" if described else f"signal {name}"


def _kill_group(pid: int | None) -> None:
    # The worker (or its supervisor) leads its own process group (worker._own_process_group), so
    # this reaches whatever a snippet forked and left in it; the worker itself is killed too.
    if pid is None or pid <= 0 or not hasattr(os, "killpg"):
        return
    with contextlib.suppress(OSError):
        if os.getpgid(pid) != pid:
            return  # not (or no longer) a group leader: nothing of ours to reach
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)


def _deliver(on_output: OutputCallback, message: Output) -> None:
    try:
        on_output(message.key, message.stream, message.text)
    except Exception:
        logger.exception("Snippet output listener failed")
