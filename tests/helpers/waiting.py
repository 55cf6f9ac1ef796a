"""The one way tests wait on an observable condition: poll it until it holds, or fail after a deadline."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

__all__ = ["eventually", "eventually_async", "holds_within"]


def holds_within(predicate: Callable[[], bool], timeout: float, *, interval: float = 0.05) -> bool:
    """Whether `predicate()` becomes true within `timeout` seconds (checked every `interval`)."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def eventually(predicate: Callable[[], bool], timeout: float, *, what: str = "the condition") -> None:
    """Wait until `predicate()` holds; AssertionError naming `what` after `timeout` seconds."""
    if not holds_within(predicate, timeout):
        raise AssertionError(f"{what} did not hold within {timeout} s")


async def eventually_async(predicate: Callable[[], bool], timeout: float, *, what: str = "the condition") -> None:
    """`eventually` inside a running event loop, sleeping without blocking it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"{what} did not hold within {timeout} s")
        await asyncio.sleep(0.02)
