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
    """Prints the time the main window is first exposed, then closes it (which ends run_app)."""

    def __init__(self) -> None:
        super().__init__()
        self.done = False

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if not self.done and event.type() == QEvent.Type.Expose and isinstance(obj, QWindow) and obj.isExposed():
            widget = next((w for w in QApplication.topLevelWidgets() if w.objectName() == "mainWindow"), None)
            if widget is not None and widget.windowHandle() is obj:
                self.done = True
                print("RESULT " + json.dumps({"shown_at": time.perf_counter(), "catalogue_rows": _rows(widget)}),
                      flush=True)  # fmt: skip
                QTimer.singleShot(0, widget.close)
        return False


def _rows(window: Any) -> int:
    try:
        return len(window.document.names())
    except Exception:
        return -1


def startup(project: str) -> int:
    app = QApplication(sys.argv[:1])
    watch = ExposeWatch()
    app.installEventFilter(watch)
    return main([project])


if __name__ == "__main__":
    sys.exit(startup(sys.argv[1]))
