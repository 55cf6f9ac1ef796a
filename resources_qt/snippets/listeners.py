"""A thread-safe list of callbacks, each called in turn; one that raises is logged and the others still run."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Generic, ParamSpec

__all__ = ["Listeners"]

logger = logging.getLogger(__name__)

P = ParamSpec("P")


class Listeners(Generic[P]):
    """Callbacks added and removed from any thread; `emit` calls a snapshot of them outside the lock."""

    def __init__(self, what: str) -> None:
        self._what = what
        self._lock = threading.Lock()
        self._callbacks: list[Callable[P, None]] = []

    def add(self, callback: Callable[P, None]) -> Callable[[], None]:
        """Add `callback`; returns what removes it again (idempotent)."""
        with self._lock:
            self._callbacks.append(callback)

        def remove() -> None:
            with self._lock:
                if callback in self._callbacks:
                    self._callbacks.remove(callback)

        return remove

    def emit(self, *args: P.args, **kwargs: P.kwargs) -> None:
        with self._lock:
            callbacks = list(self._callbacks)
        for callback in callbacks:
            try:
                callback(*args, **kwargs)
            except Exception:
                logger.exception("%s %r failed", self._what, callback)
