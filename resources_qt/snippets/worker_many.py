"""A worker process that runs many calls at once: each `Tagged` call is a task on the worker's one event loop.

The pool sends this kind of worker only calls whose entry is an `async def`
(`resources_qt.snippets.shared`), so a read awaiting I/O holds neither a
process nor a thread. Everything else is as in a one-call worker
(`resources_qt.snippets.worker`): the same limits, capture and supervisor,
the same `CallRunner`. What differs:

- answers and what a call printed go back tagged with the call's id, its
  Python-level prints routed to it by a context variable set in its task
  (`routing.route`); C-level writes go to the call started last;
- `Cancel(id)` cancels that call's task; it still answers, so the pool knows
  the worker let go of it;
- the guarded modules are put back, and the working directory, whenever the
  worker has no call left running (calls overlap, so not after each one).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from multiprocessing.connection import Connection

from resources_qt.snippets import messages, wire
from resources_qt.snippets.call_runner import CallRunner
from resources_qt.snippets.capture import OutputCapture
from resources_qt.snippets.guard import ModuleGuard
from resources_qt.snippets.protocol import Call, Cancel, Failed, Output, Shutdown, Tagged, WorkerConfig
from resources_qt.snippets.routing import Collected, ThreadCapture, install_output_routing, route

__all__ = ["serve_many"]

logger = logging.getLogger(__name__)

Send = Callable[[bytes], None]


def serve_many(conn: Connection, *, config: WorkerConfig, capture: OutputCapture, guard: ModuleGuard,
               send: Send) -> None:
    """Answer `Tagged` calls, many at once, until the pipe closes or `Shutdown` arrives."""
    _Server(conn, config=config, capture=capture, guard=guard, send=send).run()


class _TaskCapture(ThreadCapture):
    """What `CallRunner` writes (tracebacks) goes to the running task's call; C-level output is named after
    the call started last (the descriptors are shared: nothing finer can tell whose it is)."""

    def __init__(self, fd_capture: OutputCapture) -> None:
        super().__init__()
        self._fd_capture = fd_capture

    def begin(self, key: str) -> None:
        self._fd_capture.begin(key)


class _Server:
    def __init__(self, conn: Connection, *, config: WorkerConfig, capture: OutputCapture, guard: ModuleGuard,
                 send: Send) -> None:
        self._conn = conn
        self._config = config
        self._guard = guard
        self._send_bytes = send
        install_output_routing()  # a call's prints go to it; the rest (module code, threads) to the capture
        self._runner = CallRunner(_TaskCapture(capture), config)
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._loop = asyncio.new_event_loop()
        self._stopping = False

    def run(self) -> None:
        loop = self._loop
        asyncio.set_event_loop(loop)
        loop.add_reader(self._conn.fileno(), self._on_readable)
        while not self._stopping:
            try:
                loop.run_forever()
            except (SystemExit, KeyboardInterrupt):
                # Raised in a task a snippet started itself (asyncio lets these two out of the loop): the
                # calls of this worker go on.
                logger.debug("A snippet's own task raised SystemExit or KeyboardInterrupt")

    def _stop(self) -> None:
        self._stopping = True
        with contextlib.suppress(OSError, ValueError):
            self._loop.remove_reader(self._conn.fileno())
        self._loop.stop()

    def _on_readable(self) -> None:
        conn = self._conn
        try:
            while not self._stopping and conn.poll():
                self._take(conn.recv())
        except (EOFError, OSError):
            self._stop()  # the pool is gone (or closed the pipe): nobody is left to answer

    def _take(self, message: object) -> None:
        if isinstance(message, Tagged):
            call_id, call = message.id, message.call
            task = self._tasks[call_id] = self._loop.create_task(self._run(call_id, call))
            task.add_done_callback(lambda done: self._on_task_done(call_id, call))
        elif isinstance(message, Cancel):
            running = self._tasks.get(message.id)
            if running is not None:
                running.cancel()
        elif isinstance(message, Shutdown):
            self._stop()

    def _on_task_done(self, call_id: int, call: Call) -> None:
        # A task cancelled before its first step never runs `_run`: it still answers, so the pool knows.
        if self._tasks.pop(call_id, None) is not None:
            self._send(Failed("timeout", messages.timed_out_cancelled(call, 0)), call_id, call)
            if not self._tasks:
                self._between_calls()

    async def _run(self, call_id: int, call: Call) -> None:
        collected = Collected(self._config.output_limit)
        route.set(collected)  # this task's own context: only this call's prints land here
        try:
            reply: wire.WorkerMessage = await self._runner.handle_async(call)
        except asyncio.CancelledError:
            # The pool answered the caller already (deadline, or the caller left): this says the call let go.
            reply = Failed("timeout", messages.timed_out_cancelled(call, 0))
        except BaseException as exc:  # handle_async answers for the snippet; this is the worker's own failure
            reply = Failed("internal", messages.internal(call, f"{type(exc).__name__}: {exc}"))
        finally:
            self._tasks.pop(call_id, None)
        for stream, text in collected.finish():
            self._send(Output(call.key, text, "stderr" if stream == "stderr" else "stdout"), call_id, call)
        self._send(reply, call_id, call)
        if not self._tasks:
            self._between_calls()

    def _send(self, message: wire.WorkerMessage, call_id: int, call: Call) -> None:
        try:
            try:
                self._send_bytes(wire.encode(message, call_id=call_id))
            except MemoryError:
                self._send_bytes(wire.encode(
                    Failed("memory", messages.out_of_memory(call, self._config.memory_limit_mb)), call_id=call_id))
            except (OSError, EOFError):
                raise
            except Exception as exc:
                why = f"the result cannot be sent back: {exc}"
                self._send_bytes(wire.encode(Failed("result", messages.call_failed(call, why)), call_id=call_id))
        except (OSError, EOFError):
            self._stop()

    def _between_calls(self) -> None:
        # Only with no call running: a patch a snippet made lasts until then, not into the next idle moment.
        self._guard.restore()
        if self._config.project_dir:
            with contextlib.suppress(OSError):
                os.chdir(self._config.project_dir)
