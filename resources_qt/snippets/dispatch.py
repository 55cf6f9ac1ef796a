"""The pool's dispatcher: a bounded, fair queue of calls, one thread per worker slot, deadlines and shutdown.

Scheduling: each call goes to an idle slot; while every worker is busy the
pool keeps one spare (temporary) worker warm, up to 2 x `workers` in all,
so a read of another resource does not wait behind slow ones. At most
`resource_concurrency` calls of one resource (one snippet key) run at once,
so a slow resource cannot take every worker. Calls that cannot run wait in
one queue of at most `max_queued_reads`; past that a call is answered at once
with -32000 "busy". A call's deadline is fixed when it is submitted: time in
the queue counts, and a reaper thread answers queued calls whose deadline
passed. Every call is answered exactly once, by whoever took it off the queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from resources_qt.errors import ReaderFailedError
from resources_qt.snippets import messages
from resources_qt.snippets.lending import Lending
from resources_qt.snippets.listeners import Listeners
from resources_qt.snippets.output import ReadOutputListener, SnippetOutput
from resources_qt.snippets.pool_limits import Limits
from resources_qt.snippets.process import WorkerProcess
from resources_qt.snippets.protocol import Call, Failed, Reply, WorkerConfig, source_digest
from resources_qt.snippets.slot import RECHECK, Job, Recheck, Slot, settle

__all__ = ["Dispatcher", "Job", "Limits", "OutputListener"]

logger = logging.getLogger(__name__)

OutputListener = Callable[[str, str], None]
"""`listener(key, text)`: text a snippet printed, called on a pool thread."""

_SURGE_IDLE_SECONDS = 10.0
_SPARE_DELAY_SECONDS = 0.02
"""How long a queued call waits for the workers an event loop drives before a spare worker takes it."""
_LIVENESS_SECONDS = 1.0
_REAPER_IDLE_SECONDS = 5.0
_T = TypeVar("_T")


class Dispatcher(Lending):
    """The pool's state, shared by its slot threads, its reaper and its finalizer (never the pool object)."""

    def __init__(self, limits: Limits, *, prelude: str) -> None:
        lock = threading.RLock()
        self.lock = lock
        """Guards all of the dispatcher's state; every condition below shares it."""
        self.cond = threading.Condition(lock)
        self._reaper_cond = threading.Condition(lock)
        self.limits = limits
        self.prelude = prelude
        self.prelude_digest = source_digest(prelude)
        self.generation = 0
        self.closed = False
        self.started = False
        self.jobs: deque[Job[Any]] = deque()
        self.running: dict[str, int] = {}
        self.slots: list[Slot] = []
        self.output: Listeners[[str, str]] = Listeners("Snippet output listener")
        self.read_output: Listeners[[SnippetOutput]] = Listeners("Snippet read-output listener")
        self._numbers = itertools.count(1)
        self.lent_calls = 0
        """Calls driven by an event loop on a lent worker (`lend`)."""
        self.queued_calls = 0
        """Calls that took the queue (`submit`), busy answers included."""
        self._reaper: threading.Thread | None = None
        self._reaper_wakes_at = math.inf
        """When the sleeping reaper wakes on its own (-inf while it is awake)."""

    # -- settings the pool reads ----------------------------------------------------

    @property
    def workers(self) -> int:
        return self.limits.workers

    @property
    def timeout(self) -> float:
        return self.limits.timeout

    @property
    def memory_limit_mb(self) -> int:
        return self.limits.memory_limit_mb

    # -- configuration -------------------------------------------------------------

    def start(self) -> None:
        with self.cond:
            self._start_locked()

    def _start_locked(self) -> None:
        if self.closed:
            raise ReaderFailedError("The snippet pool is closed")
        if not self.started:
            self.started = True
            self._resize_locked()
            self._reaper = threading.Thread(target=self._reap, name="snippet-deadlines", daemon=True)
            self._reaper.start()

    def _resize_locked(self) -> None:
        permanent = [s for s in self.slots if not s.temporary and not s.retiring]
        for _ in range(self.limits.workers - len(permanent)):
            self._add_slot_locked(temporary=False)
        for slot in sorted(permanent, key=lambda s: s.state != "idle")[self.limits.workers :]:
            slot.retiring = True
        self._wake_all_locked()

    def _add_slot_locked(self, *, temporary: bool) -> None:
        slot = Slot(self, next(self._numbers), temporary=temporary)
        self.slots.append(slot)
        slot.thread.start()

    def _keep_spare_locked(self) -> None:
        # A worker kept warm while all others are busy: a fast read of another
        # resource then starts at once instead of waiting for a process to start.
        if len(self.slots) >= self.limits.most:
            return
        if not any(s.state in ("idle", "starting") and not s.retiring for s in self.slots):
            self._add_slot_locked(temporary=True)

    def configure(self, **changes: Any) -> None:
        """Apply the given `Limits` fields; worker-level limits replace workers as they become idle."""
        with self.cond:
            limits = self.limits
            respawn = False
            for name, value in changes.items():
                if value is None or getattr(limits, name) == value:
                    continue
                setattr(limits, name, value)
                respawn = respawn or name in ("memory_limit_mb", "max_processes", "max_file_size_mb", "project_dir")
                if name == "workers" and self.started and not self.closed:
                    self._resize_locked()
            if respawn:
                self.generation += 1
            self._wake_all_locked()

    def set_prelude(self, source: str) -> None:
        with self.cond:
            self.prelude = source
            self.prelude_digest = source_digest(source)

    def prelude_version(self) -> tuple[str, str]:
        with self.cond:
            return self.prelude, self.prelude_digest

    def add_listener(self, callback: OutputListener) -> Callable[[], None]:
        return self.output.add(callback)

    def add_read_listener(self, callback: ReadOutputListener) -> Callable[[], None]:
        return self.read_output.add(callback)

    def emit_output(self, key: str, text: str) -> None:
        self.output.emit(key, text)

    def emit_read_output(self, output: SnippetOutput) -> None:
        self.read_output.emit(output)

    def worker_pids(self) -> list[int]:
        with self.cond:
            return [pid for s in self.slots if s.worker is not None and (pid := s.worker.pid) is not None]

    def queued(self) -> int:
        with self.cond:
            return len(self.jobs)

    # -- jobs ----------------------------------------------------------------------

    def submit(
        self,
        call: Call,
        timeout: float | None,
        convert: Callable[[Call, Reply], _T],
        *,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> Future[_T]:
        """Queue `call`; `loop`: the event loop that awaits it (it may then run it on a worker it holds)."""
        future: Future[_T] = Future()
        with self.cond:
            self._start_locked()
            self.queued_calls += 1
            seconds = self.limits.timeout if timeout is None else timeout
            now = time.monotonic()
            job = Job(call, seconds, now + seconds, future, lambda r: convert(call, r), queued_at=now, loop=loop)
            idle = sum(1 for s in self.slots if s.state in ("idle", "starting") and not s.retiring)
            if self._waiting_locked(idle) >= self.limits.max_queued_reads:
                busy = Failed("busy", messages.busy(call, len(self.jobs)))
            else:
                busy = None
                runnable = self.running.get(call.key, 0) < self.limits.per_resource
                # The first call a spare could take: the spares' threads hear of it (see _announce_locked).
                first = runnable and self._first_runnable_locked() is None
                self.jobs.append(job)
                future.add_done_callback(lambda done: self._forget_cancelled(job, done))
                if not runnable:
                    self._watch_deadline_locked(job)  # it will wait for its own resource
                elif idle < len(self.jobs):
                    self._keep_spare_locked()
                    self._watch_deadline_locked(job)
                self._announce_locked(first=first)
        if busy is not None:
            settle(job, busy)
        return future

    def _forget_cancelled(self, job: Job[Any], future: Future[Any]) -> None:
        # However its caller gave up (a cancelled task, stdio's notifications/cancelled), a cancelled
        # call stops counting toward `max_queued_reads` now, not when a worker or the reaper next looks.
        if future.cancelled():
            with self.cond, contextlib.suppress(ValueError):  # taken meanwhile
                self.jobs.remove(job)

    def withdraw(self, future: Future[Any], *, answer: Reply) -> bool:
        """Take the queued call of `future` out of the queue and answer it `answer` (its caller left);
        False if a worker took it already."""
        with self.cond:
            for job in self.jobs:
                if job.future is future:
                    self.jobs.remove(job)
                    break
            else:
                return False
        settle(job, answer)
        return True

    def _watch_deadline_locked(self, job: Job[Any]) -> None:
        # The reaper sleeps until the nearest deadline; a later one needs no wake-up (under load every
        # submit would otherwise wake it, and each wake-up takes the GIL from the server's loop).
        if job.deadline < self._reaper_wakes_at:
            self._reaper_cond.notify()

    def _announce_locked(self, *, first: bool = False) -> None:
        """Wake the slot threads that may take a queued call (`first`: the only one that can run now).

        A thread whose worker is lent sleeps on; a spare's thread wakes for the first runnable call,
        and otherwise when the first runnable call is old enough for it (`_pick_locked`).
        """
        self.cond.notify_all()
        for slot in self.slots:
            if slot.held:
                # Whether or not its thread waits apart yet (it may still be in the wait it was in when
                # the worker was lent): its loop runs the call on it, or hands the worker back.
                self.recall_locked(slot)
            if not slot.waiting_apart:
                continue
            lent_to = slot.lent_to
            if lent_to is None:
                if first or not slot.temporary:
                    slot.wake.notify()
            elif lent_to.is_closed():
                slot.wake.notify()  # its borrower is gone: the thread takes its worker back now

    def _wake_all_locked(self) -> None:
        """Wake every slot thread, lent or not (the pool closes, resizes or changes its settings)."""
        self.cond.notify_all()
        for slot in self.slots:
            slot.wake.notify()
            self.recall_locked(slot)

    def _waiting_locked(self, free_slots: int) -> int:
        """Queued calls no free worker is about to take (their resource is at its limit, or no worker is free)."""
        jobs = self.jobs
        if not jobs:
            return 0
        limit = self.limits.per_resource
        room: dict[str, int] = {}
        runnable = 0
        for job in jobs:
            key = job.call.key
            left = room.get(key, limit - self.running.get(key, 0))
            if left > 0:
                runnable += 1
            room[key] = left - 1
        return len(jobs) - min(free_slots, runnable)

    def take(self, slot: Slot) -> Job[Any] | Recheck | None:
        with self.cond:
            self._release_locked(slot)
            slot.state = "idle"
            # Only a slot whose thread waits in here may be lent: between a call's end and this point
            # the thread still touches its worker.
            slot.parked = True
            try:
                return self._wait_for_work_locked(slot)
            finally:
                slot.parked = False

    def _wait_for_work_locked(self, slot: Slot) -> Job[Any] | Recheck | None:
        deadline = time.monotonic() + _SURGE_IDLE_SECONDS if slot.temporary else None
        while True:
            lent_to = slot.lent_to
            if lent_to is not None and not (self.closed or slot.retiring):
                if not lent_to.is_closed():
                    # Apart from the other threads: calls queued meanwhile are not for this one, and
                    # waking it on each of them would take the GIL from the loop that drives its worker.
                    self._wait_apart_locked(slot, _LIVENESS_SECONDS)
                    continue
                self._reclaim_locked(slot)
                self._step_aside_locked()
                return RECHECK
            if self.closed or slot.retiring:
                if slot.lent_to is not None:
                    slot.orphaned = True  # the loop that holds the worker stops it when its call ends
                self._step_aside_locked()
                return None
            if slot.generation != self.generation:
                slot.state = "starting"
                self._step_aside_locked()
                return RECHECK
            job = self._pick_locked(spare=slot.temporary)
            if job is not None:
                key = job.call.key
                self.running[key] = self.running.get(key, 0) + 1
                slot.running_key = key
                slot.state = "busy"
                job.taken_at = time.monotonic()
                if self.jobs:
                    self._keep_spare_locked()
                return job
            if slot.worker is not None and not slot.worker.alive:
                # Killed while idle (by the OOM killer, say): replace it now,
                # not when a read finds it dead.
                slot.state = "starting"
                self._step_aside_locked()
                return RECHECK
            if deadline is None:
                self.cond.wait(_LIVENESS_SECONDS)
                continue
            now = time.monotonic()
            if self.jobs:
                deadline = now + _SURGE_IDLE_SECONDS  # calls are waiting: stay warm
            remaining = deadline - now
            if remaining <= 0:
                slot.retiring = True
                self._step_aside_locked()
                return None
            self._wait_apart_locked(slot, min(remaining, _LIVENESS_SECONDS, self._spare_wait_locked(now)))

    def _step_aside_locked(self) -> None:
        """A slot that might have taken the next queued call will not (it retires, stops or replaces its
        worker): the spares, told of queued calls only as they arrive, must look at the queue now."""
        if self.jobs and self._first_runnable_locked() is not None:
            self._announce_locked(first=True)

    def _wait_apart_locked(self, slot: Slot, seconds: float) -> None:
        slot.waiting_apart = True
        try:
            slot.wake.wait(seconds)
        finally:
            slot.waiting_apart = False

    def _spare_wait_locked(self, now: float) -> float:
        """Until the first runnable queued call is old enough for a spare worker to take it."""
        found = self._first_runnable_locked()
        if found is None:
            return math.inf
        return max(0.001, found[1].queued_at + _SPARE_DELAY_SECONDS - now)

    def _reclaim_locked(self, slot: Slot) -> None:
        if slot.held:
            self._take_back_held_locked(slot)
            return
        # The loop ended with the call in flight: its fd watches died with it and nobody will give the
        # worker back. Take it back and replace it (an out-of-date generation): its state is unknown.
        logger.warning("Snippet worker %s was lent to an event loop that closed mid-call; replacing it", slot.name)
        self._release_locked(slot)
        slot.lent_to = None
        slot.generation = -1
        slot.state = "starting"

    def detach_worker(self, slot: Slot) -> WorkerProcess | None:
        """The worker a finishing slot thread must stop: None while it is lent (its borrower stops it)."""
        with self.cond:
            if slot.lent_to is not None:
                slot.orphaned = True
                return None
            worker, slot.worker = slot.worker, None
            return worker

    def _pick_locked(
        self, *, for_loop: asyncio.AbstractEventLoop | None = None, spare: bool = False
    ) -> Job[Any] | None:
        """The first queued call whose resource is under its limit; with `for_loop`, only if that call
        is awaited by that loop (a loop must never hold another caller's answer: it may close).

        `spare`: for a spare worker, which takes a call only once it has waited `_SPARE_DELAY_SECONDS`
        while loops drive the other workers: under a load of fast reads the loops' workers take the
        queue at once, and a third process and its thread would only compete with them for the CPU
        and the GIL; behind slow reads the spare takes the call after that short wait.
        """
        found = self._first_runnable_locked()
        if found is None:
            return None
        index, job = found
        if for_loop is not None and job.loop is not for_loop:
            return None
        if (
            spare
            and job.loop is not None
            and job.queued_at + _SPARE_DELAY_SECONDS > time.monotonic()
            and any(s.lent_to is job.loop for s in self.slots)
        ):
            return None  # the loop that awaits it holds a worker, which takes it when its call ends
        del self.jobs[index]
        return job

    def _first_runnable_locked(self) -> tuple[int, Job[Any]] | None:
        limit = self.limits.per_resource
        running = self.running
        for index, job in enumerate(self.jobs):
            if running.get(job.call.key, 0) < limit:
                return index, job
        return None

    def _release_locked(self, slot: Slot) -> None:
        key, slot.running_key = slot.running_key, None
        if key is not None:
            count = self.running.get(key, 0) - 1
            if count > 0:
                self.running[key] = count
            else:
                self.running.pop(key, None)
            if self.jobs:
                # A call of this resource may be runnable now, on any idle slot.
                self._announce_locked()

    def _reap(self) -> None:
        while True:
            with self.cond:
                if self.closed:
                    return
                now = time.monotonic()
                expired = [job for job in self.jobs if job.deadline <= now]  # cancelled ones left already
                for job in expired:
                    self.jobs.remove(job)
                if not expired:
                    nearest = min((job.deadline for job in self.jobs), default=now + _REAPER_IDLE_SECONDS)
                    self._reaper_wakes_at = nearest
                    self._reaper_cond.wait(max(0.0, nearest - now))
                    self._reaper_wakes_at = -math.inf  # awake: it rescans the queue before it sleeps again
                    continue
            for job in expired:
                settle(job, Failed("timeout", messages.timed_out_queued(job.call, job.timeout, job.timeout)))

    def worker_settings(self, slot: Slot) -> tuple[WorkerConfig | None, int]:
        with self.cond:
            if self.closed or slot.retiring:
                return None, self.generation
            if slot.worker is None or not slot.worker.alive or slot.generation != self.generation:
                slot.state = "starting"
            return self.worker_config()

    def worker_config(self, *, concurrent: bool = False) -> tuple[WorkerConfig, int]:
        """How a worker starts now, and the settings' generation it belongs to (`concurrent`: a shared one)."""
        with self.cond:
            limits = self.limits
            config = WorkerConfig(
                limits.memory_limit_mb,
                limits.output_limit,
                os.getpid(),
                max_processes=limits.max_processes,
                max_file_size_mb=limits.max_file_size_mb,
                project_dir=limits.project_dir,
                concurrent=concurrent,
            )
            return config, self.generation

    def attach(self, slot: Slot, worker: WorkerProcess, generation: int) -> bool:
        with self.cond:
            if self.closed or slot.retiring:
                return False
            slot.worker = worker
            slot.generation = generation
            self.cond.notify_all()
            return True

    def finishing(self, slot: Slot) -> None:
        with self.cond:
            self._release_locked(slot)
            if slot.state == "busy":
                slot.state = "idle" if slot.worker is not None and slot.worker.alive else "starting"
                if slot.state == "starting":
                    self._step_aside_locked()

    def fail_next(self, why: str) -> None:
        # With no worker able to start, failing beats letting callers hang.
        with self.cond:
            job = self.jobs.popleft() if self.jobs else None
        if job is not None:
            self.fail_job(job, why)

    @staticmethod
    def fail_job(job: Job[Any], why: str) -> None:
        settle(job, Failed("unavailable", messages.unavailable(job.call, why)))

    def pause(self, seconds: float) -> None:
        with self.cond:
            if not self.closed:
                self.cond.wait(seconds)

    def slot_finished(self, slot: Slot, *, crashed: bool) -> None:
        with self.cond:
            if slot.lent_to is None:  # a lent call keeps counting against its limit; give_back releases it
                self._release_locked(slot)
            slot.state = "stopped"
            if slot in self.slots:
                self.slots.remove(slot)
            if crashed and not self.closed:
                self._resize_locked()
            self._step_aside_locked()
            self.cond.notify_all()

    def wait_ready(self, timeout: float | None) -> bool:
        def ready() -> bool:
            up = sum(1 for s in self.slots if s.worker is not None and not s.temporary and not s.retiring)
            return self.closed or up >= self.limits.workers

        with self.cond:
            if self.closed:
                return False
            self._start_locked()
            return self.cond.wait_for(ready, timeout) and not self.closed

    def close(self) -> None:
        with self.cond:
            if self.closed:
                return
            self.closed = True
            pending = list(self.jobs)
            self.jobs.clear()
            slots = list(self.slots)
            for slot in slots:
                if slot.state == "busy" and slot.worker is not None:
                    slot.worker.interrupt()
            self._wake_all_locked()
            self._reaper_cond.notify_all()
        for job in pending:
            self.fail_job(job, "the snippet pool was closed")
        current = threading.current_thread()
        deadline = time.monotonic() + 10.0
        for slot in slots:
            if slot.thread is not current and slot.thread.is_alive():
                slot.thread.join(max(0.0, deadline - time.monotonic()))
        for slot in slots:
            # A slot thread that did not finish in time leaves its worker; kill it.
            if slot.worker is not None:
                slot.worker.interrupt()
