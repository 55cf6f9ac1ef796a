"""GuiThreadCollector: automatic collection off, cycles still collected, from the GUI thread."""

from __future__ import annotations

import gc
import threading
import weakref

from PySide6.QtCore import QObject
from pytestqt.qtbot import QtBot

from resources_qt.qt.gc_guard import GuiThreadCollector


class _Cycle:
    def __init__(self) -> None:
        self.me = self
        self.owner = QObject()


def test_cycles_are_collected_by_the_gui_thread(qtbot: QtBot) -> None:
    previous = gc.isenabled()
    collector = GuiThreadCollector(interval_ms=10)
    collector.install()
    try:
        assert not gc.isenabled()
        refs: list[weakref.ref[_Cycle]] = []

        def make_garbage() -> None:
            # Plenty of allocations on another thread: with automatic
            # collection on, one of them would trigger a collection here.
            for _ in range(5_000):
                refs.append(weakref.ref(_Cycle()))

        worker = threading.Thread(target=make_garbage)
        worker.start()
        worker.join()
        assert any(ref() is not None for ref in refs)
        qtbot.waitUntil(lambda: all(ref() is None for ref in refs), timeout=5_000)
        assert collector.collected > 0
    finally:
        collector.uninstall()
    assert gc.isenabled() == previous
