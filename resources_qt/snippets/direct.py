"""A call driven by the awaiting event loop itself on a lent idle worker: one hand-off per read."""

from __future__ import annotations

import asyncio
import contextlib
from asyncio import selector_events
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, TypeVar

from resources_qt.snippets.channel import MAX_DIRECT_CALL_BYTES, Channel, pickled
from resources_qt.snippets.protocol import Call, Reply

if TYPE_CHECKING:
    from resources_qt.snippets.dispatch import Dispatcher

__all__ = ["MAX_DIRECT_CALL_BYTES", "call_directly", "loop_future", "supports_direct_calls"]

_T = TypeVar("_T")


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
    call to the worker's pipe and watches the pipe (`resources_qt.snippets.channel`),
    so the answer is parsed where it is awaited; the loop then keeps the
    worker, its pipe still registered, for its next call while nothing is
    queued (`resources_qt.snippets.lending`). Every guarantee of the queued
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
    channel = slot.channel
    if channel is None or channel.worker is not worker:
        channel = slot.channel = Channel(core, slot, worker, loop)
    elif not channel.alive_now():
        channel.release_unused(alive=False)  # it died while the loop held it: its thread replaces it
        return None
    outgoing = worker.prepare(call)
    data = pickled(outgoing)
    if data is None:
        channel.release_unused(alive=True)  # the queued path sends it, or answers why it cannot be sent
        return None
    future: asyncio.Future[_T] = loop.create_future()
    channel.start(call, outgoing, data, timeout=timeout, future=future, convert=convert)
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


