"""The pool's `async def` calls: many at once on a few shared worker processes, driven by one I/O loop.

A call whose entry is an `async def` (read off its source once,
`async_entries`) does not take a one-call worker: it goes to a shared
worker (`shared_worker.SharedWorker`), which runs it as a task beside the
others, so a read awaiting I/O holds no process. The pool starts one shared
worker at the first such call and another while the least loaded one holds
`GROW_AT` calls, up to one per CPU (and never past the pool's most workers);
a worker beyond the first that stays idle `IDLE_SECONDS` is stopped. At most
`resource_concurrency` calls of one resource run at once (`ASYNC_PER_RESOURCE`
under "auto") and at most `MAX_CALLS_PER_WORKER` on one worker; the rest
wait in order in a queue of at most `max_queued_reads`, past which a call is
answered busy. A call's deadline counts from its submission, queue included.

All state lives on the loop that drives the workers: a thread of their own
("snippet-shared-io"), or a server's loop (`drive_on`, as `resource-studio
serve` does), where a call awaited on it crosses no thread. `submit`,
`worker_pids` and `close` may be called from any thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from resources_qt.snippets import messages
from resources_qt.snippets.async_entries import ASYNC_PER_RESOURCE, AsyncEntries
from resources_qt.snippets.process import WorkerProcess, WorkerStartError
from resources_qt.snippets.protocol import Call, Failed, Reply, WorkerConfig
from resources_qt.snippets.shared_worker import Running, SharedWorker
from resources_qt.snippets.slot import Job, settle

if TYPE_CHECKING:
    from resources_qt.snippets.dispatch import Dispatcher

__all__ = ["GROW_AT", "IDLE_SECONDS", "MAX_CALLS_PER_WORKER", "SharedWorkers"]

logger = logging.getLogger(__name__)

GROW_AT = 8
"""Calls the least loaded shared worker holds before another one starts (while there may be more)."""

MAX_CALLS_PER_WORKER = 128
"""Calls one shared worker runs at once; more wait in the queue."""

IDLE_SECONDS = 10.0
"""How long a shared worker beyond the first may stay idle before it is stopped."""

_T = TypeVar("_T")
_CLOSED = "the snippet pool was closed"


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _reap(processes: list[WorkerProcess]) -> None:
    for process in processes:
        process.kill()


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class SharedWorkers:
    """The shared workers of one pool, their queue and their I/O loop (started at the first call)."""

    def __init__(self, core: Dispatcher) -> None:
        self._core = core
        self._entries = AsyncEntries()
        self._lock = threading.Lock()
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pids: list[int] = []
        self._home = False
        """The loop driving the workers is a server's (`drive_on`), not one of their own."""
        self._crossing: set[Job[Any]] = set()
        """Calls submitted from another thread that the loop has not taken yet (under the lock)."""
        # On the loop's thread only:
        self._workers: list[SharedWorker] = []
        self._starting = 0
        self._failures = 0
        self._start_after = 0.0
        self._queue: deque[Job[Any]] = deque()
        self._expiry: dict[Job[Any], asyncio.TimerHandle] = {}
        self._placed: dict[Job[Any], tuple[SharedWorker, int]] = {}
        self._running: dict[str, int] = {}
        self._ids = itertools.count(1)
        self._numbers = itertools.count(1)
        # Starting (up to a minute), stopping and reaping workers block: on threads of their own, never the
        # driving loop's, nor that loop's default executor (a server's other work shares that one).
        self._processes = ThreadPoolExecutor(max_workers=2, thread_name_prefix="snippet-shared-proc")

    def takes(self, call: Call) -> bool:
        """Whether `call` runs here: its entry is an `async def` and the pool is open."""
        return not self._closed and self._entries.is_async(call)

    def worker_pids(self) -> list[int]:
        with self._lock:
            return list(self._pids)

    def queued(self) -> int:
        """Calls waiting for room now (read from any thread: a length is all it looks at)."""
        return len(self._queue)

    def drive_on(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Drive the shared workers on `loop` (a server's own, serving as long as the pool does) instead of a
        thread of their own, so a call awaited there crosses no thread. Only before the first call: False (and
        nothing changes) after it, or once closed. Should `loop` end first, the next call moves them to a thread
        of their own."""
        with self._lock:
            if self._closed or self._loop is not None:
                return False
            self._loop, self._home = loop, True
            return True

    def submit(self, call: Call, timeout: float, convert: Callable[[Call, Reply], _T]) -> Future[_T]:
        """Run `call`; the future is answered once. Cancelling it cancels the call, queued or running."""
        future: Future[_T] = Future()
        now = time.monotonic()
        job: Job[_T] = Job(call, timeout, now + timeout, future, lambda reply: convert(call, reply), queued_at=now)
        loop = self._driving_loop()
        if loop is None:
            settle(job, Failed("unavailable", messages.unavailable(call, _CLOSED)))
            return future
        future.add_done_callback(lambda done: self._on_done(job, done))
        if _running_loop() is loop:
            self._admit(job)  # awaited on the loop that drives the workers: no hop
            return future
        with self._lock:
            self._crossing.add(job)  # until the loop takes it: answered by `close` should the loop end first
        try:
            loop.call_soon_threadsafe(self._admit_crossed, job)
        except RuntimeError:  # closed meanwhile
            self._settle_crossing()
        return future

    def close(self) -> None:
        """Answer every call "unavailable", stop every worker (and the loop of their own); idempotent, any thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop, thread, home = self._loop, self._thread, self._home
        processes: list[WorkerProcess] = []
        if loop is not None and home:
            on_it = _running_loop() is loop
            processes = self._shut_down(stop=False) if on_it else self._shut_down_over(loop)
        elif loop is not None and thread is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._shut_down)
            if thread is not threading.current_thread():
                thread.join(15.0)
        self._settle_crossing()
        if loop is not None and home and _running_loop() is loop:
            # Closed on the server's loop (its finalizer, say): reaping waits seconds, and must not there.
            threading.Thread(target=_reap, args=(processes,), name="snippet-shared-reap", daemon=True).start()
        else:
            _reap(processes)
        self._processes.shutdown(wait=False)

    # -- the loop ------------------------------------------------------------------------

    def _driving_loop(self) -> asyncio.AbstractEventLoop | None:
        abandoned: list[Job[Any]] = []
        with self._lock:
            if self._closed:
                return None
            if self._loop is not None and self._home and self._loop.is_closed():
                abandoned = self._abandon_home_locked()
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=self._serve, args=(self._loop,), name="snippet-shared-io",
                                                daemon=True)
                self._thread.start()
            loop = self._loop
        for job in abandoned:
            settle(job, Failed("unavailable", messages.unavailable(job.call, "the server loop running it ended")))
        return loop

    def _abandon_home_locked(self) -> list[Job[Any]]:
        """The home loop ended with the pool open: nothing runs its callbacks, so its state is this thread's
        now. Its calls are returned to be answered, its workers killed off this thread, the state started over."""
        jobs = [*self._queue, *self._placed, *self._crossing]
        processes = [worker.process for worker in self._workers]
        for worker in self._workers:
            worker.abandon()  # its calls are among `jobs`, answered outside the lock
        threading.Thread(target=_reap, args=(processes,), name="snippet-shared-reap", daemon=True).start()
        self._workers, self._queue, self._expiry, self._placed, self._running = [], deque(), {}, {}, {}
        self._crossing, self._starting, self._pids = set(), 0, []
        self._loop, self._home = None, False
        return jobs

    def _shut_down_over(self, loop: asyncio.AbstractEventLoop) -> list[WorkerProcess]:
        """`_shut_down` on the running home loop, waited for here; done here if that loop is gone."""
        done = threading.Event()
        found: list[WorkerProcess] = []

        def shut_down() -> None:
            found.extend(self._shut_down(stop=False))
            done.set()

        if loop.is_running():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(shut_down)
                if done.wait(10.0):
                    return found
        if loop.is_running():
            logger.error("The server loop did not shut the shared snippet workers down; they are killed")
            return [worker.process for worker in self._workers]
        return self._shut_down(stop=False)  # the loop has ended: nothing else touches this state

    def _admit_crossed(self, job: Job[Any]) -> None:
        with self._lock:
            if job not in self._crossing:
                return  # answered by `close` or a move off an ended loop
            self._crossing.discard(job)
        self._admit(job)

    def _settle_crossing(self) -> None:
        with self._lock:
            jobs, self._crossing = list(self._crossing), set()
        for job in jobs:
            settle(job, Failed("unavailable", messages.unavailable(job.call, _CLOSED)))

    @staticmethod
    def _serve(loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(loop.shutdown_default_executor())
            loop.close()

    def _shut_down(self, *, stop: bool = True) -> list[WorkerProcess]:
        """Answer what is queued and running, kill the workers; the processes are returned to be reaped
        (`stop`: on the loop of their own, which then ends, reaping them first)."""
        queued, self._queue = list(self._queue), deque()
        for handle in self._expiry.values():
            handle.cancel()
        self._expiry.clear()
        for job in queued:
            settle(job, Failed("unavailable", messages.unavailable(job.call, _CLOSED)))
        workers, self._workers = list(self._workers), []
        for worker in workers:
            worker.close(_CLOSED)
        self._placed.clear()
        self._set_pids()
        processes = [worker.process for worker in workers]
        if not stop:
            return processes
        _reap(processes)  # the loop of their own is ending: reaping here holds nobody up
        asyncio.get_running_loop().stop()
        return []

    # -- admitting calls -----------------------------------------------------------------

    def _admit(self, job: Job[Any]) -> None:
        if job.future.done():
            return  # cancelled before it arrived
        if self._closed:
            settle(job, Failed("unavailable", messages.unavailable(job.call, _CLOSED)))
            return
        if not any(queued.call.key == job.call.key for queued in self._queue) and self._try_start(job):
            return
        # A worker starting will take calls at once: those waiting for it do not count as queued yet.
        if len(self._queue) - self._starting * MAX_CALLS_PER_WORKER >= self._core.limits.max_queued_reads:
            settle(job, Failed("busy", messages.busy(job.call, len(self._queue))))
            return
        self._queue.append(job)
        loop = asyncio.get_running_loop()
        self._expiry[job] = loop.call_later(job.deadline - time.monotonic(), self._expire, job)  # uvloop: own clock
        if not self._workers and not self._starting:  # a start failed a moment ago: try again after its pause
            loop.call_later(self._start_after - time.monotonic(), self._retry_start)

    def _retry_start(self) -> None:
        if self._queue and not self._workers and not self._starting:
            self._grow()

    def _try_start(self, job: Job[Any]) -> bool:
        """Start `job` on the least loaded usable worker if its resource and a worker have room."""
        key = job.call.key
        if self._running.get(key, 0) >= self._per_resource():
            return False
        worker = self._pick()
        if worker is None or worker.load >= GROW_AT:
            self._grow()
        if worker is None:
            return False
        self._running[key] = self._running.get(key, 0) + 1
        job.taken_at = time.monotonic()
        call_id = next(self._ids)
        self._placed[job] = (worker, call_id)
        worker.start(call_id, job)
        return True

    def _per_resource(self) -> int:
        return self._core.limits.resource_concurrency or ASYNC_PER_RESOURCE

    def _most(self) -> int:
        return max(1, min(self._core.limits.most, _cpus()))

    def _pick(self) -> SharedWorker | None:
        generation = self._core.generation
        best: SharedWorker | None = None
        for worker in self._workers:
            if worker.generation != generation and not worker.retiring:
                worker.retiring = True  # new settings: it ends once its calls have
                if worker.load == 0 and not worker.dead:
                    self._retire(worker)
                    return self._pick()
            if worker.usable and worker.load < MAX_CALLS_PER_WORKER and (best is None or worker.load < best.load):
                best = worker
        return best

    def _expire(self, job: Job[Any]) -> None:
        self._expiry.pop(job, None)
        with contextlib.suppress(ValueError):
            self._queue.remove(job)
            settle(job, Failed("timeout", messages.timed_out_queued(job.call, job.timeout, job.timeout)))

    def _on_done(self, job: Job[Any], future: Future[Any]) -> None:
        if future.cancelled() and self._loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has ended, and with it the call
                self._loop.call_soon_threadsafe(self._withdraw, job)

    def _withdraw(self, job: Job[Any]) -> None:
        """The caller of `job` left: take it out of the queue, or cancel it on its worker."""
        placed = self._placed.get(job)
        if placed is not None:
            worker, call_id = placed
            worker.cancel(call_id)
            return
        self._unqueue(job)

    def _unqueue(self, job: Job[Any]) -> None:
        """Take `job` off the queue (if it is there) with its expiry timer."""
        with contextlib.suppress(ValueError):
            self._queue.remove(job)
        handle = self._expiry.pop(job, None)
        if handle is not None:
            handle.cancel()

    def _run_queued(self) -> None:
        blocked: set[str] = set()  # a resource's calls start in order: one that cannot start holds the rest
        for job in list(self._queue):
            key = job.call.key
            if key in blocked:
                continue
            if job.future.done():
                self._unqueue(job)  # its expiry timer too: nobody waits for it
                continue
            if self._try_start(job):
                self._unqueue(job)
            else:
                blocked.add(key)
                if self._pick() is None:
                    return  # no worker has room: nothing else can start either

    # -- workers -------------------------------------------------------------------------

    def _on_call_left(self, worker: SharedWorker, running: Running) -> None:
        key = running.job.call.key
        self._placed.pop(running.job, None)
        count = self._running.get(key, 0) - 1
        if count > 0:
            self._running[key] = count
        else:
            self._running.pop(key, None)
        if worker.retiring and worker.load == 0 and not worker.dead and worker in self._workers:
            self._retire(worker)
        if self._queue:
            self._run_queued()
        if worker.load == 0 and not worker.dead and len(self._workers) > 1 and worker in self._workers:
            asyncio.get_running_loop().call_later(IDLE_SECONDS, self._maybe_shrink, worker)

    def _maybe_shrink(self, worker: SharedWorker) -> None:
        if (
            worker in self._workers
            and worker.load == 0
            and len(self._workers) > 1
            and time.monotonic() - worker.idle_since >= IDLE_SECONDS * 0.99
        ):
            self._retire(worker)

    def _retire(self, worker: SharedWorker) -> None:
        self._workers.remove(worker)
        self._set_pids()
        worker.stop(self._in_background)

    def _in_background(self, work: Callable[[], None]) -> None:
        """Run `work` (a stop or a kill, which wait) off the loop; on a thread of its own once the pool closed."""
        try:
            self._processes.submit(work)
        except RuntimeError:  # shut down
            threading.Thread(target=work, name="snippet-shared-reap", daemon=True).start()

    def _on_worker_ended(self, worker: SharedWorker) -> None:
        """Its process died (a crash, a kill at a blocked deadline): reap it off the loop; start over on demand."""
        if worker in self._workers:
            self._workers.remove(worker)
            self._set_pids()
        self._in_background(worker.process.kill)
        if self._queue:
            self._run_queued()

    def _grow(self) -> None:
        # One start at a time: a burst of calls at start-up waits for the first worker, which takes them all.
        # Retiring workers (new settings, a memory overrun) do not hold back a new one: up to as many again.
        usable = sum(1 for worker in self._workers if worker.usable)
        if self._closed or self._starting or usable >= self._most() or len(self._workers) >= 2 * self._most():
            return
        now = time.monotonic()
        if now < self._start_after:
            return
        self._starting += 1
        config, generation = self._core.worker_config(concurrent=True)
        loop = asyncio.get_running_loop()
        name = f"snippet-shared-{next(self._numbers)}"
        started = loop.run_in_executor(self._processes, self._start_process, config, name, loop)
        started.add_done_callback(lambda done: self._on_started(done, generation))

    def _start_process(self, config: WorkerConfig, name: str, loop: asyncio.AbstractEventLoop) -> WorkerProcess:
        process = WorkerProcess(config=config, name=name)
        process.start()
        if self._closed or self._loop is not loop:  # closed, or its loop ended, while it started: nobody drives it
            process.kill()
            raise WorkerStartError(_CLOSED)
        return process

    def _on_started(self, started: asyncio.Future[WorkerProcess], generation: int) -> None:
        self._starting -= 1
        try:
            process = started.result()
        except Exception as exc:
            self._on_start_failed(str(exc))
            return
        if self._closed:
            process.kill()  # closed while it started: the pool's executor may be shut already
            return
        self._failures = 0
        worker = SharedWorker(process, asyncio.get_running_loop(), generation=generation, core=self._core,
                              finished=self._on_call_left, ended=self._on_worker_ended)
        self._workers.append(worker)
        self._set_pids()
        self._run_queued()

    def _on_start_failed(self, why: str) -> None:
        if self._closed:
            return
        logger.error("A shared snippet worker did not start: %s", why)
        self._failures += 1
        self._start_after = time.monotonic() + min(0.2 * 2**self._failures, 5.0)
        if not self._workers:
            # Nothing can run the queued calls now: failing beats letting their callers wait for the deadline.
            for job in list(self._queue):
                self._unqueue(job)
                settle(job, Failed("unavailable", messages.unavailable(job.call, why)))

    def _set_pids(self) -> None:
        pids = [pid for worker in self._workers if (pid := worker.process.pid) is not None]
        with self._lock:
            self._pids = pids
