"""The thread readers' async lane: one event loop in its own thread, where `async def` entries run many at once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable

from resources_qt.snippets import messages
from resources_qt.snippets.call_runner import CallRunner
from resources_qt.snippets.protocol import Call, Failed, NeedSource, Reply, WorkerConfig
from resources_qt.snippets.routing import Collected, ThreadCapture, route

__all__ = ["AsyncLane", "Finished"]

logger = logging.getLogger(__name__)

Finished = Callable[[Reply | None, tuple[tuple[str, str], ...], float], None]
"""Called on the lane's thread once a call ends: its reply (None: cancelled), what it printed, when it began."""


class AsyncLane:
    """Runs calls whose entry is an `async def` on one loop, so a read awaiting I/O holds no reader thread.

    The snippets share this loop between calls (module-level async clients
    stay bound to a live loop, as in a worker process); each call's output is
    routed to it alone (`routing.route`, set in the call's own task). A call
    is cancelled through the function `start` returns. A snippet that blocks
    inside its `async def` (a sync sleep, say) holds up every call on the lane
    until it returns: their deadlines still answer the clients. Thread-safe.
    """

    def __init__(self, *, output_limit: int) -> None:
        self._output_limit = output_limit
        self._loop = asyncio.new_event_loop()
        self._worker: CallRunner | None = None
        self._generation = -1
        self._entries: set[_Entry] = set()  # on the loop's thread only
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name="snippet-thread-async", daemon=True)
        self._thread.start()

    def start(self, call: Call, *, config: WorkerConfig, generation: int, finished: Finished) -> Callable[[], None]:
        """Run `call` on the lane; `finished` hears how it ended, once. Returns what cancels it (any thread)."""
        entry = _Entry(call, config, generation, finished)
        with self._lock:
            if self._closed:
                raise RuntimeError("the async lane is closed")
            if threading.get_ident() == self._thread.ident:
                self._loop.call_soon(self._begin, entry)  # a call that ended here starts the next: no wake-up
            else:
                self._loop.call_soon_threadsafe(self._begin, entry)

        def cancel() -> None:
            with contextlib.suppress(RuntimeError):  # the loop has ended: so has the call
                self._loop.call_soon_threadsafe(self._cancel, entry)

        return cancel

    def close(self) -> None:
        """Cancel what runs (each `finished` hears None) and end the loop's thread; idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._loop.call_soon_threadsafe(self._shut_down)

    # -- on the loop's thread ----------------------------------------------------------------------

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()

    def _begin(self, entry: _Entry) -> None:
        # Never after `_shut_down`: `start` refuses once `close` has scheduled it, and callbacks run in order.
        entry.task = self._loop.create_task(self._run(entry))
        self._entries.add(entry)
        # Also for a task cancelled before its first step, which never enters `_run`.
        entry.task.add_done_callback(lambda _task: self._end(entry))

    def _end(self, entry: _Entry) -> None:
        self._entries.discard(entry)
        entry.finish(None, (), time.time())  # nothing when `_run` has answered

    def _cancel(self, entry: _Entry) -> None:
        if entry.task is not None:
            entry.task.cancel()

    def _shut_down(self) -> None:
        tasks = [entry.task for entry in self._entries if entry.task is not None]
        for task in tasks:
            task.cancel()

        async def stop_when_done() -> None:
            await asyncio.gather(*tasks, return_exceptions=True)
            self._loop.stop()

        self._loop.create_task(stop_when_done())

    async def _run(self, entry: _Entry) -> None:
        call = entry.call
        if self._worker is None or entry.generation != self._generation:
            # A new project folder: fresh snippet modules see the new PROJECT_DIR, as the reader threads' do.
            self._worker, self._generation = CallRunner(ThreadCapture(), entry.config), entry.generation
        worker = self._worker
        collected = Collected(self._output_limit)
        route.set(collected)  # this task's own context: only this call's prints land here
        started = time.time()
        reply: Reply | NeedSource | None
        try:
            reply = await worker.handle_async(call)
        except asyncio.CancelledError:
            reply = None
        except BaseException as exc:  # handle_async answers for the snippet; this is the lane's own failure
            logger.exception("The async snippet lane failed running %s", call.key)
            reply = Failed("internal", messages.internal(call, f"{type(exc).__name__}: {exc}"))
        if isinstance(reply, NeedSource):  # every call carries its sources: cannot happen
            reply = Failed("internal", messages.internal(call, "the snippet's source was missing"))
        entry.finish(reply, collected.finish(), started)


class _Entry:
    """One call on the lane and its task; `finish` passes on how it ended, the first time only."""

    def __init__(self, call: Call, config: WorkerConfig, generation: int, finished: Finished) -> None:
        self.call = call
        self.config = config
        self.generation = generation
        self.task: asyncio.Task[None] | None = None
        self._finished: Finished | None = finished

    def finish(self, reply: Reply | None, chunks: tuple[tuple[str, str], ...], started: float) -> None:
        finished, self._finished = self._finished, None
        if finished is None:
            return
        try:
            finished(reply, chunks, started)
        except Exception:
            logger.exception("Finishing an async snippet call failed (%s)", self.call.key)
