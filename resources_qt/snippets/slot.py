"""One pool slot: a thread driving one worker process, and the queued call (Job) it runs."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from resources_qt.snippets import messages
from resources_qt.snippets.output import SnippetOutput, add_chunk
from resources_qt.snippets.process import WorkerProcess, WorkerStartError
from resources_qt.snippets.protocol import Call, Failed, ReadCall, Reply

if TYPE_CHECKING:
    from resources_qt.snippets.channel import Channel
    from resources_qt.snippets.dispatch import Dispatcher

__all__ = ["RECHECK", "Job", "Recheck", "Slot", "replaced_answer", "settle", "timeout_text", "verdict"]

logger = logging.getLogger(__name__)

_REPLACED = frozenset({"timeout", "exited", "crashed", "memory", "internal"})
_T = TypeVar("_T")
SlotState = Literal["starting", "idle", "busy", "stopped"]


@dataclass(eq=False)
class Job(Generic[_T]):
    """One call: answered exactly once, by whoever removed it from the queue (a slot, the reaper, close)."""

    call: Call
    timeout: float
    deadline: float
    """time.monotonic() by which the caller must hear back; queue time counts."""
    future: Future[_T]
    convert: Callable[[Reply], _T]
    queued_at: float = field(default_factory=time.monotonic)
    taken_at: float = 0.0
    loop: Any = None
    """The event loop awaiting the answer, if any: only that loop may run it on a lent worker."""


class Recheck:
    """take() result: the slot's worker is out of date; restart it, then ask again."""


RECHECK = Recheck()


def timeout_text(job: Job[Any], *, cancelled: bool = False) -> str:
    """How `job` past its deadline is answered: naming its wait for a worker when that took a while, else
    its worker replaced (or, `cancelled`, the call cancelled: an `async def` entry on a shared worker)."""
    waited = job.taken_at - job.queued_at
    if waited >= 0.05:
        return messages.timed_out_queued(job.call, job.timeout, waited)
    if cancelled:
        return messages.timed_out_cancelled(job.call, job.timeout)
    return messages.timed_out(job.call, job.timeout)


def settle(job: Job[Any], reply: Reply) -> None:
    """Answer `job` with `reply` (converted); a job already answered or cancelled is left alone."""
    future = job.future
    if not future.running():
        try:
            if not future.set_running_or_notify_cancel():
                return  # cancelled by its caller: nobody is waiting
        except RuntimeError:
            return  # answered already: once is the rule
    try:
        value = job.convert(reply)
    except BaseException as exc:
        _set(job.future.set_exception, exc)
    else:
        _set(job.future.set_result, value)


def _set(setter: Callable[[Any], None], value: Any) -> None:
    try:
        setter(value)
    except Exception:  # InvalidStateError: answered already; once is the rule
        logger.debug("A snippet call was answered twice; the second answer is dropped")


def verdict(reply: Reply, *, killed: bool, pipe_closed: bool) -> bool:
    """Whether the worker that gave `reply` lives on (both paths decide it here, so they cannot diverge).

    `killed`: its deadline's kill was sent, whatever it answered; `pipe_closed`: its pipe hit EOF.
    """
    if killed or pipe_closed:
        return False
    return not (isinstance(reply, Failed) and reply.reason in _REPLACED)


def replaced_answer(core: Dispatcher, call: Call, reply: Reply, *, name: str) -> Reply:
    """`reply` as the caller hears it: a replaced worker is logged, or named closed when the pool closes."""
    if isinstance(reply, Failed) and reply.reason in _REPLACED:
        if core.closed:
            return Failed("unavailable", messages.unavailable(call, "the snippet pool was closed"))
        logger.warning("Snippet worker %s replaced: %r", name, reply.message)
    return reply


class Slot:
    """One pool thread and the worker process it drives."""

    def __init__(self, core: Dispatcher, number: int, *, temporary: bool) -> None:
        self.core = core
        self.temporary = temporary
        self.retiring = False
        self.state: SlotState = "starting"
        self.worker: WorkerProcess | None = None
        self.generation = -1
        self.running_key: str | None = None
        self.lent_to: asyncio.AbstractEventLoop | None = None
        """The event loop driving a call on this slot's worker (`resources_qt.snippets.direct`), if any."""
        self.parked = False
        """The slot's thread waits for work in `Dispatcher.take` (only then may its worker be lent)."""
        self.orphaned = False
        """The slot's thread ended while the worker was lent: whoever has it stops it."""
        self.channel: Channel | None = None
        """The lent worker's pipe as `lent_to` watches it (`resources_qt.snippets.channel`)."""
        self.held = False
        """Lent and idle: the loop keeps the worker (and its pipe registered) for its next call."""
        self.recalling = False
        """The holding loop was asked to hand the worker on (`Dispatcher.recall_locked`)."""
        self.wake = threading.Condition(core.lock)
        """What the thread waits on apart from the others (the dispatcher's lock, a queue of its own):
        while its worker is lent, and, for a spare, while idle."""
        self.waiting_apart = False
        self.name = f"snippet-worker-{number}"
        self.thread = threading.Thread(target=self._run, name=self.name, daemon=True)

    def _run(self) -> None:
        job: Job[Any] | None = None
        try:
            while self._ensure_worker():
                taken = self.core.take(self)
                if taken is None:
                    break
                if isinstance(taken, Recheck):
                    continue
                job = taken
                if (self.worker is None or not self.worker.alive) and not self._ensure_worker():
                    # The idle worker died on its own and the pool is closing.
                    self.core.finishing(self)
                    settle(job, Failed("unavailable", messages.unavailable(job.call, "the snippet pool was closed")))
                    job = None
                    break
                self._execute(job)
                job = None
        except Exception:
            # A bug here fails only the call this slot held; the core starts a replacement slot.
            logger.exception("Snippet pool slot %s failed", self.name)
            crashed = True
            if job is not None:
                self.core.finishing(self)
                settle(job, Failed("internal", messages.internal(job.call, "its pool thread failed (see the log)")))
        else:
            crashed = False
        finally:
            worker = self.core.detach_worker(self)
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
            self.core.finishing(self)
            return
        call = job.call
        chunks: list[list[str]] = []
        started_wall = time.time()

        def on_output(key: str, stream: str, text: str) -> None:
            add_chunk(chunks, stream, text)
            self.core.emit_output(key, text)

        worker = self.worker
        reply: Reply
        try:
            assert worker is not None
            remaining = job.deadline - time.monotonic()
            if remaining <= 0:
                reply = Failed("timeout", timeout_text(job))
            else:
                reply = worker.call(call, timeout=remaining, on_output=on_output)
                if isinstance(reply, Failed) and reply.reason == "timeout":
                    reply = Failed("timeout", timeout_text(job))
        except Exception as exc:
            logger.exception("Snippet call on %s failed inside the pool", self.name)
            reply = Failed("internal", messages.internal(call, f"{type(exc).__name__}: {exc}"))
            if worker is not None:
                worker.kill()  # its state is unknown now
        # Counted as available before the caller hears back, so a caller that
        # submits again at once does not make the pool grow for nothing.
        self.core.finishing(self)
        reply = replaced_answer(self.core, call, reply, name=self.name)
        if chunks:
            uri = call.uri if isinstance(call, ReadCall) else ""
            self.core.emit_read_output(
                SnippetOutput(call.key, uri, started_wall, tuple((s, t) for s, t in chunks))
            )
        settle(job, reply)
        if worker is not None and not worker.alive:
            worker.kill()
            self.worker = None
