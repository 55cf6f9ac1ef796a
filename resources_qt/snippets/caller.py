"""Whether a read's caller still waits for it: a queued read whose caller left gives up its place in the queue."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["CallerGone", "caller_gone", "until_caller_leaves"]

CallerGone = Callable[[], Awaitable[None]]
"""Returns once nobody waits for the answer any more (an HTTP client hung up)."""

_CALLER_GONE: ContextVar[CallerGone | None] = ContextVar("resources_qt_caller_gone", default=None)


@contextmanager
def until_caller_leaves(gone: CallerGone | None) -> Iterator[None]:
    """Reads awaited inside the block that have to queue for a worker give up once `gone()` returns.

    Only a read still waiting in the queue gives up (it is answered "abandoned" and leaves the queue
    at once, so it no longer counts toward `max_queued_reads`); one that started runs to its end.
    """
    token = _CALLER_GONE.set(gone)
    try:
        yield
    finally:
        _CALLER_GONE.reset(token)


def caller_gone() -> CallerGone | None:
    """What the awaiting code said tells that its caller left, if anything."""
    return _CALLER_GONE.get()
