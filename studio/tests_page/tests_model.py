"""The Tests view's table model: one row per test or sample, with the status and result of its last run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QGuiApplication, QIcon
from PySide6.QtWidgets import QApplication, QStyle

from resources_qt.testing.runner import TestCase, TestResult
from studio.look.marks import mark_colors

__all__ = [
    "FAILED",
    "MESSAGE_COLUMN",
    "NAME_COLUMN",
    "NOT_RUN",
    "PASSED",
    "RUNNING",
    "STATUS_COLUMN",
    "TIME_COLUMN",
    "URI_COLUMN",
    "TestRow",
    "TestsModel",
]

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
