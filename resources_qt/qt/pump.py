"""Hands events from worker threads to the GUI thread in batches: deques drained by a Qt timer."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot

__all__ = ["EventPump"]


class EventPump(QObject):
    """Thread-safe `push`; the GUI thread receives everything in order of kind, at most every `interval_ms`.

    Low-rate events go through an unbounded deque; high-rate ones (traffic,
    snippet output) through bounded deques that drop their oldest entries
    when the GUI falls behind, so memory stays bounded.

    Signals:
        drained(list events, list traffic, list output): one batch, on the GUI thread.
    """

    drained = Signal(list, list, list)
    _woken = Signal()
    _woken_now = Signal()

    def __init__(
        self, *, interval_ms: int = 50, traffic_limit: int = 5000, output_limit: int = 2000,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._events: deque[Any] = deque()
        self._traffic: deque[Any] = deque(maxlen=traffic_limit)
        self._output: deque[Any] = deque(maxlen=output_limit)
        self._pending = False
        self._closed = False
        self._lock = threading.Lock()
        self.dropped_traffic = 0
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._on_timeout)
        # Emitted from worker threads; Qt queues it onto this object's (the GUI) thread.
        self._woken.connect(self._on_woken)
        self._woken_now.connect(self._on_woken_now)

    def push(self, event: Any) -> None:
        self._events.append(event)
        self._kick()

    def push_now(self, event: Any) -> None:
        """Like `push`, for a rare event someone is waiting for (a preview): delivered on the GUI
        thread's next turn instead of after the batching interval."""
        self._events.append(event)
        with self._lock:
            if self._closed:
                return
            self._woken_now.emit()

    def push_traffic(self, entry: Any) -> None:
        if len(self._traffic) == self._traffic.maxlen:
            self.dropped_traffic += 1
        self._traffic.append(entry)
        self._kick()

    def push_output(self, item: Any) -> None:
        self._output.append(item)
        self._kick()

    def close(self) -> None:
        """Drop whatever arrives from now on (the owner is going away; never signal a dying object)."""
        with self._lock:
            self._closed = True
            self._pending = True
        self._timer.stop()

    def _kick(self) -> None:
        with self._lock:
            if self._pending or self._closed:
                return
            self._pending = True
            # Emitted under the lock so close() cannot slip in between the check and the emit.
            self._woken.emit()

    @Slot()
    def _on_woken(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

    @Slot()
    def _on_woken_now(self) -> None:
        self.flush()

    @Slot()
    def _on_timeout(self) -> None:
        self.flush()

    def flush(self) -> None:
        """Emit whatever is queued now (GUI thread)."""
        with self._lock:
            if self._closed:
                return
            self._pending = False
        events = _drain(self._events.popleft, len(self._events))
        traffic = _drain(self._traffic.popleft, len(self._traffic))
        output = _drain(self._output.popleft, len(self._output))
        if events or traffic or output:
            self.drained.emit(events, traffic, output)


def _drain(pop: Callable[[], Any], count: int) -> list[Any]:
    items: list[Any] = []
    for _ in range(count):
        try:
            items.append(pop())
        except IndexError:
            break
    return items
