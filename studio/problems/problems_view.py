"""The Problems panel: the open project's lint findings, refreshed after edits off the GUI thread, with quick fixes."""

from __future__ import annotations

import logging

from PySide6.QtCore import QModelIndex, QPoint, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from resources_qt.lint.findings import Finding, Level, LintReport, summary_line
from resources_qt.project import Project
from resources_qt.testing.eras import ERAS
from studio.document.document import ProjectDocument
from studio.problems.lint_worker import LintWorker
from studio.problems.problems_model import MESSAGE_COLUMN, RULE_COLUMN, ProblemsModel, worst_levels

__all__ = ["ProblemsView"]

logger = logging.getLogger(__name__)

DELAY_MS = 1500
"""Quiet time after the last edit before a lint starts: typing never starts one per key."""
TIME_LIMIT_S = 30.0
"""No read starts after this long (those under way finish within the reader timeout); the panel says what was
left out."""
MAX_INSTANCES = 5
"""Listed instances read per template in the panel (the command line reads 20)."""


class ProblemsView(QWidget):
    """The lint findings of the document's project (object name `problemsView`).

    A lint starts `delay_ms` after the last edit (and once when the panel opens), runs through the
    real serving path on a background thread against a copy of the project with its servable
    resources, and starts no read after `time_limit_s`; an edit during a run lints again when it ends. A
    double click names the finding's resource and field (`problem_activated`); **Quick fix**
    (`quickFixButton`, or the row's context menu) applies a certain fix through the document's
    undoable edits.

    Signals:
        problem_activated(str resource, str field): a row was double-clicked; `field` is the resource key at
            fault ("" when the finding names none).
        resource_levels_changed(dict levels): after each lint, every resource with findings and its most
            severe level ("error", "warning" or "note"), for the catalogue's marks.
        lint_started(): a lint began.
        lint_finished(int errors, int warnings, int notes): a lint ended.
    """

    problem_activated = Signal(str, str)
    resource_levels_changed = Signal(dict)
    lint_started = Signal()
    lint_finished = Signal(int, int, int)

    def __init__(
        self,
        document: ProjectDocument,
        parent: QWidget | None = None,
        *,
        delay_ms: int = DELAY_MS,
        time_limit_s: float = TIME_LIMIT_S,
        max_instances: int = MAX_INSTANCES,
        era: str = ERAS[0],
    ) -> None:
        super().__init__(parent)
        self.setObjectName("problemsView")
        self._document = document
        self._time_limit_s = time_limit_s
        self._max_instances = max_instances
        self._era = era
        self._again = False
        self._levels: dict[str, Level] = {}
        self.model = ProblemsModel(self)
        self._worker = LintWorker(self)
        self._worker.finished.connect(self._on_lint_finished, Qt.ConnectionType.QueuedConnection)
        self._timer = QTimer(self)
        self._timer.setObjectName("lintTimer")
        self._timer.setSingleShot(True)
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(self.refresh)

        self.lint_button = QPushButton("Lint now", self)
        self.lint_button.setObjectName("lintNowButton")
        self.lint_button.setToolTip("Read every sample and listed instance and check them against their declarations")
        self.fix_button = QPushButton("Quick fix", self)
        self.fix_button.setObjectName("quickFixButton")
        self.status_label = QLabel(self)
        self.status_label.setObjectName("problemsStatus")
        self.table = QTableView(self)
        self.table.setObjectName("problemsTable")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(MESSAGE_COLUMN, QHeaderView.ResizeMode.Stretch)
        header.resizeSection(RULE_COLUMN, 190)

        buttons = QHBoxLayout()
        buttons.addWidget(self.lint_button)
        buttons.addWidget(self.fix_button)
        buttons.addWidget(self.status_label, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(self.table)

        self.lint_button.clicked.connect(self._on_lint_clicked)
        self.fix_button.clicked.connect(self._on_fix_clicked)
        self.table.doubleClicked.connect(self._on_row_double_clicked)
        self.table.customContextMenuRequested.connect(self._on_context_menu)
        self.table.selectionModel().selectionChanged.connect(self._update_buttons)
        for signal in (document.project_reset, document.resource_added, document.resource_removed,
                       document.resource_changed, document.prelude_changed, document.settings_changed,
                       document.tests_changed):
            signal.connect(self.schedule)
        self._update_buttons()
        self.schedule()

    # -- public API ----------------------------------------------------------

    @property
    def is_running(self) -> bool:
        return self._worker.is_running

    def schedule(self) -> None:
        """Lint once the document has been quiet for the panel's delay (each call restarts the wait)."""
        self._timer.start()

    def refresh(self) -> bool:
        """Lint now; during a run, lint again when it ends (returns False then)."""
        self._timer.stop()
        if self.is_running:
            self._again = True
            return False
        self._again = False
        project, skipped = self._servable_project()
        self._worker.start(project, time_limit_s=self._time_limit_s, max_instances=self._max_instances,
                           era=self._era)
        note = f" ({', '.join(skipped)} left out: fix the errors first)" if skipped else ""
        self.status_label.setText(f"Linting…{note}")
        self._update_buttons()
        self.lint_started.emit()
        return True

    def findings(self) -> list[Finding]:
        return self.model.findings()

    def resource_levels(self) -> dict[str, Level]:
        """Each resource with findings and its most severe level, as of the last lint (the catalogue's marks)."""
        return dict(self._levels)

    def quick_fix(self, row: int) -> bool:
        """Apply the fix of the finding in `row` as one undoable edit; False without a fix or a resource."""
        if not 0 <= row < self.model.rowCount():
            return False
        finding = self.model.finding(row)
        fix = finding.fix
        spec = self._document.spec(finding.resource) if finding.resource is not None and fix is not None else None
        if fix is None or spec is None or finding.resource is None:
            return False
        setattr(spec, fix.field, fix.value)
        stack = self._document.undo_stack
        # A macro of its own: the document merges quick edits of one resource, a fix stays one undo step.
        stack.beginMacro(f"Quick fix: {fix.label} ({finding.resource})")
        try:
            self._document.update_resource(finding.resource, spec)
        finally:
            stack.endMacro()
        settled = [number for number, other in enumerate(self.model.findings())
                   if other.resource == finding.resource and other.fix == fix]
        self.model.drop_rows(settled)
        self._update_buttons()
        return True

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop a lint and wait (bounded) for its thread: call before the application exits."""
        self._timer.stop()
        self._again = False
        self._worker.cancel(wait=timeout)

    # -- internals -----------------------------------------------------------

    def _servable_project(self) -> tuple[Project, list[str]]:
        project = self._document.project.copy()
        if project.path is None and self._document.origin is not None:
            project.path = self._document.origin  # an example opened untitled reads the files beside it
        invalid = set(self._document.invalid_names())
        if invalid:
            project.resources = [spec for spec in project.resources if spec.name not in invalid]
        return project, sorted(invalid)

    def _selected_row(self) -> int | None:
        rows = self.table.selectionModel().selectedRows()
        return rows[0].row() if rows else None

    @Slot()
    def _update_buttons(self) -> None:
        row = self._selected_row()
        fix = self.model.finding(row).fix if row is not None and row < self.model.rowCount() else None
        self.fix_button.setEnabled(fix is not None)
        self.fix_button.setToolTip(fix.label if fix is not None else "The selected problem has no certain fix")
        self.lint_button.setEnabled(not self.is_running)

    @Slot()
    def _on_lint_clicked(self) -> None:
        self.refresh()

    @Slot()
    def _on_fix_clicked(self) -> None:
        row = self._selected_row()
        if row is not None:
            self.quick_fix(row)

    @Slot(QModelIndex)
    def _on_row_double_clicked(self, index: QModelIndex) -> None:
        if not index.isValid():
            return
        finding = self.model.finding(index.row())
        if finding.resource is not None and self._document.peek(finding.resource) is not None:
            self.problem_activated.emit(finding.resource, finding.field or "")

    @Slot(QPoint)
    def _on_context_menu(self, point: QPoint) -> None:
        index = self.table.indexAt(point)
        if not index.isValid():
            return
        fix = self.model.finding(index.row()).fix
        if fix is None:
            return
        menu = QMenu(self.table)
        action = menu.addAction(fix.label)
        action.setObjectName("quickFixAction")
        row = index.row()
        action.triggered.connect(lambda: self.quick_fix(row))
        menu.popup(self.table.viewport().mapToGlobal(point))

    @Slot(object, str)
    def _on_lint_finished(self, report: LintReport | None, error: str) -> None:
        self._worker.join(5.0)  # it has emitted its last signal; joining makes is_running exact
        if report is not None:
            self.model.set_findings(report.findings)
            self._levels = worst_levels(report.findings)
            notes = f" — {'; '.join(report.notes)}" if report.notes else ""
            self.status_label.setText(summary_line(report.findings) + notes)
        else:
            self.status_label.setText(error)
        self._update_buttons()
        counts = self.model.counts()
        self.resource_levels_changed.emit(dict(self._levels))
        self.lint_finished.emit(counts["error"], counts["warning"], counts["note"])
        if self._again:
            self.schedule()
