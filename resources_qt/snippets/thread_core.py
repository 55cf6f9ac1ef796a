"""The thread readers' dispatcher: queued jobs, the runner threads, per-resource limits and deadlines."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import heapq
import itertools
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from resources_qt.errors import ReaderFailedError
from resources_qt.snippets import messages
from resources_qt.snippets.async_entries import ASYNC_PER_RESOURCE, AsyncEntries
from resources_qt.snippets.call_runner import CallRunner
from resources_qt.snippets.dispatch import OutputListener
from resources_qt.snippets.namespace import set_project_dir
from resources_qt.snippets.output import ReadOutputListener, SnippetOutput
from resources_qt.snippets.pool_limits import auto_per_resource
from resources_qt.snippets.protocol import (
    Call,
    Failed,
    NeedSource,
    ReadCall,
    Reply,
    WorkerConfig,
    source_digest,
)
from resources_qt.snippets.routing import Collected, ThreadCapture, install_output_routing, route
from resources_qt.snippets.thread_async import AsyncLane

__all__ = ["MAX_HUNG_THREADS", "ThreadCore"]

logger = logging.getLogger(__name__)

MAX_HUNG_THREADS = 32
"""Timed-out threads replaced at once; past that a hung thread's place stays taken (the pool shrinks)."""

SPARE_IDLE_SECONDS = 10.0
"""How long a thread started past `workers` (while jobs queued) waits for another job before it ends."""

_HEAP_SLACK = 64
"""Answered jobs the deadline heap may hold beyond twice the live ones before it is rebuilt without them."""

_MOST_BACKOFF = 4
"""Looks that found a thread free stretch the next one up to 2**4 times `GROW_AFTER_SECONDS` (80 ms)."""

GROW_AFTER_SECONDS = 0.005
"""How long every thread must have been running its current job, with jobs queued, before another starts.
Readers that answer in microseconds never hold a thread that long (their jobs may queue, waiting for the
GIL, but more threads would only take turns at it: 9-11% fewer fast reads at 16 connections when a queue
alone started them); readers waiting on I/O do."""

_T = TypeVar("_T")


@dataclass(eq=False)
class _Job:
    call: Call
    future: Future[Any] | asyncio.Future[Any]
    convert: Callable[[Call, Reply], Any]
    deadline: float
    timeout: float
    submitted: float
    loop: asyncio.AbstractEventLoop | None = None  # set: `future` is that loop's, resolved there
    began: float = 0.0  # when a thread took it
    state: str = "queued"  # queued -> running -> done
    runner: _Runner | None = None  # None while running: on the async lane
    cancel: Callable[[], None] | None = None  # set on the async lane


@dataclass(eq=False)
class _Runner:
    number: int
    generation: int
    hung: bool = False
    retiring: bool = False
    job: _Job | None = None
    thread: threading.Thread | None = field(default=None, repr=False)


class ThreadCore:
    """The thread pool's state, shared by its threads and its deadline thread (never the ThreadReaders object).

    One lock, two conditions on it: `cond` wakes one runner per queued job (waking them all made every idle
    thread take the GIL in turn for each read), `_deadline_cond` wakes the deadline thread only when the
    earliest deadline moves (a job submitted behind an earlier deadline needs no wake-up).

    `workers` threads are kept; while jobs queue and every thread has been running its job for
    `GROW_AFTER_SECONDS`, the deadline thread starts another, one at a time up to `most` (a reader
    waiting on I/O holds its thread, not the CPU), and each one past `workers` ends after
    `SPARE_IDLE_SECONDS` without a job.
    """

    def __init__(
        self,
        *,
        workers: int,
        most: int | None = None,
        timeout: float,
        output_limit: int,
        max_queued: int,
        per_resource: int | None,
        project_dir: str,
        prelude: str,
        memory_limit_mb: int,
    ) -> None:
        lock = threading.RLock()
        self.cond = threading.Condition(lock)
        self._deadline_cond = threading.Condition(lock)
        self.workers = workers
        self.most = max(workers, most or workers)
        self.timeout = timeout
        self.output_limit = output_limit
        self.max_queued = max_queued
        self.per_resource = per_resource
        self.project_dir = project_dir
        self.memory_limit_mb = memory_limit_mb
        self.prelude = prelude
        self.prelude_digest = source_digest(prelude)
        self.generation = 0
        self.started = False
        self.closed = False
        self.jobs: deque[_Job] = deque()
        self.running: dict[str, int] = {}
        self.runners: list[_Runner] = []
        self.idle = 0
        self.hung = 0
        self.hung_total = 0
        self.calls = 0
        self.deadlines: list[tuple[float, int, _Job]] = []
        self._grow_armed = False  # the deadline thread will look whether every thread is held by a long job
        self._free_looks = 0  # looks in a row that found a thread between jobs
        self._seq = itertools.count()
        self._numbers = itertools.count(1)
        self.listeners: list[OutputListener] = []
        self.read_listeners: list[ReadOutputListener] = []
        self.async_entries = AsyncEntries()
        self._lane: AsyncLane | None = None

    # -- threads ---------------------------------------------------------------------

    def start_locked(self) -> None:
        if self.closed:
            raise ReaderFailedError("The snippet thread pool is closed")
        if self.started:
            return
        self.started = True
        install_output_routing()
        if self.project_dir:
            set_project_dir(Path(self.project_dir))
        self.resize_locked()
        threading.Thread(target=self._watch_deadlines, name="snippet-thread-deadlines", daemon=True).start()

    def resize_locked(self) -> None:
        active = self.active_locked()
        for runner in active[self.most :]:
            runner.retiring = True
        for _ in range(self.workers - len(active)):
            self._add_runner_locked()
        self.cond.notify_all()

    def active_locked(self) -> list[_Runner]:
        """The threads that take jobs: neither hung nor retiring."""
        return [r for r in self.runners if not r.hung and not r.retiring]

    def _may_grow_locked(self) -> bool:
        if len(self.jobs) <= self.idle or len(self.active_locked()) >= self.most:
            return False
        waiting = 0  # for a thread: calls of `async def` entries wait for the lane, which has room for all
        for job in self.jobs:
            waiting += not self._is_known_async(job.call)
            if waiting > self.idle:
                return True
        return False

    def _grow_wait_locked(self, now: float) -> float | None:
        """Start a thread if every one is held by a long job; seconds until the next look, or None."""
        if not self._may_grow_locked():
            self._free_looks = 0
            return None
        active = self.active_locked()
        began = [runner.job.began for runner in active if runner.job is not None]
        if len(began) < len(active):  # one is between jobs: it takes the next one itself
            # Fast reads keep a queue and a thread between jobs: look less often, each look costs the GIL.
            self._free_looks = min(self._free_looks + 1, _MOST_BACKOFF)
            return GROW_AFTER_SECONDS * (1 << self._free_looks)
        self._free_looks = 0
        held = now - max(began)
        if held < GROW_AFTER_SECONDS:
            return GROW_AFTER_SECONDS - held
        self._add_runner_locked()
        return GROW_AFTER_SECONDS

    def _add_runner_locked(self) -> None:
        runner = _Runner(next(self._numbers), self.generation)
        runner.thread = threading.Thread(
            target=self._run, args=(runner,), name=f"snippet-thread-{runner.number}", daemon=True
        )
        self.runners.append(runner)
        runner.thread.start()

    def _take(self, runner: _Runner) -> _Job | None:
        with self.cond:
            while True:
                if self.closed or runner.retiring or runner.hung:
                    self._leave_locked(runner)
                    return None
                job = self._first_runnable_locked()
                if job is not None:
                    self.jobs.remove(job)
                    self._begin_locked(job)
                    job.runner, runner.job = runner, job
                    return job
                spare = len(self.active_locked()) > self.workers
                self.idle += 1
                try:
                    woken = self.cond.wait(SPARE_IDLE_SECONDS if spare else None)
                finally:
                    self.idle -= 1
                if not woken and not self.jobs and len(self.active_locked()) > self.workers:
                    runner.retiring = True  # a spare that found nothing to do for SPARE_IDLE_SECONDS

    def _first_runnable_locked(self) -> _Job | None:
        for job in self.jobs:
            if self._has_room_locked(job.call):
                return job
        return None

    def _has_room_locked(self, call: Call) -> bool:
        """Whether another call of `call`'s resource may run now (`resource_concurrency`): in the reader
        threads "auto" is the threads' share, on the async lane `ASYNC_PER_RESOURCE`."""
        cap = self.per_resource
        if not cap:
            if self._is_known_async(call):
                cap = ASYNC_PER_RESOURCE
            else:
                auto = self.most > self.workers  # only "auto" grows
                cap = auto_per_resource(workers=self.workers, most=self.most, auto=auto)
        return self.running.get(call.key, 0) < cap

    def _begin_locked(self, job: _Job) -> None:
        job.state, job.began = "running", time.monotonic()
        self.running[job.call.key] = self.running.get(job.call.key, 0) + 1

    def _release_locked(self, key: str) -> None:
        left = self.running.get(key, 1) - 1
        if left:
            self.running[key] = left
        else:
            self.running.pop(key, None)
        self._dispatch_locked()  # a job held back by its resource's cap may be runnable now

    def _dispatch_locked(self) -> None:
        """Start every runnable queued call of an `async def` entry on the lane (a reader thread would only
        hand it on: one more wake-up a read); wake a thread if another call is runnable."""
        runnable_in_threads = False
        for job in list(self.jobs):
            if not self._has_room_locked(job.call):
                continue
            if self._is_known_async(job.call):
                self.jobs.remove(job)
                self._begin_locked(job)
                self._lend_locked(job)
            else:
                runnable_in_threads = True
        if runnable_in_threads and self.idle:
            self.cond.notify()

    def _leave_locked(self, runner: _Runner) -> None:
        with contextlib.suppress(ValueError):
            self.runners.remove(runner)

    def _run(self, runner: _Runner) -> None:
        worker: CallRunner | None = None
        loop_generation = -1
        while True:
            job = self._take(runner)
            if job is None:
                break
            if worker is None or loop_generation != self.generation:
                # A new project folder: fresh snippet modules see the new PROJECT_DIR, as new workers would.
                worker, loop_generation = CallRunner(ThreadCapture(), self._config()), self.generation
            if self._is_async(job.call):
                with self.cond:
                    if job.state == "running":  # not answered at its deadline meanwhile
                        runner.job = job.runner = None
                        self._lend_locked(job)
                        continue
            else:
                self._call(worker, job)
            with self.cond:
                runner.job = None
                self._release_locked(job.call.key)
                if runner.hung:  # answered at its deadline; a replacement took its place
                    self.hung -= 1
                    logger.warning("A timed-out snippet thread (%s) finished after all", job.call.key)
                    self._leave_locked(runner)
                    self.cond.notify_all()
                    break
        _close_loop(worker)

    def _config(self) -> WorkerConfig:
        return WorkerConfig(
            memory_limit_mb=self.memory_limit_mb,
            output_limit=self.output_limit,
            parent_pid=os.getpid(),
            project_dir=self.project_dir,
        )

    # -- the async lane ------------------------------------------------------------------

    def _is_async(self, call: Call) -> bool:
        """Whether the call's entry is an `async def` (read off its source once, so later calls go straight
        to the lane from `_submit`)."""
        return self.async_entries.is_async(call)

    def _lend_locked(self, job: _Job) -> None:
        """Run a started job on the async lane: no reader thread waits for it."""
        if self.closed:
            job.state = "done"
            self._release_locked(job.call.key)
            _settle(job, Failed("unavailable", messages.unavailable(job.call, "the snippet thread pool was closed")))
            return
        if self._lane is None:
            self._lane = AsyncLane(output_limit=self.output_limit)
        job.cancel = self._lane.start(
            job.call,
            config=self._config(),
            generation=self.generation,
            finished=functools.partial(self._on_lane_finished, job),
        )

    def _on_lane_finished(
        self, job: _Job, reply: Reply | None, chunks: tuple[tuple[str, str], ...], started: float
    ) -> None:
        if chunks:
            self._emit(job.call, started, chunks)
        with self.cond:
            answered = job.state == "done"
            job.state = "done"
            self._release_locked(job.call.key)
        if answered:
            return
        if reply is None:  # cancelled as the pool closed
            reply = Failed("unavailable", messages.unavailable(job.call, "the snippet thread pool was closed"))
        _settle(job, reply)

    def _call(self, worker: CallRunner, job: _Job) -> None:
        call = job.call
        collected = Collected(self.output_limit)
        started = time.time()
        token = route.set(collected)
        try:
            reply: Reply | NeedSource = worker.handle(call)
        except BaseException as exc:  # handle() answers for the snippet; this is the pool's own failure
            logger.exception("A snippet thread failed running %s", call.key)
            reply = Failed("internal", messages.internal(call, f"{type(exc).__name__}: {exc}"))
        finally:
            route.reset(token)
        if isinstance(reply, NeedSource):  # every call carries its sources: cannot happen
            reply = Failed("internal", messages.internal(call, "the snippet's source was missing"))
        chunks = collected.finish()
        if chunks:
            self._emit(call, started, chunks)
        with self.cond:
            answered = job.state == "done"
            job.state = "done"
        if not answered:
            _settle(job, reply)

    def _emit(self, call: Call, started: float, chunks: tuple[tuple[str, str], ...]) -> None:
        uri = call.uri if isinstance(call, ReadCall) else ""
        output = SnippetOutput(call.key, uri, started, chunks)
        with self.cond:
            listeners, read_listeners = list(self.listeners), list(self.read_listeners)
        for listener in listeners:
            _quietly(listener, call.key, output.text)
        for read_listener in read_listeners:
            _quietly(read_listener, output)

    # -- submission and deadlines --------------------------------------------------------

    def submit(self, call: Call, timeout: float | None, convert: Callable[[Call, Reply], _T]) -> Future[_T]:
        """Queue `call`; its answer, `convert`ed on the answering thread, resolves the returned future."""
        future: Future[_T] = Future()
        self._submit(call, timeout, convert, future, None)
        return future

    def submit_on(
        self, call: Call, timeout: float | None, convert: Callable[[Call, Reply], _T], loop: asyncio.AbstractEventLoop
    ) -> asyncio.Future[_T]:
        """As `submit`, answered straight on `loop` (one call_soon_threadsafe; no concurrent future between)."""
        future: asyncio.Future[_T] = loop.create_future()
        self._submit(call, timeout, convert, future, loop)
        return future

    def _submit(
        self,
        call: Call,
        timeout: float | None,
        convert: Callable[[Call, Reply], Any],
        future: Future[Any] | asyncio.Future[Any],
        loop: asyncio.AbstractEventLoop | None,
    ) -> None:
        now = time.monotonic()
        with self.cond:
            seconds = self.timeout if timeout is None else timeout
            job = _Job(call, future, convert, now + seconds, seconds, now, loop)
            answer: Reply | None = None
            if self.closed:
                answer = Failed("unavailable", messages.unavailable(call, "the snippet thread pool was closed"))
            else:
                self.start_locked()
                self.calls += 1
                if len(self.jobs) >= self.max_queued + self.idle:
                    answer = Failed("busy", messages.busy(call, len(self.jobs)))
                else:
                    self._push_deadline_locked(job)
                    lent = self._is_known_async(call)
                    if lent and self._next_in_line_locked(call) and self._has_room_locked(call):
                        # Its entry is an `async def` with room under its cap: no reader thread hands it on.
                        self._begin_locked(job)
                        self._lend_locked(job)
                    elif lent:
                        self.jobs.append(job)  # started from the lane by `_dispatch_locked` as a place frees
                    else:
                        self.jobs.append(job)
                        self.cond.notify()
                        if not self._grow_armed and self._may_grow_locked():
                            self._grow_armed = True
                            self._deadline_cond.notify()
        if answer is not None:
            job.state = "done"
            _settle(job, answer)

    def _push_deadline_locked(self, job: _Job) -> None:
        deadlines = self.deadlines
        if len(deadlines) > 2 * (len(self.jobs) + sum(self.running.values())) + _HEAP_SLACK:
            # Answered jobs stay in the heap until they reach its top (removal is O(n)); kept to a bounded share
            # of it, they are never popped in one long burst under the lock (20,000 after 5 s of fast reads).
            deadlines[:] = [entry for entry in deadlines if entry[2].state != "done"]
            heapq.heapify(deadlines)
        heapq.heappush(deadlines, (job.deadline, next(self._seq), job))
        if deadlines[0][2] is job:
            self._deadline_cond.notify()

    def _is_known_async(self, call: Call) -> bool:
        return self.async_entries.known_async(call)

    def _next_in_line_locked(self, call: Call) -> bool:
        """No call of its resource waits before it (a resource's calls start in order)."""
        return not any(queued.call.key == call.key for queued in self.jobs)

    def _watch_deadlines(self) -> None:
        with self.cond:
            while not self.closed:
                now = time.monotonic()
                while self.deadlines and self.deadlines[0][0] <= now:
                    _, _, job = heapq.heappop(self.deadlines)
                    self._expire_locked(job, now)
                # Answered jobs stay in the heap (removal is O(n)); dropped from its top here, they would otherwise
                # wake this thread once per read as their deadlines pass, each wake taking the GIL from the loop.
                while self.deadlines and self.deadlines[0][2].state == "done":
                    heapq.heappop(self.deadlines)
                wait = self.deadlines[0][0] - now if self.deadlines else None
                grow = self._grow_wait_locked(now)
                self._grow_armed = grow is not None
                if grow is not None:
                    wait = grow if wait is None else min(wait, grow)
                self._deadline_cond.wait(wait)

    def _expire_locked(self, job: _Job, now: float) -> None:
        if job.state == "done":
            return
        call = job.call
        if job.state == "queued":
            self.jobs.remove(job)
            reply = Failed("timeout", messages.timed_out_queued(call, job.timeout, now - job.submitted))
        elif job.runner is None:  # on the async lane: cancelled, so it ends at its next await
            assert job.cancel is not None
            job.cancel()
            reply = Failed("timeout", messages.timed_out_cancelled(call, job.timeout))
            logger.warning("Async snippet %s timed out and was cancelled", call.key)
        else:
            runner = job.runner
            runner.hung = True
            self.hung += 1
            self.hung_total += 1
            reply = Failed("timeout", _timed_out(call, job.timeout, self.hung))
            logger.warning("Snippet thread %s timed out running %s; %d hung now", runner.number, call.key, self.hung)
            if self.hung <= MAX_HUNG_THREADS:
                self._add_runner_locked()
            else:
                logger.error("%d snippet threads are hung: timed-out threads are no longer replaced", self.hung)
        job.state = "done"
        # Settled off the lock's critical path would reorder answers; settling is quick (a future's callbacks).
        _settle(job, reply)

    def close(self) -> None:
        with self.cond:
            if self.closed:
                return
            self.closed = True
            jobs, self.jobs = list(self.jobs), deque()
            for job in jobs:
                job.state = "done"
            self.cond.notify_all()
            self._deadline_cond.notify_all()
            lane, self._lane = self._lane, None
        if lane is not None:
            lane.close()  # what runs there is cancelled and answered unavailable
        for job in jobs:
            _settle(job, Failed("unavailable", messages.unavailable(job.call, "the snippet thread pool was closed")))


def _timed_out(call: Call, timeout: float, hung: int) -> str:
    return (
        f"{messages.subject(call)} timed out after {timeout:g} s; it runs in a thread of the server, which cannot "
        f"be stopped ({hung} such thread{'s' if hung != 1 else ''} still running)"
    )


def _settle(job: _Job, reply: Reply) -> None:
    future = job.future
    if job.loop is not None:
        assert isinstance(future, asyncio.Future)
        try:
            value, error = job.convert(job.call, reply), None
        except BaseException as exc:
            value, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is waiting any more
            job.loop.call_soon_threadsafe(_resolve, future, value, error)
        return
    assert isinstance(future, Future)
    if not future.set_running_or_notify_cancel():
        return  # its caller cancelled it
    try:
        future.set_result(job.convert(job.call, reply))
    except BaseException as exc:
        future.set_exception(exc)


def _resolve(future: asyncio.Future[Any], value: object, error: BaseException | None) -> None:
    if future.done():  # its caller cancelled it
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


def _quietly(listener: Callable[..., None], *args: Any) -> None:
    try:
        listener(*args)
    except Exception:
        logger.exception("A snippet output listener failed")


def _close_loop(worker: CallRunner | None) -> None:
    loop: asyncio.AbstractEventLoop | None = getattr(worker, "_loop", None)
    if loop is not None and not loop.is_closed():
        with contextlib.suppress(Exception):
            loop.close()


