"""The facade's test runner: a project's resource tests run on a plain thread, results batched to the GUI."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from PySide6.QtCore import QObject, Signal

from resources_qt.project import Project
from resources_qt.testing.runner import (
    DEFAULT_DEADLINE,
    ERAS,
    RunError,
    TestCase,
    TestResult,
    cases_of_resource,
    collect_tests,
    run_tests,
)
from resources_qt.testing.snapshots import SnapshotStore, snapshot_dir_for

__all__ = [
    "DEFAULT_DEADLINE", "ERAS", "SnapshotStore", "TestCase", "TestResult", "TestsWorker", "cases_of_resource",
    "collect_tests", "snapshot_dir_for",
]

logger = logging.getLogger(__name__)


class TestsWorker(QObject):
    """Runs tests on a plain thread with the Qt-free runner (its own engine and snippet workers).

    Results reach the GUI thread batched: the thread appends to a list and
    signals only when the list was empty, so a slot drains everything that
    arrived meanwhile in one go.

    Signals:
        results_arrived(): new results wait in `take_results()` (queued to the GUI thread).
        run_ended(str error): the run is over; "" unless the project could not be served.
    """

    __test__ = False  # not a pytest class

    results_arrived = Signal()
    run_ended = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lock = threading.Lock()
        self._pending: list[TestResult] = []
        self._thread: threading.Thread | None = None
        self._cancelled = threading.Event()

    @property
    def is_running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(
        self,
        project: Project,
        cases: Sequence[TestCase],
        *,
        snapshots: SnapshotStore | None,
        era: str = ERAS[0],
        deadline: float = DEFAULT_DEADLINE,
    ) -> None:
        """Run `cases` against `project` (a copy the caller will not change) in the background, in `era`.

        Each test's `matches` search gets `deadline` seconds, as in `resource-studio test`: past it the
        search process is killed and the test fails saying it timed out, so no pattern stalls the run.
        """
        if self.is_running:
            raise RuntimeError("a test run is already under way")
        self._cancelled = threading.Event()
        cancelled = self._cancelled
        cases = list(cases)

        def work() -> None:
            error = ""
            try:
                run_tests(project, cases, eras=(era,), snapshots=snapshots, on_result=self._deliver,
                          cancelled=cancelled, deadline=deadline)
            except RunError as exc:
                error = str(exc)
            except Exception as exc:  # a crash of the run must end it visibly, not kill the thread silently
                logger.exception("test run failed")
                error = f"the test run failed: {type(exc).__name__}: {exc}"
            self.run_ended.emit(error)

        self._thread = threading.Thread(target=work, name="tests-view-run", daemon=True)
        self._thread.start()

    def take_results(self) -> list[TestResult]:
        with self._lock:
            taken, self._pending = self._pending, []
        return taken

    def cancel(self, *, wait: float | None = None) -> None:
        """Stop before the next test; with `wait`, block at most that many seconds for the thread to end."""
        self._cancelled.set()
        if wait is not None:
            self.join(wait)

    def join(self, timeout: float) -> None:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _deliver(self, result: TestResult) -> None:
        with self._lock:
            first = not self._pending
            self._pending.append(result)
        if first:
            self.results_arrived.emit()
