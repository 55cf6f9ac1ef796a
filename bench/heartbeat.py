"""A QTimer heartbeat that records the longest gap the GUI event loop left between ticks."""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, Qt, QTimer, Slot


class Heartbeat(QObject):
    """Ticks every `interval_ms`; `max_stall_ms` is the longest gap beyond the interval while running."""

    def __init__(self, interval_ms: int = 5, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.interval_ms = interval_ms
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._on_tick)
        self._last = 0.0
        self.gaps: list[float] = []

    def start(self) -> None:
        self.gaps.clear()
        self._last = time.perf_counter()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        self._on_tick()

    @Slot()
    def _on_tick(self) -> None:
        now = time.perf_counter()
        self.gaps.append((now - self._last) * 1000)
        self._last = now

    @property
    def max_stall_ms(self) -> float:
        return max(0.0, max(self.gaps, default=0.0) - self.interval_ms)

    def stalls_over(self, threshold_ms: float) -> int:
        return sum(1 for gap in self.gaps if gap - self.interval_ms > threshold_ms)
