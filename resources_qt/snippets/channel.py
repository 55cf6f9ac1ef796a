"""A lent worker's pipe on the loop that drives it: registered once for as long as the loop holds the worker."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import pickle
import select
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from resources_qt.snippets import messages, wire
from resources_qt.snippets.output import SnippetOutput, add_chunk
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
from resources_qt.snippets.slot import replaced_answer, settle, timeout_text, verdict

if TYPE_CHECKING:
    from resources_qt.snippets.dispatch import Dispatcher
    from resources_qt.snippets.process import WorkerProcess
    from resources_qt.snippets.slot import Job, Slot

__all__ = ["MAX_DIRECT_CALL_BYTES", "Channel", "pickled"]

logger = logging.getLogger(__name__)

MAX_DIRECT_CALL_BYTES = 64 * 1024
"""A larger pickled call (a first call carrying a long snippet) goes the queued way, so the loop never
waits on a pipe write."""

_READ_CHUNK = 64 * 1024
"""Per read(2): a larger buffer is allocated with mmap and unmapped again on every call (a small answer's
write and read on the worker's socket pair: 19.5 us with 256 KiB, 3.8 with 64); a long answer takes a few
more callbacks."""
_DEATH_GRACE = 2.0
"""How long to wait for a worker's exit status after its pipe closed."""
_PROTOCOL = pickle.HIGHEST_PROTOCOL
_poll = getattr(select, "poll", None)
_POLLIN = getattr(select, "POLLIN", 1)


def pickled(call: Call) -> bytes | None:
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


class Channel:
    """The calls one loop drives on one lent worker, one at a time: fd callbacks and one lazy deadline timer.

    Made when a loop is first lent the worker and kept while the loop holds it (`Slot.held`,
    `resources_qt.snippets.lending`): the pipe stays registered with the loop between calls, each
    call resets the fields below instead of building a state machine of its own, and the deadline
    timer is moved only when a call's deadline comes before the one it is set for (a timer that
    fires early is set again for the running call's deadline, one that fires between calls lapses).
    """

    def __init__(self, core: Dispatcher, slot: Slot, worker: WorkerProcess, loop: asyncio.AbstractEventLoop) -> None:
        self._core = core
        self._slot = slot
        self.worker = worker
        self._loop = loop
        conn, process = worker.connection, worker.process
        self._conn = conn
        self._fd = conn.fileno() if conn is not None else -1
        self._sentinel = process.sentinel if process is not None else -1
        self._registered = False
        self._retired = False
        """The loop closed while it held the worker, which its slot took back: touch the pipe no more."""
        self._poller: Any = None
        self._timer: asyncio.TimerHandle | None = None
        self._deadline = math.inf
        """loop.time() by which the running call must be answered."""
        self._grace: asyncio.TimerHandle | None = None
        self._buffer = bytearray()
        self._watching_sentinel = False
        # The running call (from `start` to the worker's release).
        self._active = False
        self._call: Call | None = None
        self._outgoing: Call | None = None
        self._job: Job[Any] | None = None
        self._future: asyncio.Future[Any] | None = None
        self._convert: Callable[[Call, Reply], Any] | None = None
        self._timeout = 0.0
        self._chunks: list[list[str]] = []
        self._started_wall = 0.0
        self._reply: Reply | None = None
        self._pipe_closed = False
        self._done = False
        self._draining = False
        """The answer went out; the worker is kept until a message cut after it is whole."""

    # -- starting calls --------------------------------------------------------------

    def alive_now(self) -> bool:
        """The worker's exit sentinel is not readable (one poll(2) on a poller kept for the purpose)."""
        if _poll is None or self._sentinel < 0:
            return self.worker.looks_alive()
        try:
            if self._poller is None:
                self._poller = _poll()
                self._poller.register(self._sentinel, _POLLIN)
            return not self._poller.poll(0)
        except (OSError, ValueError):
            return False

    def start(
        self,
        call: Call,
        outgoing: Call,
        data: bytes,
        *,
        timeout: float,
        future: asyncio.Future[Any] | None = None,
        convert: Callable[[Call, Reply], Any] | None = None,
        job: Job[Any] | None = None,
    ) -> None:
        """Send `outgoing` (pickled as `data`) and answer `future` (converted) or `job` when it is done."""
        self._active = True
        self._call, self._outgoing = call, outgoing
        self._future, self._convert, self._job = future, convert, job
        self._timeout = timeout
        self._chunks.clear()
        self._started_wall = time.time()
        self._reply = None
        self._done = self._draining = False
        conn = self._conn
        if conn is None or self.worker.process is None:
            self._pipe_closed = True
            self._finish(Failed("unavailable", messages.unavailable(call, "the worker is not running")))
            return
        try:
            conn.send_bytes(data)
        except (OSError, ValueError):
            self._pipe_closed = True
            self._watch_death()
            return
        self.worker.sent(outgoing)
        loop = self._loop
        if not self._registered:
            # Only the pipe is watched: a worker's death closes it (EOF), and the deadline's kill reaches a
            # process it forked that still holds it. The sentinel is watched once the pipe closed.
            loop.add_reader(self._fd, self._on_readable)
            self._registered = True
        self._deadline = deadline = loop.time() + timeout
        timer = self._timer
        if timer is None or timer.when() > deadline:
            if timer is not None:
                timer.cancel()
            self._timer = loop.call_at(deadline, self._on_deadline)

    def run_queued(self, job: Job[Any] | bool) -> None:
        """Run queued calls on the worker the loop holds, in the queue's order; True: keep it, False: give it back.

        Under load every worker is busy and reads queue; the loop that finishes a call takes the next
        one itself instead of handing the worker back to its pool thread (two thread hops per call).
        """
        core, slot, loop = self._core, self._slot, self._loop
        while True:
            if job is True:
                return
            if job is False:
                self._give_back(alive=True)
                return
            assert not isinstance(job, bool)
            call = job.call
            outgoing = self.worker.prepare(call)
            data = pickled(outgoing)
            if data is None:
                self._unwatch()
                core.hand_over(slot, job)  # the slot's thread sends it (a long write must not hold the loop)
                return
            if not job.future.set_running_or_notify_cancel():
                job = core.next_for_lent(slot, alive=True, loop=loop)  # cancelled by its caller
                continue
            remaining = job.deadline - time.monotonic()
            if remaining <= 0:
                settle(job, Failed("timeout", timeout_text(job)))
                job = core.next_for_lent(slot, alive=True, loop=loop)
                continue
            self.start(call, outgoing, data, timeout=remaining, job=job)
            return

    def recall(self) -> None:
        """On the loop: the dispatcher wants the idle worker it holds (`Lending.recall_locked`)."""
        if self._retired:
            return
        self.run_queued(self._core.unhold(self._slot, self._loop))

    def retire(self) -> None:
        """From any thread, under the dispatcher's lock: the slot took the worker back from a closed loop."""
        self._retired = True

    def release_unused(self, *, alive: bool) -> None:
        """Give back a worker lent for a call that is not sent after all (too long for the loop, or dead)."""
        self._unwatch()
        self._core.return_unused(self._slot, alive=alive)

    # -- callbacks -------------------------------------------------------------------

    def _on_readable(self) -> None:
        if self._retired:
            self._loop.remove_reader(self._fd)
            self._registered = False
            return
        try:
            data = os.read(self._fd, _READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._pipe_closed = True
            self._loop.remove_reader(self._fd)
            self._registered = False
            if not self._active:
                self._give_back(alive=False)  # it died between calls: its thread replaces it
            elif self._draining:
                self._on_drained(False)
            else:
                self._watch_death()
            return
        self._buffer.extend(data)
        if not self._active:
            if self._drain() is False:  # output a snippet's thread printed after its call: in step
                logger.warning("Snippet worker %s replaced: it sent a message between calls", self._slot.name)
                self._give_back(alive=False)
            return
        if self._draining:
            in_step = self._drain()
            if in_step is not None:
                self._on_drained(in_step)
            return
        while not self._done and (message := self._next_frame()) is not None:
            self._on_message(message)

    def _next_frame(self) -> bytes | None:
        try:
            return wire.next_frame(self._buffer)
        except wire.WireError:
            self._buffer.clear()
            return b""  # does not decode: the callers' out-of-step answer follows

    def _on_message(self, data: bytes) -> None:
        call = self._call
        assert call is not None
        try:
            message = wire.decode(data)
        except wire.WireError as exc:
            logger.error("Snippet worker %s sent a message that does not decode: %r", self._slot.name, str(exc))
            self._kill()
            why = f"its answer could not be decoded ({exc})"
            self._finish(Failed("internal", messages.call_failed(call, why)))
            return
        if isinstance(message, ReadDone | CompleteDone | ValueDone | Failed):
            if isinstance(message, Failed) and message.reason == "memory":
                self._kill()
            self._finish(message)
        elif isinstance(message, Output):
            self._on_output(message)
        elif isinstance(message, NeedSource):
            self._resend()

    def _resend(self) -> None:
        call = self._call
        assert call is not None
        if self._outgoing is call:
            self._finish(Failed("unavailable", messages.unavailable(call, "the worker lost the snippet source")))
            return
        worker = self.worker
        worker.forget()
        self._outgoing = call
        conn = self._conn
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
        if self._registered:
            self._loop.remove_reader(self._fd)
            self._registered = False
        self._pipe_closed = True
        self._watch_death()

    def _on_output(self, message: Output) -> None:
        add_chunk(self._chunks, message.stream, message.text)
        self._core.emit_output(message.key, message.text)

    def _on_deadline(self) -> None:
        self._timer = None
        if not self._active or self._done:
            return  # between calls: the next call sets its own
        if self._loop.time() < self._deadline:
            self._timer = self._loop.call_at(self._deadline, self._on_deadline)  # set for an earlier call
            return
        self._on_timeout()

    def _on_timeout(self) -> None:
        """The running call's deadline passed: its answer is the timeout, and its worker is killed."""
        call = self._call
        if self._done or call is None:
            return
        job = self._job
        text = timeout_text(job) if job is not None else messages.timed_out(call, self._timeout)
        self._reply = Failed("timeout", text)
        # The kill shows as the pipe's EOF and the sentinel; the reply above wins.
        self.worker.interrupt()

    def _on_exit(self) -> None:
        # The worker process ended (its sentinel is readable) after its pipe closed.
        self._unwatch_sentinel()
        if not self._done:
            self._finish(self._death())

    def _watch_death(self) -> None:
        if self._done:
            return
        if self._sentinel < 0 or self.worker.process is None:
            self._finish(self._death())
            return
        # The exit status follows the pipe's EOF closely; a process that keeps running with its pipe
        # closed is reported (and killed) after a grace period.
        self._loop.add_reader(self._sentinel, self._on_exit)
        self._watching_sentinel = True
        self._grace = self._loop.call_later(_DEATH_GRACE, self._on_grace_over)

    def _on_grace_over(self) -> None:
        self._grace = None
        if not self._done:
            self._finish(self._death())

    def _death(self) -> Failed:
        if self._reply is not None:
            return self._reply if isinstance(self._reply, Failed) else Failed("internal", "unexpected reply")
        process = self.worker.process
        code = process.exitcode if process is not None else None
        call = self._call
        assert call is not None
        if code is None:
            return Failed("crashed", messages.crashed(call, "the connection to it broke"))
        if code < 0:
            return Failed("crashed", messages.crashed(call, signal_text(-code)))
        return Failed("exited", messages.exited(call, code))

    # -- the end ---------------------------------------------------------------------

    def _unwatch_sentinel(self) -> None:
        if self._watching_sentinel:
            self._loop.remove_reader(self._sentinel)
            self._watching_sentinel = False

    def _unwatch(self) -> None:
        """Take the pipe off the loop: from here on the slot's thread may use it."""
        loop = self._loop
        if self._registered:
            loop.remove_reader(self._fd)
            self._registered = False
        self._unwatch_sentinel()
        for handle in (self._timer, self._grace):
            if handle is not None:
                handle.cancel()
        self._timer = self._grace = None

    def _give_back(self, *, alive: bool) -> None:
        self._unwatch()
        self._active = False
        worker = self.worker
        if not alive:
            # SIGKILL only: the slot's thread reaps it (a join here would hold the loop); its descriptors
            # left the loop above, and they close with the reaping, so their numbers are not reused early.
            worker.interrupt()
        if self._core.give_back(self._slot, alive=alive):
            # The slot thread left while the worker was lent (pool closing or shrinking): reap it off the loop.
            self._loop.run_in_executor(None, worker.kill)

    def _release(self, *, alive: bool) -> None:
        """The call is over: keep the worker for the loop's next call, run the next queued one, or give it back."""
        self._unwatch_sentinel()
        self._active = False
        self._call = self._outgoing = self._job = None
        self._future = self._convert = None
        if not alive:
            self._give_back(alive=False)
            return
        self.run_queued(self._core.next_for_lent(self._slot, alive=True, loop=self._loop))

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
        self.worker.interrupt()

    def _deliver(self, reply: Reply) -> None:
        job = self._job
        if job is not None:
            settle(job, reply)
            return
        future, convert, call = self._future, self._convert, self._call
        if future is None or convert is None or call is None or future.done():
            return  # its caller gave up (cancelled); the call still ran to its end
        try:
            value = convert(call, reply)
        except BaseException as exc:  # the converted failure (ReaderFailedError) is the answer
            future.set_exception(exc)
        else:
            future.set_result(value)

    def _finish(self, reply: Reply) -> None:
        if self._done:
            return
        self._done = True
        if self._reply is not None:
            # Killed at its deadline: the timeout is the answer, whatever the worker managed to send.
            reply = self._reply
        if self._grace is not None:
            self._grace.cancel()
            self._grace = None
        core = self._core
        call = self._call
        assert call is not None
        alive = verdict(reply, killed=self._reply is not None, pipe_closed=self._pipe_closed)
        reply = replaced_answer(core, call, reply, name=self._slot.name)
        in_step: bool | None = True
        if alive and self._buffer:
            in_step = self._drain()
        if self._chunks:
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
