"""GuiThreadCollector: automatic collection off, cycles still collected, from the GUI thread."""

from __future__ import annotations

import gc
import threading
import weakref

from PySide6.QtCore import QObject, QTimer
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

        collecting_threads: list[threading.Thread] = []

        def on_gc(phase: str, info: dict[str, int]) -> None:
            if phase == "start":
                collecting_threads.append(threading.current_thread())

        gc.callbacks.append(on_gc)
        try:
            worker = threading.Thread(target=make_garbage)
            worker.start()
            worker.join()
            assert any(ref() is not None for ref in refs)
            qtbot.waitUntil(lambda: all(ref() is None for ref in refs), timeout=5_000)
        finally:
            gc.callbacks.remove(on_gc)
        # Another GuiThreadCollector (the test session's) may be the one that got there first:
        # what matters is that every collection ran on the GUI thread, none on the worker.
        assert collecting_threads and set(collecting_threads) == {threading.main_thread()}
    finally:
        collector.uninstall()
    assert gc.isenabled() == previous


def test_freeze_later_collects_then_freezes_and_uninstall_unfreezes(qtbot: QtBot) -> None:
    gc.unfreeze()  # whatever an earlier test left frozen
    collector = GuiThreadCollector(interval_ms=10_000)
    collector.install()
    try:
        garbage = weakref.ref(_Cycle())  # start-up's garbage: collected, not frozen for good
        kept = _Cycle()
        collector.freeze_later(0)
        assert gc.get_freeze_count() == 0  # not before the delay (the first paint)
        qtbot.waitUntil(lambda: gc.get_freeze_count() > 0, timeout=5_000)
        assert garbage() is None and kept.me is kept
    finally:
        collector.uninstall()
    assert gc.get_freeze_count() == 0


def test_freeze_later_does_nothing_once_uninstalled(qtbot: QtBot) -> None:
    gc.unfreeze()
    collector = GuiThreadCollector(interval_ms=10_000)
    collector.install()
    collector.freeze_later(0)
    collector.uninstall()
    later: list[bool] = []
    QTimer.singleShot(1, lambda: later.append(True))  # due after the freeze's timer
    qtbot.waitUntil(lambda: bool(later), timeout=5_000)
    assert gc.get_freeze_count() == 0


def test_full_collections_follow_cpythons_quarter_rule(qtbot: QtBot) -> None:
    """A bounded buffer churning (the traffic log under load) never triggers full collections; growth does."""
    gc.unfreeze()
    thresholds = gc.get_threshold()
    gc.set_threshold(50, 2, 2)  # a full collection due every fourth young one, if sizes allowed it
    collector = GuiThreadCollector(interval_ms=5)
    collector.install()
    young: list[int] = []
    running = [True]

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 1:
            young.append(1)

    gc.callbacks.append(on_gc)
    try:
        kept = [{"n": [i]} for i in range(20_000)]  # what survives: the size the rule compares with
        buffer: list[dict[str, list[int]]] = []

        def churn() -> None:
            # A bounded log: new entries live through a few collections, then the oldest go.
            buffer.extend({"n": [i]} for i in range(200))
            if len(buffer) > 4_000:
                del buffer[:2_000]
            if running[0]:
                QTimer.singleShot(1, churn)

        churn()
        qtbot.waitUntil(lambda: collector.full_collections >= 1, timeout=10_000)
        after_first = collector.full_collections
        young.clear()
        qtbot.waitUntil(lambda: len(young) >= 40, timeout=20_000)
        assert collector.full_collections == after_first  # before: one full collection every third young one
        # The long-lived set grows by half (a dict and its list: two objects each).
        kept.extend({"n": [i]} for i in range(len(gc.get_objects(2)) // 4))
        qtbot.waitUntil(lambda: collector.full_collections > after_first, timeout=10_000)
        running[0] = False
    finally:
        running[0] = False
        gc.callbacks.remove(on_gc)
        collector.uninstall()
        gc.set_threshold(*thresholds)


def test_the_first_server_start_collects_and_freezes_once(qtbot: QtBot) -> None:
    gc.unfreeze()
    collector = GuiThreadCollector(interval_ms=10_000)
    collector.install()
    try:
        garbage = weakref.ref(_Cycle())  # the SDK import's garbage: collected, not frozen
        collector.freeze_after_first_start()
        qtbot.waitUntil(lambda: gc.get_freeze_count() > 0, timeout=5_000)
        assert garbage() is None
        frozen = gc.get_freeze_count()
        later = [_Cycle() for _ in range(100)]  # a second start's objects are not frozen
        collector.freeze_after_first_start()
        done: list[bool] = []
        QTimer.singleShot(1, lambda: done.append(True))
        qtbot.waitUntil(lambda: bool(done), timeout=5_000)
        assert gc.get_freeze_count() == frozen and len(later) == 100
    finally:
        collector.uninstall()
    assert gc.get_freeze_count() == 0
