"""One worker process running many `async def` calls at once, as the pool's I/O loop drives it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pickle
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from resources_qt.snippets import messages, wire
from resources_qt.snippets.output import SnippetOutput, add_chunk
from resources_qt.snippets.process import WorkerProcess, signal_text
from resources_qt.snippets.protocol import (
    Call,
    Cancel,
    CompleteDone,
    Failed,
    NeedSource,
    Output,
    ReadCall,
    ReadDone,
    Reply,
    Tagged,
    ValueDone,
)
from resources_qt.snippets.slot import Job, settle, timeout_text

if TYPE_CHECKING:
    from resources_qt.snippets.dispatch import Dispatcher

__all__ = ["BLOCKED_GRACE", "Running", "SharedWorker"]

logger = logging.getLogger(__name__)

BLOCKED_GRACE = 1.0
"""Seconds a cancelled call has to let go before its worker's loop counts as blocked and the worker is killed."""

_DEATH_GRACE = 2.0
"""How long to wait for a worker's exit status after its pipe closed."""
_READ_CHUNK = 64 * 1024
_PROTOCOL = pickle.HIGHEST_PROTOCOL


@dataclass(eq=False)
class Running:
    """A call sent to a shared worker, until the worker answers it (or dies)."""

    job: Job[Any]
    outgoing: Call
    started_wall: float = field(default_factory=time.time)
    chunks: list[list[str]] = field(default_factory=list)
    timer: asyncio.TimerHandle | None = None
    answered: bool = False
    """Its caller heard already (its deadline, or it left): the worker's answer only says it let go."""


Finished = Callable[["SharedWorker", Running], None]


class SharedWorker:
    """A started worker process (`WorkerConfig.concurrent`) and the calls it runs; on the I/O loop's thread only.

    Calls go out as `Tagged` frames, written without ever blocking the loop
    (what the pipe does not take at once waits for it to drain); answers come
    back through one reader callback. At a call's deadline its caller is
    answered and the worker is sent `Cancel`; a worker that has not let go of
    the call `BLOCKED_GRACE` later has a blocked event loop and is killed,
    which fails its other calls naming the one that blocked it. A worker whose
    pipe closes fails every call it held as a crash or exit, as a one-call
    worker's read does. `finished` hears of every call that left the worker.
    """

    def __init__(self, process: WorkerProcess, loop: asyncio.AbstractEventLoop, *, generation: int,
                 core: Dispatcher, finished: Finished, ended: Callable[[SharedWorker], None]) -> None:
        conn = process.connection
        assert conn is not None and process.process is not None
        self.process = process
        self.generation = generation
        self.retiring = False
        """Takes no new call; stopped once its last one ends (settings changed, a memory overrun, idle)."""
        self.idle_since = time.monotonic()
        self._loop = loop
        self._core = core
        self._finished = finished
        self._ended = ended
        self._fd = conn.fileno()
        self._sentinel = process.process.sentinel
        self._calls: dict[int, Running] = {}
        self._buffer = bytearray()
        self._out = bytearray()
        self._writing = False
        self._closed = False
        self._dead = False
        self._broken = False
        self._exited = False
        """Sent something out of step: what else it sends is ignored while it is killed."""
        self._culprit: Call | None = None
        """The call whose blocked loop got the worker killed."""
        self._grace: asyncio.TimerHandle | None = None
        os.set_blocking(self._fd, False)  # this end only: the worker's end stays blocking
        loop.add_reader(self._fd, self._on_readable)

    @property
    def load(self) -> int:
        """Calls the worker holds (answered ones it has not let go of included)."""
        return len(self._calls)

    @property
    def usable(self) -> bool:
        return not self._closed and not self.retiring

    @property
    def dead(self) -> bool:
        """Its pipe closed: `ended` is to come (or came), and the process is reaped there, not by `stop`."""
        return self._dead


    # -- calls ---------------------------------------------------------------------------

    def start(self, call_id: int, job: Job[Any]) -> None:
        """Send `job`'s call; it is answered from here (or by `close`), and `finished` hears when it left."""
        call = job.call
        outgoing = self.process.prepare(call)
        try:
            data = pickle.dumps(Tagged(call_id, outgoing), _PROTOCOL)
        except Exception as exc:  # parameters that do not pickle
            settle(job, Failed("internal", messages.internal(call, f"its parameters cannot be sent: {exc}")))
            # Later, not from here: the scheduler may be walking its queue right now (`_run_queued`).
            self._loop.call_soon(self._finished, self, Running(job, outgoing, answered=True))
            return
        running = Running(job, outgoing)
        # A delay, not `call_at`: the deadline is time.monotonic()'s, and uvloop's clock is not.
        running.timer = self._loop.call_later(job.deadline - time.monotonic(), self._on_deadline, call_id)
        self._calls[call_id] = running
        self.process.sent(outgoing)
        self._write(data)

    def cancel(self, call_id: int) -> None:
        """The caller of `call_id` left: the worker cancels the call (its deadline still guards it)."""
        running = self._calls.get(call_id)
        if running is not None and not running.answered:
            running.answered = True
            self._write(pickle.dumps(Cancel(call_id), _PROTOCOL))

    def stop(self, in_background: Callable[[Callable[[], None]], None]) -> None:
        """Leave the loop and stop the process off it, through `in_background` (idle: nothing is answered)."""
        self._close()
        in_background(self.process.stop)

    def close(self, why: str) -> None:
        """The pool is closing: answer every call `why`, kill the process (the caller reaps it)."""
        for running in list(self._calls.values()):
            if not running.answered:
                settle(running.job, Failed("unavailable", messages.unavailable(running.job.call, why)))
        self.abandon()

    def abandon(self) -> None:
        """Let go of the pipe and kill the process, answering nothing (the caller answers the calls it held)."""
        for running in self._calls.values():
            if running.timer is not None:
                running.timer.cancel()
        self._calls.clear()
        self._close()
        self._unwatch_exit()
        self.process.interrupt()

    # -- writing -------------------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        if self._closed:
            return
        framed = wire.frame(data)
        if not self._writing:
            try:
                sent = os.write(self._fd, framed)
            except BlockingIOError:
                sent = 0
            except OSError:
                return  # a dead worker: its pipe's end of file answers for its calls
            if sent == len(framed):
                return
            framed = framed[sent:]
            self._writing = True
            self._loop.add_writer(self._fd, self._on_writable)
        self._out.extend(framed)

    def _on_writable(self) -> None:
        try:
            sent = os.write(self._fd, self._out)
        except BlockingIOError:
            return
        except OSError:
            sent = len(self._out)  # dead: the reader sees the end of file
        del self._out[:sent]
        if not self._out:
            self._writing = False
            self._loop.remove_writer(self._fd)

    # -- reading -------------------------------------------------------------------------

    def _on_readable(self) -> None:
        try:
            data = os.read(self._fd, _READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._on_pipe_closed()
            return
        if self._broken:
            return  # out of step and being killed: only its end of file matters now
        self._buffer.extend(data)
        while not self._closed and not self._broken:
            try:
                framed = wire.next_frame(self._buffer)
                if framed is None:
                    return
                call_id, message = wire.decode_tagged(framed)
            except wire.WireError as exc:
                self._out_of_step(f"its answer could not be decoded ({exc})")
                return
            if call_id is None:
                if not isinstance(message, Output):
                    self._out_of_step(f"it sent an untagged {type(message).__name__}")
                    return
                self._core.emit_output(message.key, message.text)  # module code or C-level: no call's own
                continue
            running = self._calls.get(call_id)
            if running is None:
                continue  # output of a call the pool stopped waiting for: nobody to tell
            self._on_message(call_id, running, message)

    def _on_message(self, call_id: int, running: Running, message: wire.WorkerMessage) -> None:
        if isinstance(message, Output):
            add_chunk(running.chunks, message.stream, message.text)
            self._core.emit_output(message.key, message.text)
        elif isinstance(message, NeedSource):
            call = running.job.call
            if running.answered:  # nobody waits for it any more: nothing to run again
                self._end(call_id, Failed("timeout", messages.timed_out_cancelled(call, running.job.timeout)))
                return
            if running.outgoing is call:
                lost = messages.unavailable(call, "the worker lost the snippet source")
                self._end(call_id, Failed("unavailable", lost))
                return
            self.process.forget()
            running.outgoing = call
            self.process.sent(call)
            self._write(pickle.dumps(Tagged(call_id, call), _PROTOCOL))
        elif isinstance(message, ReadDone | CompleteDone | ValueDone | Failed):
            self._end(call_id, message)
        else:
            self._out_of_step(f"it sent {type(message).__name__} for a call")

    def _end(self, call_id: int, reply: Reply) -> None:
        running = self._calls.pop(call_id)
        if running.timer is not None:
            running.timer.cancel()
        if isinstance(reply, Failed) and reply.reason == "memory":
            self.retiring = True  # its heap is suspect now: no new call, replaced once the others end
            logger.warning("Snippet worker %s is replaced: %r", self.process.name, reply.message)
        if not running.answered:
            self._answer(running, reply)
        if not self._calls:
            self.idle_since = time.monotonic()
        self._finished(self, running)

    def _answer(self, running: Running, reply: Reply) -> None:
        running.answered = True
        call = running.job.call
        if running.chunks:
            uri = call.uri if isinstance(call, ReadCall) else ""
            self._core.emit_read_output(
                SnippetOutput(call.key, uri, running.started_wall, tuple((s, t) for s, t in running.chunks)))
        settle(running.job, reply)

    # -- deadlines and deaths ------------------------------------------------------------

    def _on_deadline(self, call_id: int) -> None:
        running = self._calls.get(call_id)
        if running is None:
            return
        job = running.job
        if not running.answered:
            self._answer(running, Failed("timeout", timeout_text(job, cancelled=True)))
            self._write(pickle.dumps(Cancel(call_id), _PROTOCOL))
        running.timer = self._loop.call_later(BLOCKED_GRACE, self._on_blocked, call_id)

    def _on_blocked(self, call_id: int) -> None:
        running = self._calls.get(call_id)
        if running is None or self._closed:
            return
        self._culprit = running.job.call
        logger.warning("Snippet worker %s is replaced: %s did not let go %g s after its deadline",
                       self.process.name, running.job.call.key, BLOCKED_GRACE)
        self.retiring = True
        self.process.interrupt()  # its end of file fails the other calls (`_on_exit`)

    def _out_of_step(self, why: str) -> None:
        logger.error("Snippet worker %s is replaced: %s", self.process.name, why)
        self._broken = True
        self._buffer.clear()
        for running in list(self._calls.values()):
            if not running.answered:
                self._answer(running, Failed("internal", messages.call_failed(running.job.call, why)))
        self.retiring = True
        self.process.interrupt()

    def _on_pipe_closed(self) -> None:
        self._dead = True
        self._close()
        # Its exit status tells a crash from an exit; the sentinel is readable once the process ended.
        self._loop.add_reader(self._sentinel, self._on_exit)
        self._grace = self._loop.call_later(_DEATH_GRACE, self._on_exit)

    def _unwatch_exit(self) -> None:
        # Before the process is reaped: its sentinel's number is then free for the loop's other readers.
        if self._dead:
            with contextlib.suppress(OSError, ValueError, RuntimeError):
                self._loop.remove_reader(self._sentinel)
        if self._grace is not None:
            self._grace.cancel()
            self._grace = None

    def _on_exit(self) -> None:
        if self._exited:
            return
        self._exited = True
        self._unwatch_exit()
        process = self.process.process
        code = process.exitcode if process is not None else None
        held = len(self._calls)
        for call_id, running in list(self._calls.items()):
            del self._calls[call_id]
            if running.timer is not None:
                running.timer.cancel()
            if not running.answered:
                self._answer(running, self._death(running.job.call, code, held=held))
            self._finished(self, running)
        self._ended(self)

    def _death(self, call: Call, code: int | None, *, held: int) -> Failed:
        culprit = self._culprit
        if culprit is not None:
            return Failed("crashed", messages.blocked_by(call, culprit))
        if code is not None and code >= 0:
            if held > 1:
                return Failed("exited", messages.shared_worker_died(call, f"exited (exit code {code})", calls=held))
            return Failed("exited", messages.exited(call, code))
        how = "the connection to it broke" if code is None else signal_text(-code)
        if held > 1:
            return Failed("crashed", messages.shared_worker_died(call, f"crashed ({how})", calls=held))
        return Failed("crashed", messages.crashed(call, how))

    def _close(self) -> None:
        if self._closed:
            return
        self._closed = True
        # RuntimeError: a loop that has ended (uvloop says so; asyncio's returns quietly).
        with contextlib.suppress(OSError, ValueError, RuntimeError):
            self._loop.remove_reader(self._fd)
        if self._writing:
            with contextlib.suppress(OSError, ValueError, RuntimeError):
                self._loop.remove_writer(self._fd)
            self._writing = False
