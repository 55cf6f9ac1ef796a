"""Lint runs on a plain thread (its own engine and snippet workers), one at a time; the report reaches the GUI."""

from __future__ import annotations

import logging
import threading
import time

from PySide6.QtCore import QObject, Signal

from resources_qt.lint.findings import LintReport
from resources_qt.project import Project

__all__ = ["LintWorker"]

logger = logging.getLogger(__name__)


class LintWorker(QObject):
    """Runs `lint_project` on a background thread, bounded in time and instances.

    Signals:
        finished(object report, str error): the run is over; `report` is a `LintReport`, or None with
            `error` saying why the project could not be linted (queued to the GUI thread).
    """

    finished = Signal(object, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._thread: threading.Thread | None = None
        self._cancelled = threading.Event()

    @property
    def is_running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, project: Project, *, time_limit_s: float, max_instances: int, era: str) -> None:
        """Lint `project` (a copy the caller will not change); reading stops after `time_limit_s` seconds."""
        if self.is_running:
            raise RuntimeError("a lint is already under way")
        self._cancelled = threading.Event()
        cancelled = self._cancelled

        def work() -> None:
            # The engine's stack loads with the first lint, not with the window that shows the panel.
            from resources_qt.lint.runner import RunError, lint_project

            report: LintReport | None = None
            error = ""
            try:
                report = lint_project(project, eras=(era,), max_instances=max_instances,
                                      deadline=time.monotonic() + time_limit_s, cancelled=cancelled)
            except RunError as exc:
                error = str(exc)
            except Exception as exc:  # a crash of the run must end it visibly, not kill the thread silently
                logger.exception("lint failed")
                error = f"lint failed: {type(exc).__name__}: {exc}"
            self.finished.emit(report, error)

        self._thread = threading.Thread(target=work, name="problems-lint", daemon=True)
        self._thread.start()

    def cancel(self, *, wait: float | None = None) -> None:
        """Stop reading; with `wait`, block at most that many seconds for the thread to end."""
        self._cancelled.set()
        if wait is not None:
            self.join(wait)

    def join(self, timeout: float) -> None:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
