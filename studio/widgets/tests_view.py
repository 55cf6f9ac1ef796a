"""The Tests view: every declared test and sample with its status, time and failure, run off the GUI thread."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtGui import QBrush, QGuiApplication, QIcon
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStyle,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from resources_qt.project import Project
from resources_qt.testing.runner import (
    ERAS,
    RunError,
    TestCase,
    TestResult,
    cases_of_resource,
    collect_tests,
    run_tests,
)
from resources_qt.testing.snapshots import SnapshotStore, snapshot_dir_for
from studio.document import ProjectDocument
from studio.widgets.marks import mark_colors

__all__ = ["TestRow", "TestsModel", "TestsView", "TestsWorker"]

logger = logging.getLogger(__name__)

STATUS_COLUMN, NAME_COLUMN, URI_COLUMN, TIME_COLUMN, MESSAGE_COLUMN = range(5)
_HEADERS = ("Status", "Test", "URI", "Time", "Message")
NOT_RUN, RUNNING, PASSED, FAILED = "not run", "running", "passed", "failed"
_SHOWN_URI = 300


@dataclass
class TestRow:
    """One row: a test or a sample, and what its last run said."""

    __test__ = False  # not a pytest class

    case: TestCase
    status: str = NOT_RUN
    result: TestResult | None = None

    @property
    def name(self) -> str:
        return self.case.name

    @property
    def details(self) -> str:
        """The full text for the details pane: the CLI's failure message and diff, or the status."""
        if self.result is None:
            return f"{self.name}: {self.status}"
        if self.result.passed:
            note = f", {self.result.note}" if self.result.note else ""
            return f"{self.name}: passed in {self.result.elapsed_ms:.1f} ms{note}"
        return f"{self.name}: failed in {self.result.elapsed_ms:.1f} ms\n\n" + "\n\n".join(self.result.failures)


class TestsModel(QAbstractTableModel):
    """The tests and samples of a project, in run order, with their last results."""

    __test__ = False  # not a pytest class

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[TestRow] = []
        self._index: dict[str, int] = {}
        self._icons: dict[str, QIcon] = {}

    # -- contents ------------------------------------------------------------

    def set_cases(self, cases: Sequence[TestCase]) -> None:
        """Show `cases`; a test that keeps its name and URI keeps its last result."""
        previous = {row.name: row for row in self._rows}
        self.beginResetModel()
        self._rows = []
        for case in cases:
            old = previous.get(case.name)
            if old is not None and old.case == case and old.status != RUNNING:
                self._rows.append(TestRow(case, old.status, old.result))
            else:
                self._rows.append(TestRow(case))
        self._index = {row.name: number for number, row in enumerate(self._rows)}
        self.endResetModel()

    def rows(self) -> list[TestRow]:
        return list(self._rows)

    def row(self, number: int) -> TestRow:
        return self._rows[number]

    def row_named(self, name: str) -> TestRow | None:
        number = self._index.get(name)
        return self._rows[number] if number is not None else None

    def mark_running(self, names: Sequence[str]) -> None:
        for name in names:
            number = self._index.get(name)
            if number is not None:
                self._rows[number].status = RUNNING
                self._rows[number].result = None
                self._changed(number)

    def apply_results(self, results: Sequence[TestResult]) -> None:
        for result in results:
            number = self._index.get(result.name)
            if number is None:
                continue  # the test was removed while it ran
            row = self._rows[number]
            row.status = PASSED if result.passed else FAILED
            row.result = result
            self._changed(number)

    def settle(self) -> None:
        """After a run ends: tests still marked running did not run (cancelled or the run failed)."""
        for number, row in enumerate(self._rows):
            if row.status == RUNNING:
                row.status = NOT_RUN
                self._changed(number)

    def counts(self) -> tuple[int, int]:
        passed = sum(1 for row in self._rows if row.status == PASSED)
        failed = sum(1 for row in self._rows if row.status == FAILED)
        return passed, failed

    def failing_resources(self) -> list[str]:
        """Names of resources with a failing test (resolved or sampled), in row order, once each."""
        names: dict[str, None] = {}
        for row in self._rows:
            if row.status == FAILED and row.result is not None:
                name = row.case.sample_of or row.result.resource or row.case.spec.expect.resource
                if name:
                    names[name] = None
        return list(names)

    def _changed(self, number: int) -> None:
        self.dataChanged.emit(self.index(number, 0), self.index(number, len(_HEADERS) - 1))

    # -- Qt model ------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(_HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return _HEADERS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        row = self._rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(row, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.details if column in (STATUS_COLUMN, MESSAGE_COLUMN) else self._display(row, column)
        if role == Qt.ItemDataRole.DecorationRole and column == STATUS_COLUMN:
            return self._icon(row.status)
        if role == Qt.ItemDataRole.ForegroundRole:
            colors = mark_colors(QGuiApplication.palette())
            if row.status == FAILED and column in (STATUS_COLUMN, MESSAGE_COLUMN):
                return QBrush(colors.error)
            if row.status in (NOT_RUN, RUNNING):
                return QBrush(colors.muted)
        if role == Qt.ItemDataRole.TextAlignmentRole and column == TIME_COLUMN:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _display(self, row: TestRow, column: int) -> str:
        if column == STATUS_COLUMN:
            return row.status
        if column == NAME_COLUMN:
            return row.name
        if column == URI_COLUMN:
            uri = row.case.spec.uri
            return uri if len(uri) <= _SHOWN_URI else f"{uri[:_SHOWN_URI]}…"
        if column == TIME_COLUMN:
            return f"{row.result.elapsed_ms:.1f} ms" if row.result is not None else ""
        if row.result is None or row.result.passed:
            return row.result.note if row.result is not None else ""
        first = row.result.failures[0].splitlines()
        more = len(row.result.failures) - 1
        return (first[0] if first else "failed") + (f" (+{more} more)" if more else "")

    def _icon(self, status: str) -> QIcon | None:
        if status not in (PASSED, FAILED):
            return None
        if status not in self._icons:
            pixmap = (
                QStyle.StandardPixmap.SP_DialogApplyButton
                if status == PASSED
                else QStyle.StandardPixmap.SP_MessageBoxCritical
            )
            self._icons[status] = QApplication.style().standardIcon(pixmap)
        return self._icons[status]


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
    ) -> None:
        """Run `cases` against `project` (a copy the caller will not change) in the background, in `era`."""
        if self.is_running:
            raise RuntimeError("a test run is already under way")
        self._cancelled = threading.Event()
        cancelled = self._cancelled
        cases = list(cases)

        def work() -> None:
            error = ""
            try:
                run_tests(project, cases, eras=(era,), snapshots=snapshots, on_result=self._deliver,
                          cancelled=cancelled)
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


class TestsView(QWidget):
    """Every test and sample of the document's project: status, time, failure message and diff.

    `runTestsButton` runs all; `runSelectedButton` the rows selected in the
    table; `runResourceTestsButton` those of the resource given to
    `set_current_resource` (the catalogue's selection). Runs go through the
    real serving path on a background thread, against a copy of the project
    taken when the run starts, so typing never waits for them.

    Signals:
        run_started(): a run began.
        run_finished(int passed, int failed): a run ended; counts over every row.
        failing_resources_changed(list names): resources with a failing test, after a run.
    """

    __test__ = False  # not a pytest class

    run_started = Signal()
    run_finished = Signal(int, int)
    failing_resources_changed = Signal(list)

    def __init__(self, document: ProjectDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("testsView")
        self._document = document
        self._current_resource: str | None = None
        self.model = TestsModel(self)
        self._worker = TestsWorker(self)
        self._worker.results_arrived.connect(self._on_results_arrived, Qt.ConnectionType.QueuedConnection)
        self._worker.run_ended.connect(self._on_run_ended, Qt.ConnectionType.QueuedConnection)

        self.run_all_button = QPushButton("Run all", self)
        self.run_all_button.setObjectName("runTestsButton")
        self.run_selected_button = QPushButton("Run selected", self)
        self.run_selected_button.setObjectName("runSelectedButton")
        self.run_resource_button = QPushButton("Run resource's tests", self)
        self.run_resource_button.setObjectName("runResourceTestsButton")
        self.era_combo = QComboBox(self)
        self.era_combo.setObjectName("testsEraCombo")
        self.era_combo.setToolTip("Protocol era the test client speaks")
        for era in ERAS:
            self.era_combo.addItem(era, era)
        self.status_label = QLabel(self)
        self.status_label.setObjectName("testsStatus")
        self.table = QTableView(self)
        self.table.setObjectName("testsTable")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(MESSAGE_COLUMN, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(STATUS_COLUMN, QHeaderView.ResizeMode.ResizeToContents)
        self.details = QPlainTextEdit(self)
        self.details.setObjectName("testDetails")
        self.details.setReadOnly(True)
        self.details.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)

        buttons = QHBoxLayout()
        for button in (self.run_all_button, self.run_selected_button, self.run_resource_button):
            buttons.addWidget(button)
        buttons.addWidget(self.era_combo)
        buttons.addWidget(self.status_label, 1)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.table)
        splitter.addWidget(self.details)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(splitter)

        self.run_all_button.clicked.connect(self._on_run_all_clicked)
        self.run_selected_button.clicked.connect(self._on_run_selected_clicked)
        self.run_resource_button.clicked.connect(self._on_run_resource_clicked)
        self.table.doubleClicked.connect(self._on_row_double_clicked)
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        for signal in (document.project_reset, document.resource_added, document.resource_removed,
                       document.resource_changed, document.errors_changed):
            signal.connect(self._on_document_changed)
        self.refresh()

    # -- public API ----------------------------------------------------------

    @property
    def is_running(self) -> bool:
        return self._worker.is_running

    def refresh(self) -> None:
        """Re-read the tests and samples from the document (results of unchanged tests are kept)."""
        self.model.set_cases(collect_tests(self._document.project, self._document.project.tests))
        self._update_buttons()
        self._show_details()

    @property
    def era(self) -> str:
        """The protocol era runs use (`testsEraCombo`)."""
        return str(self.era_combo.currentData())

    def set_current_resource(self, name: str | None) -> None:
        """The resource whose tests `runResourceTestsButton` runs (None: none selected)."""
        self._current_resource = name or None
        self._update_buttons()

    def run_all(self) -> bool:
        return self.run_names([row.name for row in self.model.rows()])

    def run_resource(self, name: str) -> bool:
        """Run the tests of resource `name`: its samples, tests expecting it and tests whose URI resolves to it."""
        project = self._document.project
        cases = [row.case for row in self.model.rows()]
        return self.run_names([case.name for case in cases_of_resource(project, cases, name)])

    def run_names(self, names: Sequence[str]) -> bool:
        """Run the named rows; False (and nothing happens) while a run is under way or when none exist."""
        if self.is_running:
            return False
        wanted = set(names)
        cases = [row.case for row in self.model.rows() if row.name in wanted]
        if not cases:
            return False
        project, skipped = self._servable_project()
        self.model.mark_running([case.name for case in cases])
        path = self._document.path
        snapshots = SnapshotStore(snapshot_dir_for(path)) if path is not None else None
        self._worker.start(project, cases, snapshots=snapshots, era=self.era)
        note = f" ({', '.join(skipped)} not served: fix the errors first)" if skipped else ""
        self.status_label.setText(f"Running {len(cases)} test(s)…{note}")
        self._update_buttons()
        self.run_started.emit()
        return True

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop a run and wait (bounded) for its thread: call before the application exits."""
        self._worker.cancel(wait=timeout)

    # -- internals -----------------------------------------------------------

    def _servable_project(self) -> tuple[Project, list[str]]:
        project = self._document.project.copy()
        invalid = set(self._document.invalid_names())
        if invalid:
            # Work in progress stays in the document; a run serves what would serve.
            project.resources = [spec for spec in project.resources if spec.name not in invalid]
        return project, sorted(invalid)

    def _update_buttons(self) -> None:
        running = self.is_running
        has_rows = self.model.rowCount() > 0
        self.run_all_button.setEnabled(not running and has_rows)
        self.run_selected_button.setEnabled(not running and bool(self._selected_names()))
        self.run_resource_button.setEnabled(not running and self._current_resource is not None)
        self.era_combo.setEnabled(not running)

    def _selected_names(self) -> list[str]:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.model.row(number).name for number in rows if number < self.model.rowCount()]

    def _show_details(self) -> None:
        current = self.table.currentIndex()
        if current.isValid() and current.row() < self.model.rowCount():
            self.details.setPlainText(self.model.row(current.row()).details)
        else:
            self.details.clear()

    @Slot()
    def _on_run_all_clicked(self) -> None:
        self.run_all()

    @Slot()
    def _on_run_selected_clicked(self) -> None:
        self.run_names(self._selected_names())

    @Slot()
    def _on_run_resource_clicked(self) -> None:
        if self._current_resource is not None:
            self.run_resource(self._current_resource)

    @Slot(QModelIndex)
    def _on_row_double_clicked(self, index: QModelIndex) -> None:
        if index.isValid():
            self.run_names([self.model.row(index.row()).name])

    @Slot()
    def _on_selection_changed(self) -> None:
        self._update_buttons()
        self._show_details()

    @Slot()
    def _on_document_changed(self) -> None:
        if self.is_running:
            return  # refreshed when the run ends, so running rows keep their place
        self.refresh()

    @Slot()
    def _on_results_arrived(self) -> None:
        self.model.apply_results(self._worker.take_results())
        self._show_details()

    @Slot(str)
    def _on_run_ended(self, error: str) -> None:
        self._worker.join(5.0)  # it has emitted its last signal; joining makes is_running exact
        self.model.apply_results(self._worker.take_results())
        self.model.settle()
        passed, failed = self.model.counts()
        self.status_label.setText(error or f"{passed} passed, {failed} failed")
        self.refresh()
        self.failing_resources_changed.emit(self.model.failing_resources())
        self.run_finished.emit(passed, failed)
