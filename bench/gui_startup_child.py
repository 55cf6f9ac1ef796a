"""The start-up benchmark's child: `python -m bench.gui_startup_child PROJECT`, prints `RESULT {json}`.

Runs `studio.cli.main` on the project and reports the time (perf_counter, the clock the parent
shares) at which the main window is first exposed, then closes it. It imports only what that
needs (Qt and the standard library), so the time measured is the studio's own start-up, not the
other GUI benchmarks' helpers (bench.gui_child, bench.common, statistics, cProfile...).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

# The `resource-studio` script's first import, before Qt as there: PySide6 checks each module named
# in an import statement after it loads (reading its source for "PySide6"), so the order counts.
from studio.cli import main  # isort: skip

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtGui import QWindow
from PySide6.QtWidgets import QApplication


class ExposeWatch(QObject):
    """Prints the time the main window is first exposed, then closes it (which ends run_app).

    It watches the main window's own QWindow, found when it becomes the focus window (the offscreen
    platform does that between `show()` and the first expose), not every event of the application:
    an application-wide Python event filter put each of start-up's ~7,000 events through Python and
    made PySide build Python types and enums for every object passed to it (about 35 ms of enums
    when the catalogue's first list was built), a cost the studio itself never pays.
    """

    def __init__(self, app: QApplication) -> None:
        super().__init__()
        self.done = False
        self._app = app
        app.focusWindowChanged.connect(self._on_focus_window_changed)

    def _main_window(self, handle: QWindow) -> Any:
        return next((w for w in QApplication.topLevelWidgets()
                     if w.objectName() == "mainWindow" and w.windowHandle() is handle), None)  # fmt: skip

    def _on_focus_window_changed(self, handle: QWindow | None) -> None:
        if self.done or handle is None or self._main_window(handle) is None:
            return
        self._app.focusWindowChanged.disconnect(self._on_focus_window_changed)
        if handle.isExposed():  # exposed already (another platform): the time is a little late, never early
            self._report(handle)
        else:
            handle.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if (not self.done and event.type() == QEvent.Type.Expose and isinstance(obj, QWindow)
                and obj.isExposed()):  # fmt: skip
            obj.removeEventFilter(self)
            self._report(obj)
        return False

    def _report(self, handle: QWindow) -> None:
        self.done = True
        shown_at = time.perf_counter()
        widget = self._main_window(handle)
        print("RESULT " + json.dumps({"shown_at": shown_at, "catalogue_rows": _rows(widget)}), flush=True)
        QTimer.singleShot(0, widget.close)


def _rows(window: Any) -> int:
    try:
        return len(window.document.names())
    except Exception:
        return -1


def startup(project: str) -> int:
    app = QApplication(sys.argv[:1])
    watch = ExposeWatch(app)  # noqa: F841 - kept alive while the studio runs
    return main([project])


if __name__ == "__main__":
    sys.exit(startup(sys.argv[1]))
