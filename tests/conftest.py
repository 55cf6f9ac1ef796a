"""Shared test setup: headless Qt, and garbage collection kept on the GUI thread."""

import gc
import os
import sys
from collections.abc import Iterator

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

_collector: list[object] = []


@pytest.fixture(autouse=True)
def _collect_garbage_on_the_gui_thread() -> Iterator[None]:
    """Once Qt is up, keep cyclic collection off the server and pool threads (see gc_guard)."""
    yield
    if "PySide6.QtWidgets" not in sys.modules:
        return
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        return
    if not _collector:
        from resources_qt.qt.gc_guard import GuiThreadCollector

        collector = GuiThreadCollector(app)
        collector.install()
        _collector.append(collector)
    gc.collect()
