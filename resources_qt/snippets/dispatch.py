"""The pool's dispatcher: a queue of calls, one thread per worker slot, growth, replacement and shutdown."""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from resources_qt.errors import ReaderFailedError
from resources_qt.snippets import messages
from resources_qt.snippets.process import WorkerProcess, WorkerStartError
from resources_qt.snippets.protocol import Call, Failed, Reply, WorkerConfig, source_digest

__all__ = ["Dispatcher", "Job", "OutputListener"]

logger = logging.getLogger(__name__)

OutputListener = Callable[[str, str], None]
"""`listener(key, text)`: text a snippet printed, called on a pool thread."""

_SURGE_IDLE_SECONDS = 10.0
_LIVENESS_SECONDS = 1.0
_REPLACED = frozenset({"timeout", "exited", "crashed", "memory"})
_T = TypeVar("_T")
_SlotState = Literal["starting", "idle", "busy", "stopped"]


@dataclass(eq=False)
class Job(Generic[_T]):
    """One queued call; `convert` turns the worker's reply into the future's value or error."""

    call: Call
    timeout: float
    future: Future[_T]
    convert: Callable[[Reply], _T]


class Recheck:
    """take() result: the slot's worker is out of date; restart it, then ask again."""


RECHECK = Recheck()


class _Slot:
    """One pool thread and the worker process it drives."""

    def __init__(self, core: Dispatcher, number: int, *, temporary: bool) -> None:
        self.core = core
        self.temporary = temporary
        self.retiring = False
        self.state: _SlotState = "starting"
        self.worker: WorkerProcess | None = None
        self.generation = -1
        self.name = f"snippet-worker-{number}"
        self.thread = threading.Thread(target=self._run, name=self.name, daemon=True)

    def _run(self) -> None:
        try:
            while self._ensure_worker():
                job = self.core.take(self)
                if job is None:
                    break
                if isinstance(job, Recheck):
                    continue
                if (self.worker is None or not self.worker.alive) and not self._ensure_worker():
                    # The idle worker died on its own and the pool is closing.
                    self.core.fail_job(job, "the snippet pool was closed")
                    break
                self._execute(job)
        except Exception:
            # A bug here must not strand queued calls: the core fails the
            # next one and starts a replacement slot.
            logger.exception("Snippet pool slot %s failed", self.name)
            crashed = True
        else:
            crashed = False
        finally:
            worker, self.worker = self.worker, None
            if worker is not None:
                worker.stop()
        self.core.slot_finished(self, crashed=crashed)

    def _ensure_worker(self) -> bool:
        failures = 0
        while True:
            config, generation = self.core.worker_settings(self)
            if config is None:
                return False
            if self.worker is not None and self.worker.alive and self.generation == generation:
                return True
            if self.worker is not None:
                self.worker.stop()
                self.worker = None
            worker = WorkerProcess(config=config, name=self.name)
            try:
                worker.start()
            except WorkerStartError as exc:
                failures += 1
                logger.error("Snippet worker %s did not start: %s", self.name, exc)
                self.core.fail_next(str(exc))
                self.core.pause(min(0.2 * 2**failures, 5.0))
                continue
            if not self.core.attach(self, worker, generation):
                worker.stop()
                return False

    def _execute(self, job: Job[Any]) -> None:
        if not job.future.set_running_or_notify_cancel():
            return
        worker = self.worker
        assert worker is not None
        reply = worker.call(job.call, timeout=job.timeout, on_output=self.core.emit_output)
        # Counted as available before the caller hears back, so a caller that
        # submits again at once does not make the pool grow for nothing.
        self.core.finishing(self)
        if isinstance(reply, Failed) and reply.reason in _REPLACED:
            if self.core.closed:
                reply = Failed("unavailable", messages.unavailable(job.call, "the snippet pool was closed"))
            else:
                logger.warning("Snippet worker %s replaced: %s", self.name, reply.message)
        try:
            job.future.set_result(job.convert(reply))
        except BaseException as exc:  # noqa: BLE001 - the caller gets whatever it was
            job.future.set_exception(exc)
        if not worker.alive:
            worker.kill()
            self.worker = None


class Dispatcher:
    """The pool's state, shared by its slot threads and its finalizer (never the pool object)."""

    def __init__(
        self, *, workers: int, timeout: float, memory_limit_mb: int, prelude: str, output_limit: int
    ) -> None:
        self.cond = threading.Condition()
        self.workers = workers
        self.timeout = timeout
        self.memory_limit_mb = memory_limit_mb
        self.output_limit = output_limit
        self.prelude = prelude
        self.prelude_digest = source_digest(prelude)
        self.generation = 0
        self.closed = False
        self.started = False
        self.jobs: deque[Job[Any]] = deque()
        self.slots: list[_Slot] = []
        self.listeners: list[OutputListener] = []
        self._numbers = itertools.count(1)

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

    def _resize_locked(self) -> None:
        permanent = [s for s in self.slots if not s.temporary and not s.retiring]
        for _ in range(self.workers - len(permanent)):
            self._add_slot_locked(temporary=False)
        for slot in sorted(permanent, key=lambda s: s.state != "idle")[self.workers :]:
            slot.retiring = True
        self.cond.notify_all()

    def _add_slot_locked(self, *, temporary: bool) -> None:
        slot = _Slot(self, next(self._numbers), temporary=temporary)
        self.slots.append(slot)
        slot.thread.start()

    def configure(self, *, timeout: float | None, memory_limit_mb: int | None, workers: int | None) -> None:
        with self.cond:
            if timeout is not None:
                self.timeout = float(timeout)
            if memory_limit_mb is not None and memory_limit_mb != self.memory_limit_mb:
                self.memory_limit_mb = memory_limit_mb
                self.generation += 1
            if workers is not None and workers != self.workers:
                self.workers = workers
                if self.started and not self.closed:
                    self._resize_locked()
            self.cond.notify_all()

    def set_prelude(self, source: str) -> None:
        with self.cond:
            self.prelude = source
            self.prelude_digest = source_digest(source)

    def prelude_version(self) -> tuple[str, str]:
        with self.cond:
            return self.prelude, self.prelude_digest

    def add_listener(self, callback: OutputListener) -> Callable[[], None]:
        with self.cond:
            self.listeners.append(callback)

        def unsubscribe() -> None:
            with self.cond:
                if callback in self.listeners:
                    self.listeners.remove(callback)

        return unsubscribe

    def emit_output(self, key: str, text: str) -> None:
        with self.cond:
            listeners = list(self.listeners)
        for listener in listeners:
            try:
                listener(key, text)
            except Exception:
                logger.exception("Snippet output listener %r failed", listener)

    def worker_pids(self) -> list[int]:
        with self.cond:
            return [pid for s in self.slots if s.worker is not None and (pid := s.worker.pid) is not None]

    # -- jobs ----------------------------------------------------------------------

    def submit(self, call: Call, timeout: float | None, convert: Callable[[Call, Reply], _T]) -> Future[_T]:
        future: Future[_T] = Future()
        with self.cond:
            self._start_locked()
            job = Job(call, self.timeout if timeout is None else timeout, future, lambda r: convert(call, r))
            self.jobs.append(job)
            available = sum(1 for s in self.slots if s.state in ("idle", "starting") and not s.retiring)
            if available < len(self.jobs) and len(self.slots) < 2 * self.workers:
                # Every worker is busy (a slow reader, say): grow rather than
                # queue a fast read behind it.
                self._add_slot_locked(temporary=True)
            self.cond.notify_all()
        return future

    def take(self, slot: _Slot) -> Job[Any] | Recheck | None:
        with self.cond:
            slot.state = "idle"
            self.cond.notify_all()
            deadline = time.monotonic() + _SURGE_IDLE_SECONDS if slot.temporary else None
            while True:
                if self.closed or slot.retiring:
                    return None
                if slot.generation != self.generation:
                    slot.state = "starting"
                    return RECHECK
                if self.jobs:
                    slot.state = "busy"
                    return self.jobs.popleft()
                if slot.worker is not None and not slot.worker.alive:
                    # Killed while idle (by the OOM killer, say): replace it now,
                    # not when a read finds it dead.
                    slot.state = "starting"
                    return RECHECK
                if deadline is None:
                    self.cond.wait(_LIVENESS_SECONDS)
                    continue
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    slot.retiring = True
                    return None
                self.cond.wait(min(remaining, _LIVENESS_SECONDS))

    def worker_settings(self, slot: _Slot) -> tuple[WorkerConfig | None, int]:
        with self.cond:
            if self.closed or slot.retiring:
                return None, self.generation
            if slot.worker is None or not slot.worker.alive or slot.generation != self.generation:
                slot.state = "starting"
            config = WorkerConfig(self.memory_limit_mb, self.output_limit, os.getpid())
            return config, self.generation

    def attach(self, slot: _Slot, worker: WorkerProcess, generation: int) -> bool:
        with self.cond:
            if self.closed or slot.retiring:
                return False
            slot.worker = worker
            slot.generation = generation
            self.cond.notify_all()
            return True

    def finishing(self, slot: _Slot) -> None:
        with self.cond:
            if slot.state == "busy":
                slot.state = "idle" if slot.worker is not None and slot.worker.alive else "starting"

    def fail_next(self, why: str) -> None:
        # With no worker able to start, failing beats letting callers hang.
        with self.cond:
            job = self.jobs.popleft() if self.jobs else None
        if job is not None:
            self.fail_job(job, why)

    @staticmethod
    def fail_job(job: Job[Any], why: str) -> None:
        if job.future.set_running_or_notify_cancel():
            try:
                job.future.set_result(job.convert(Failed("unavailable", messages.unavailable(job.call, why))))
            except BaseException as exc:  # noqa: BLE001 - the caller gets whatever it was
                job.future.set_exception(exc)

    def pause(self, seconds: float) -> None:
        with self.cond:
            if not self.closed:
                self.cond.wait(seconds)

    def slot_finished(self, slot: _Slot, *, crashed: bool) -> None:
        with self.cond:
            slot.state = "stopped"
            if slot in self.slots:
                self.slots.remove(slot)
            if crashed and not self.closed:
                self._resize_locked()
            self.cond.notify_all()
        if crashed:
            self.fail_next("the snippet pool hit an internal error (see the log)")

    def wait_ready(self, timeout: float | None) -> bool:
        def ready() -> bool:
            up = sum(1 for s in self.slots if s.worker is not None and not s.temporary and not s.retiring)
            return self.closed or up >= self.workers

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
            self.cond.notify_all()
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
