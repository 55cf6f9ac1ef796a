"""Whether a read's caller still waits for it: a queued read whose caller left gives up its place in the queue."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import Any

__all__ = ["CallerGone", "HungUp", "caller_gone", "forget_caller", "until_caller_leaves", "watch_caller"]

CallerGone = Callable[[], Awaitable[None]]
"""Returns once nobody waits for the answer any more (an HTTP client hung up)."""

HungUp = Callable[[Any], Awaitable[None]]
"""Given the caller (an HTTP request, say), returns once it left."""

_CALLER: ContextVar[tuple[HungUp, object] | None] = ContextVar("resources_qt_caller", default=None)


def watch_caller(hung_up: HungUp, caller: object) -> Token[tuple[HungUp, object] | None]:
    """Reads awaited from here on in this context that have to queue for a worker give up once
    `hung_up(caller)` returns; undo with `forget_caller(token)`.

    Only a read still waiting in the queue gives up (it is answered "abandoned" and leaves the queue
    at once, so it no longer counts toward `max_queued_reads`); one that started runs to its end.
    Two context-variable writes per read: the wait is built only for a read that queues.
    """
    return _CALLER.set((hung_up, caller))


def forget_caller(token: Token[tuple[HungUp, object] | None]) -> None:
    _CALLER.reset(token)


@contextmanager
def until_caller_leaves(gone: CallerGone | None) -> Iterator[None]:
    """`watch_caller` as a block, for a wait that needs no caller."""
    token = _CALLER.set(None if gone is None else (_call, gone))
    try:
        yield
    finally:
        _CALLER.reset(token)


def _call(gone: CallerGone) -> Awaitable[None]:
    return gone()


def caller_gone() -> CallerGone | None:
    """What the awaiting code said tells that its caller left, if anything."""
    watched = _CALLER.get()
    if watched is None:
        return None
    hung_up, caller = watched
    return functools.partial(hung_up, caller)
