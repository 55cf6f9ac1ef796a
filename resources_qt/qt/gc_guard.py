"""Run Python's cyclic garbage collector on the GUI thread only.

The engine and the snippet pool run threads of their own. When automatic
collection happens to start on one of them and finds a cycle holding a Qt
widget, the widget's C++ destructor runs on that thread, and Qt crashes
(seen here: a segfault in QAbstractItemView's destructor called from the
server thread's collection). With the guard installed, automatic collection
is off and a timer on the GUI thread collects instead, generation by
generation, as often as the interpreter's own thresholds would.
"""

from __future__ import annotations

import gc
import logging

from PySide6.QtCore import QObject, QTimer, Slot

__all__ = ["GuiThreadCollector"]

logger = logging.getLogger(__name__)


class GuiThreadCollector(QObject):
    """Disables automatic garbage collection and collects from a GUI-thread timer.

    Create it on the GUI thread (parented to the application) and call
    `install()`; `uninstall()` restores automatic collection as it was (and
    unfreezes what `freeze_later` froze). No signals.
    """

    def __init__(self, parent: QObject | None = None, *, interval_ms: int = 250) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._on_timeout)
        self._thresholds = gc.get_threshold()
        self._was_enabled = gc.isenabled()
        self._frozen = False
        self.collected = 0

    @property
    def installed(self) -> bool:
        return self._timer.isActive()

    def install(self) -> None:
        self._thresholds = gc.get_threshold()
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._timer.start()

    def uninstall(self) -> None:
        self._timer.stop()
        if self._frozen:
            self._frozen = False
            gc.unfreeze()  # an in-process caller (a test, a script) gets its collector back as it was
        if self._was_enabled:
            gc.enable()

    def freeze_later(self, delay_ms: int) -> None:
        """In `delay_ms`, on the GUI thread: collect everything once, then freeze what survives (`gc.freeze`).

        For what start-up built, which lives as long as the app: frozen, later full collections walk
        only newer objects (they took 76-194 ms in the studio). Start-up's garbage is collected
        first, or freezing would keep it for good; the delay keeps both off the first paint.
        """
        QTimer.singleShot(delay_ms, self, self._on_freeze_due)

    @Slot()
    def _on_freeze_due(self) -> None:
        if not self.installed:
            return  # uninstalled meanwhile: nothing to freeze for
        self.collected += gc.collect()
        gc.freeze()
        self._frozen = True

    @Slot()
    def _on_timeout(self) -> None:
        counts = gc.get_count()
        # Collect the oldest generation whose count passed its threshold,
        # which also collects every younger one.
        for generation in (2, 1, 0):
            if counts[generation] > self._thresholds[generation]:
                self.collected += gc.collect(generation)
                return
