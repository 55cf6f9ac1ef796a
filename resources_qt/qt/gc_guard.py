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

__all__ = ["FREEZE_DELAY_MS", "GuiThreadCollector"]

FREEZE_DELAY_MS = 1000
"""How long after start-up its objects are collected and frozen out of later collections."""

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
        self._long_lived = 0  # objects in the oldest generation after the last full collection
        self._froze_for_server = False
        self.collected = 0
        self.full_collections = 0

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
    def freeze_after_first_start(self) -> None:
        """Collect and freeze at once, the first time a server starts (connect `server_started` here).

        Starting a server imports the SDK (its pydantic models: ~80,000 objects) after start-up's
        freeze; unfrozen, every collection of the two older generations walked them again (gen-1
        collections of 70-190 ms while 16 clients read: the studio's worst stalls under load). Done
        at once, the one ~70 ms collection belongs to the Start press, before clients read.
        """
        if self._froze_for_server:
            return
        self._froze_for_server = True
        self.freeze_later(0)

    @Slot()
    def _on_freeze_due(self) -> None:
        if not self.installed:
            return  # uninstalled meanwhile: nothing to freeze for
        self.collected += gc.collect()
        gc.freeze()
        self._frozen = True
        self._long_lived = 0  # all of it is frozen now

    @Slot()
    def _on_timeout(self) -> None:
        counts = gc.get_count()
        if counts[1] > self._thresholds[1]:
            # CPython's own rule for the oldest generation: a full collection only once the objects
            # promoted since the last one are a quarter of what survived it. Without it a busy server
            # (a bounded traffic log churning) paid a 90-130 ms full collection every ten gen-1 ones.
            if counts[2] > self._thresholds[2] and self._full_collection_due():
                self.collected += gc.collect(2)
                self.full_collections += 1
                self._long_lived = len(gc.get_objects(2))
            else:
                self.collected += gc.collect(1)
        elif counts[0] > self._thresholds[0]:
            self.collected += gc.collect(0)

    def _full_collection_due(self) -> bool:
        pending = len(gc.get_objects(2)) - self._long_lived
        return pending > self._long_lived // 4
