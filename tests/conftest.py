"""Shared test setup: headless Qt, garbage collection kept on the GUI thread, and no unexpected error logs."""

import gc
import logging
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
    # What survived is frozen out of later collections: each test's full collection then looks only at
    # what the test made, not at the whole interpreter (Qt, the SDK, every module), which took a third of
    # the suite's time (350 of 919 worker-seconds, in teardown). A frozen object that becomes cyclic
    # garbage later is never collected: a test process's leak, nothing more.
    gc.freeze()


@pytest.fixture(autouse=True)
def _no_unexpected_error_logs(request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Fail a test that logged an ERROR it did not expect (mark it `allow_error_logs` when the error is the point)."""
    yield
    if request.node.get_closest_marker("allow_error_logs"):
        return
    errors = [
        record
        for phase in ("setup", "call")
        for record in caplog.get_records(phase)  # type: ignore[arg-type]
        if record.levelno >= logging.ERROR
    ]
    if errors:
        lines = "\n".join(f"  {r.name}: {r.getMessage()}" for r in errors[:10])
        pytest.fail(f"unexpected error log(s):\n{lines}", pytrace=False)
