"""A call driven by the awaiting event loop itself on a lent idle worker: one hand-off per read."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import pickle
import struct
import time
from asyncio import selector_events
from collections.abc import Callable
from concurrent.futures import Future
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any, TypeVar

from resources_qt.snippets import messages, wire
from resources_qt.snippets.output import SnippetOutput
from resources_qt.snippets.process import signal_text
from resources_qt.snippets.protocol import (
    Call,
    CompleteDone,
    Failed,
    NeedSource,
    Output,
    ReadCall,
    ReadDone,
    Reply,
    ValueDone,
)
from resources_qt.snippets.slot import replaced_answer, settle, verdict

if TYPE_CHECKING:
    from resources_qt.snippets.dispatch import Dispatcher
    from resources_qt.snippets.process import WorkerProcess
    from resources_qt.snippets.slot import Job, Slot

__all__ = ["MAX_DIRECT_CALL_BYTES", "call_directly", "loop_future", "supports_direct_calls"]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

MAX_DIRECT_CALL_BYTES = 64 * 1024
"""A larger pickled call (a first call carrying a long snippet) goes the queued way, so the loop never
waits on a pipe write."""

_READ_CHUNK = 64 * 1024
"""Per read(2): a larger buffer is allocated with mmap and unmapped again on every call (a small answer's
write and read on the worker's socket pair: 19.5 us with 256 KiB, 3.8 with 64); a long answer takes a few
more callbacks."""
_DEATH_GRACE = 2.0
"""How long to wait for a worker's exit status after its pipe closed."""
_SIZE = struct.Struct("!i")
_PROTOCOL = pickle.HIGHEST_PROTOCOL
_BIG_SIZE = struct.Struct("!Q")


def supports_direct_calls(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether `loop` can watch file descriptors (selector loops and uvloop; not the Windows proactor)."""
    if isinstance(loop, selector_events.BaseSelectorEventLoop):
        return True
    return type(loop).__module__.startswith("uvloop")


def call_directly(
    core: Dispatcher,
    call: Call,
    *,
    timeout: float,
    convert: Callable[[Call, Reply], _T],
    loop: asyncio.AbstractEventLoop,
) -> asyncio.Future[_T] | None:
    """Run `call` on a lent idle worker, driven by `loop`; None when no worker can be lent (queue it).

    The queued path goes loop -> pool thread -> worker pipe -> pool thread ->
    concurrent future -> the loop again: two thread hops and the GIL traded
    twice. When a worker is idle and nothing is queued, the dispatcher lends
    that worker to the loop instead (`Dispatcher.lend`): the loop writes the
    call to the worker's pipe and waits for the answer with `add_reader`, so
    the answer is parsed where it is awaited. Every guarantee of the queued
    path holds: the per-resource limit (the lend counts as a running call),
    fairness (nothing is lent while calls wait in the queue), the deadline (a
    loop timer kills the worker), crash containment (the worker's sentinel and
    the pipe's EOF are watched), output capture, and exactly one answer. The
    call runs to its end even if its awaiting task is cancelled, so the worker
    is never given back in the middle of a call.
    """
    slot = core.lend(call.key, loop)
    if slot is None:
        return None
    worker = slot.worker
    assert worker is not None
    outgoing = worker.prepare(call)
    data = _pickled(outgoing)
    if data is None:
        core.return_unused(slot)  # the queued path sends it, or answers why it cannot be sent
        return None
    future: asyncio.Future[_T] = loop.create_future()

    def deliver(reply: Reply) -> None:
        if future.done():
            return  # its caller gave up (cancelled); the call still ran to its end
        try:
            value = convert(call, reply)
        except BaseException as exc:  # the converted failure (ReaderFailedError) is the answer
            future.set_exception(exc)
        else:
            future.set_result(value)

    _DirectCall(core, slot, worker, call, outgoing, loop=loop, timeout=timeout, deliver=deliver).begin(data)
    return future


def loop_future(source: Future[_T], loop: asyncio.AbstractEventLoop) -> asyncio.Future[_T]:
    """`source` awaitable on `loop` (call it on the loop's thread): `asyncio.wrap_future` without its hop.

    A queued call is mostly answered on the loop itself, by the lent worker that ran it (`_run_queued`);
    `wrap_future` would still post that answer through the loop's self-pipe and answer it a turn later.
    """
    target = loop.create_future()

    def copy(done: Future[_T]) -> None:
        if loop.is_closed():
            return  # nobody can await it any more
        if _running_loop() is loop:
            _copy_state(done, target)
        else:
            with contextlib.suppress(RuntimeError):  # closed meanwhile
                loop.call_soon_threadsafe(_copy_state, done, target)

    def cancel(awaited: asyncio.Future[_T]) -> None:
        if awaited.cancelled():
            source.cancel()

    target.add_done_callback(cancel)
    source.add_done_callback(copy)
    return target


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _copy_state(source: Future[_T], target: asyncio.Future[_T]) -> None:
    if target.done():
        return
    if source.cancelled():
        target.cancel()
        return
    error = source.exception()
    if error is not None:
        target.set_exception(error)
    else:
        target.set_result(source.result())


def _run_queued(core: Dispatcher, slot: Slot, worker: WorkerProcess, job: Job[Any] | None,
                loop: asyncio.AbstractEventLoop) -> None:
    """Run queued calls on the worker the loop still holds, in the queue's order, until none is left.

    Under load every worker is busy and reads queue; the loop that finishes a call takes the next
    one itself instead of handing the worker back to its pool thread (two thread hops per call).
    """
    while job is not None:
        call = job.call
        outgoing = worker.prepare(call)
        data = _pickled(outgoing)
        if data is None:
            core.hand_over(slot, job)  # the slot's thread sends it (a long write must not hold the loop)
            return
        if not job.future.set_running_or_notify_cancel():
            job = core.next_for_lent(slot, alive=True, loop=loop)  # cancelled by its caller
            continue
        remaining = job.deadline - time.monotonic()
        timed_out = functools.partial(_queued_timeout_text, call, job.timeout, job.taken_at - job.queued_at)
        if remaining <= 0:
            settle(job, Failed("timeout", timed_out()))
            job = core.next_for_lent(slot, alive=True, loop=loop)
            continue
        _DirectCall(core, slot, worker, call, outgoing, loop=loop, timeout=remaining,
                    deliver=functools.partial(settle, job), timeout_text=timed_out).begin(data)
        return


def _queued_timeout_text(call: Call, timeout: float, waited: float) -> str:
    if waited >= 0.05:
        return messages.timed_out_queued(call, timeout, waited)
    return messages.timed_out(call, timeout)


def _pickled(call: Call) -> bytes | None:
    """`call` as the pipe carries it; None when it is too long for the loop to write, or does not pickle."""
    try:
        # Plain pickle: a call is dataclasses of plain values, which need none of ForkingPickler's reducers
        # (it builds a pickler and a buffer per call); the worker's `recv` reads either.
        data = pickle.dumps(call, _PROTOCOL)
    except Exception:  # parameters that do not pickle: the queued path answers with the reason
        return None
    return data if len(data) <= MAX_DIRECT_CALL_BYTES else None


def _send_quietly(conn: Connection, data: bytes) -> None:
    with contextlib.suppress(OSError, ValueError):
        conn.send_bytes(data)


class _DirectCall:
    """The state machine of one lent call, driven by fd callbacks and one timer on the loop."""

    def __init__(
        self,
        core: Dispatcher,
        slot: Slot,
        worker: WorkerProcess,
        call: Call,
        outgoing: Call,
        *,
        loop: asyncio.AbstractEventLoop,
        timeout: float,
        deliver: Callable[[Reply], None],
        timeout_text: Callable[[], str] | None = None,
    ) -> None:
        self._core = core
        self._slot = slot
        self._worker = worker
        self._call = call
        self._outgoing = outgoing
        self._loop = loop
        self._timeout = timeout
        self._deliver = deliver
        self._timeout_text = timeout_text
        """The timeout's answer, made only if it comes to that (not on every read)."""
        self._buffer = bytearray()
        self._chunks: list[list[str]] = []
        self._started_wall = time.time()
        self._timer: asyncio.TimerHandle | None = None
        self._grace: asyncio.TimerHandle | None = None
        self._reply: Reply | None = None
        self._pipe_closed = False
        self._done = False
        self._draining = False
        """The answer went out; the worker is kept until a message cut after it is whole."""
        self._fd = -1
        self._sentinel = -1
        self._watching_sentinel = False

    def begin(self, data: bytes) -> None:
        worker = self._worker
        conn, process = worker.connection, worker.process
        if conn is None or process is None:
            self._pipe_closed = True
            self._finish(Failed("unavailable", messages.unavailable(self._call, "the worker is not running")))
            return
        self._fd, self._sentinel = conn.fileno(), process.sentinel
        try:
            conn.send_bytes(data)
        except (OSError, ValueError):
            self._pipe_closed = True
            self._watch_death()
            return
        worker.sent(self._outgoing)
        # Only the pipe is watched: a worker's death closes it (EOF), and the deadline's kill reaches a
        # process it forked that still holds it. The sentinel is watched once the pipe closed.
        self._loop.add_reader(self._fd, self._on_readable)
        self._timer = self._loop.call_later(self._timeout, self._on_timeout)

    # -- callbacks -------------------------------------------------------------------

    def _on_readable(self) -> None:
        try:
            data = os.read(self._fd, _READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._pipe_closed = True
            self._loop.remove_reader(self._fd)
            if self._draining:
                self._on_drained(False)
            else:
                self._watch_death()
            return
        self._buffer.extend(data)
        if self._draining:
            in_step = self._drain()
            if in_step is not None:
                self._on_drained(in_step)
            return
        while not self._done and (message := self._next_frame()) is not None:
            self._on_message(message)

    def _next_frame(self) -> bytes | None:
        buffer = self._buffer
        if len(buffer) < 4:
            return None
        (size,) = _SIZE.unpack_from(buffer)
        start = 4
        if size == -1:  # multiprocessing's framing of a message over 2 GiB
            if len(buffer) < 12:
                return None
            (size,) = _BIG_SIZE.unpack_from(buffer, 4)
            start = 12
        end = start + size
        if len(buffer) < end:
            return None
        frame = bytes(buffer[start:end])
        del buffer[:end]
        return frame

    def _on_message(self, data: bytes) -> None:
        try:
            message = wire.decode(data)
        except wire.WireError as exc:
            logger.error("Snippet worker %s sent a message that does not decode: %r", self._slot.name, str(exc))
            self._kill()
            why = f"its answer could not be decoded ({exc})"
            self._finish(Failed("internal", messages.call_failed(self._call, why)))
            return
        if isinstance(message, Output):
            self._on_output(message)
        elif isinstance(message, NeedSource):
            self._resend()
        elif isinstance(message, ReadDone | CompleteDone | ValueDone | Failed):
            if isinstance(message, Failed) and message.reason == "memory":
                self._kill()
            self._finish(message)

    def _resend(self) -> None:
        call = self._call
        if self._outgoing is call:
            self._finish(Failed("unavailable", messages.unavailable(call, "the worker lost the snippet source")))
            return
        worker = self._worker
        worker.forget()
        self._outgoing = call
        conn = worker.connection
        if conn is None:
            self._lost_pipe()
            return
        data = pickle.dumps(call, _PROTOCOL)  # it pickled once already, without its source
        worker.sent(call)
        if len(data) > MAX_DIRECT_CALL_BYTES:
            # A long write must not hold the loop: a pool thread writes it while the loop reads on. A
            # write that fails means a dead worker, which the loop sees as the pipe's EOF.
            self._loop.run_in_executor(None, _send_quietly, conn, data)
            return
        try:
            conn.send_bytes(data)
        except (OSError, ValueError):
            self._lost_pipe()

    def _lost_pipe(self) -> None:
        if self._fd >= 0 and not self._pipe_closed:
            self._loop.remove_reader(self._fd)  # unregistered before begin() registers it: a no-op
        self._pipe_closed = True
        self._watch_death()

    def _on_output(self, message: Output) -> None:
        chunks = self._chunks
        if chunks and chunks[-1][0] == message.stream:
            chunks[-1][1] += message.text
        else:
            chunks.append([message.stream, message.text])
        self._core.emit_output(message.key, message.text)

    def _on_timeout(self) -> None:
        self._timer = None
        if self._done:
            return
        text = self._timeout_text() if self._timeout_text else messages.timed_out(self._call, self._timeout)
        self._reply = Failed("timeout", text)
        # The kill shows as the pipe's EOF and the sentinel; the reply above wins.
        self._worker.interrupt()

    def _on_exit(self) -> None:
        # The worker process ended (its sentinel is readable) after its pipe closed.
        self._loop.remove_reader(self._sentinel)
        self._sentinel = -1
        if not self._done:
            self._finish(self._death())

    def _watch_death(self) -> None:
        if self._done:
            return
        if self._sentinel < 0 or self._worker.process is None:
            self._finish(self._death())
            return
        # The exit status follows the pipe's EOF closely; a process that keeps running with its pipe
        # closed is reported (and killed) after a grace period.
        self._loop.add_reader(self._sentinel, self._on_exit)
        self._grace = self._loop.call_later(_DEATH_GRACE, self._on_grace_over)
        self._watching_sentinel = True

    def _on_grace_over(self) -> None:
        self._grace = None
        if not self._done:
            self._finish(self._death())

    def _death(self) -> Failed:
        if self._reply is not None:
            return self._reply if isinstance(self._reply, Failed) else Failed("internal", "unexpected reply")
        process = self._worker.process
        code = process.exitcode if process is not None else None
        call = self._call
        if code is None:
            return Failed("crashed", messages.crashed(call, "the connection to it broke"))
        if code < 0:
            return Failed("crashed", messages.crashed(call, signal_text(-code)))
        return Failed("exited", messages.exited(call, code))

    # -- the end ---------------------------------------------------------------------

    def _release(self, *, alive: bool) -> None:
        """Give the worker back (or have it replaced) and run the next queued call the loop may take."""
        loop, worker, core, slot = self._loop, self._worker, self._core, self._slot
        if self._fd >= 0 and not self._pipe_closed:
            loop.remove_reader(self._fd)
        if self._watching_sentinel and self._sentinel >= 0:
            loop.remove_reader(self._sentinel)
            self._watching_sentinel = False
        if not alive:
            # SIGKILL only: the slot's thread reaps it (a join here would hold the loop); its descriptors
            # left the loop above, and they close with the reaping, so their numbers are not reused early.
            worker.interrupt()
        next_job = core.next_for_lent(slot, alive=alive, loop=loop)
        if slot.orphaned:
            # The slot thread left while the worker was lent (pool closing or shrinking): reap it off the loop.
            loop.run_in_executor(None, worker.kill)
        elif next_job is not None:
            _run_queued(core, slot, worker, next_job, loop)

    def _drain(self) -> bool | None:
        """Consume what followed the answer (output a snippet's thread printed after its call), so the
        next reader starts at a message boundary: True when in step, False if out of step, None while a
        message is cut (its writer is mid-write; the reader stays registered for the rest)."""
        while self._buffer:
            frame = self._next_frame()
            if frame is None:
                return None
            try:
                message = wire.decode(frame)
            except wire.WireError:
                return False
            if not isinstance(message, Output):
                return False  # a second answer: the channel is out of step
            self._core.emit_output(message.key, message.text)
        return True

    def _on_drained(self, in_step: bool) -> None:
        if self._grace is not None:
            self._grace.cancel()
            self._grace = None
        self._draining = False
        if not in_step:
            logger.warning("Snippet worker %s replaced: a message after its answer did not arrive whole",
                           self._slot.name)
        self._release(alive=in_step and not self._pipe_closed)

    def _on_drain_over(self) -> None:
        self._grace = None
        if self._draining:
            self._on_drained(False)

    def _kill(self) -> None:
        self._worker.interrupt()

    def _finish(self, reply: Reply) -> None:
        if self._done:
            return
        self._done = True
        if self._reply is not None:
            # Killed at its deadline: the timeout is the answer, whatever the worker managed to send.
            reply = self._reply
        for handle in (self._timer, self._grace):
            if handle is not None:
                handle.cancel()
        self._timer = self._grace = None
        core = self._core
        alive = verdict(reply, killed=self._reply is not None, pipe_closed=self._pipe_closed)
        reply = replaced_answer(core, self._call, reply, name=self._slot.name)
        in_step: bool | None = True
        if alive and self._buffer:
            in_step = self._drain()
        if self._chunks:
            call = self._call
            uri = call.uri if isinstance(call, ReadCall) else ""
            core.emit_read_output(
                SnippetOutput(call.key, uri, self._started_wall, tuple((s, t) for s, t in self._chunks))
            )
        if in_step is None:
            # The answer stands and goes out now; the worker is given back once the cut message is whole.
            self._draining = True
            self._grace = self._loop.call_later(_DEATH_GRACE, self._on_drain_over)
            self._deliver(reply)
            return
        if in_step is False:
            logger.warning("Snippet worker %s replaced: a message after its answer did not arrive whole",
                           self._slot.name)
        self._deliver(reply)
        self._release(alive=alive and in_step)
