"""The Tests view: every declared test and sample with its status, time and failure, run off the GUI thread."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt, Signal, Slot
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from resources_qt.project import Project
from resources_qt.qt.tests_runner import (
    ERAS,
    SnapshotStore,
    TestsWorker,
    cases_of_resource,
    collect_tests,
    snapshot_dir_for,
)
from studio.document.document import ProjectDocument
from studio.tests_page.tests_model import (
    MESSAGE_COLUMN,
    NAME_COLUMN,
    STATUS_COLUMN,
    TIME_COLUMN,
    URI_COLUMN,
    TestsModel,
)

__all__ = ["TestsView"]

logger = logging.getLogger(__name__)

MIN_NAME_WIDTH = 160
"""The narrowest the name and URI columns get, in pixels."""


class TestsView(QWidget):
    """Every test and sample of the document's project: status, time, failure message and diff.

    `runTestsButton` runs all; `runSelectedButton` the rows selected in the
    table; `runResourceTestsButton` those of the resource given to
    `set_current_resource` (the catalogue's selection). Runs go through the
    real serving path on a background thread, against a copy of the project
    taken when the run starts, so typing never waits for them. With
    `runOnSaveCheck` ticked, every save runs them all. Resources that cannot
    be served are held back by the run, and their tests fail saying why.

    Snapshot files no test records any more are named under the buttons
    (`orphanSnapshotsLabel`); `deleteOrphanSnapshotsButton` deletes them once
    `ask_delete_snapshots(paths)` (a message box; tests replace it) says yes.

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
        self.era_combo.setAccessibleName("Protocol era")
        self.era_combo.setAccessibleDescription("The protocol era the test client speaks")
        for era in ERAS:
            self.era_combo.addItem(era, era)
        self.run_on_save_check = QCheckBox("Run on save", self)
        self.run_on_save_check.setObjectName("runOnSaveCheck")
        self.run_on_save_check.setToolTip("Run every test whenever the project is saved")
        self.status_label = QLabel(self)
        self.status_label.setObjectName("testsStatus")
        self.orphans_label = QLabel(self)
        self.orphans_label.setObjectName("orphanSnapshotsLabel")
        self.orphans_label.setWordWrap(True)
        self.orphans_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.delete_orphans_button = QPushButton("Delete…", self)
        self.delete_orphans_button.setObjectName("deleteOrphanSnapshotsButton")
        self.delete_orphans_button.setToolTip("Delete the snapshot files that no test records")
        self.ask_delete_snapshots: Callable[[list[Path]], bool] = self._ask_delete_snapshots
        self._orphans: list[Path] = []
        self._orphans_key: object = None
        self.table = QTableView(self)
        self.table.setObjectName("testsTable")
        self.table.setAccessibleName("Resource tests")
        self.table.setAccessibleDescription("The project's resource tests: status, name, URI, time and message")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(MESSAGE_COLUMN, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(STATUS_COLUMN, QHeaderView.ResizeMode.ResizeToContents)
        # Names and URIs are what a reader scans: sized to their text (`_fit_columns`), the message takes the rest.
        header.resizeSection(NAME_COLUMN, 240)
        header.resizeSection(URI_COLUMN, 260)
        header.setSectionResizeMode(TIME_COLUMN, QHeaderView.ResizeMode.ResizeToContents)
        self.details = QPlainTextEdit(self)
        self.details.setObjectName("testDetails")
        self.details.setAccessibleName("Test details")
        self.details.setAccessibleDescription("What the selected test expected and what the read gave")
        self.details.setReadOnly(True)
        self.details.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)

        buttons = QHBoxLayout()
        for button in (self.run_all_button, self.run_selected_button, self.run_resource_button):
            buttons.addWidget(button)
        buttons.addWidget(self.era_combo)
        buttons.addWidget(self.run_on_save_check)
        buttons.addWidget(self.status_label, 1)
        orphans = QHBoxLayout()
        orphans.addWidget(self.orphans_label, 1)
        orphans.addWidget(self.delete_orphans_button)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.table)
        splitter.addWidget(self.details)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addLayout(orphans)
        layout.addWidget(splitter)

        self.run_all_button.clicked.connect(self._on_run_all_clicked)
        self.run_selected_button.clicked.connect(self._on_run_selected_clicked)
        self.run_resource_button.clicked.connect(self._on_run_resource_clicked)
        self.delete_orphans_button.clicked.connect(self._on_delete_orphans_clicked)
        self.table.doubleClicked.connect(self._on_row_double_clicked)
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        document.dirty_changed.connect(self._on_dirty_changed)
        for signal in (document.project_reset, document.resource_added, document.resource_removed,
                       document.resource_changed, document.errors_changed):
            signal.connect(self._on_document_changed)
        document.path_changed.connect(self._on_document_changed)
        self.refresh()

    # -- public API ----------------------------------------------------------

    @property
    def is_running(self) -> bool:
        return self._worker.is_running

    def refresh(self) -> None:
        """Re-read the tests and samples from the document (results of unchanged tests are kept)."""
        self.model.set_cases(collect_tests(self._document.project, self._document.project.tests))
        self._fit_columns()
        self._update_buttons()
        self._show_details()
        self._find_orphans()

    @property
    def orphan_snapshots(self) -> list[Path]:
        """Snapshot files of the project that no test records (found at the last refresh or run)."""
        return list(self._orphans)

    def delete_orphan_snapshots(self) -> bool:
        """Ask (`ask_delete_snapshots`), then delete the orphan snapshot files; False when nothing was deleted."""
        store = self._snapshot_store()
        paths = self.orphan_snapshots
        if store is None or not paths or not self.ask_delete_snapshots(paths):
            return False
        problems = store.delete(paths)
        self._find_orphans(force=True)
        if problems:
            self.orphans_label.setText(self.orphans_label.text() + "\nNot deleted: " + "; ".join(problems))
        return True

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
        self._worker.start(project, cases, snapshots=self._snapshot_store(), era=self.era)
        note = f" ({', '.join(skipped)} not served: fix the errors first)" if skipped else ""
        self.status_label.setText(f"Running {len(cases)} test(s)…{note}")
        self._update_buttons()
        self.run_started.emit()
        return True

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop a run and wait (bounded) for its thread: call before the application exits."""
        self._worker.cancel(wait=timeout)

    # -- internals -----------------------------------------------------------

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Name and URI wide enough for their longest text, each at most a third of the table, so none wraps
        at 1920 px while the message column keeps room at 1280 px."""
        # The view's own width: at resizeEvent the layout has not resized the table yet.
        cap = max(MIN_NAME_WIDTH, self.width() // 3)
        header = self.table.horizontalHeader()
        for column in (NAME_COLUMN, URI_COLUMN):
            wanted = max(self.table.sizeHintForColumn(column), header.sectionSizeHint(column))
            header.resizeSection(column, min(max(wanted, MIN_NAME_WIDTH), cap))

    def _servable_project(self) -> tuple[Project, list[str]]:
        # Work in progress stays in the document; the run holds back what would not serve (the same
        # checks), and the tests of those resources fail saying why rather than "no resource matches".
        return self._document.project.copy(), sorted(self._document.invalid_names())

    def _snapshot_store(self) -> SnapshotStore | None:
        path = self._document.path or self._document.origin
        return SnapshotStore(snapshot_dir_for(path)) if path is not None else None

    def _find_orphans(self, *, force: bool = False) -> None:
        """Look for orphan snapshot files when the snapshot tests or the folder changed (or `force`).

        Not on every edit: a refresh follows each keystroke, and this reads a folder.
        """
        store = self._snapshot_store()
        tests = self._document.project.tests
        key = (store.directory if store is not None else None,
               tuple(spec.name for spec in tests if spec.expect.wants_snapshot))  # fmt: skip
        if not force and key == self._orphans_key:
            return
        self._orphans_key = key
        self._orphans = store.orphans(tests) if store is not None else []
        names = [path.name for path in self._orphans]
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        if names and store is not None:
            count = f"{len(names)} snapshot file{'s' if len(names) != 1 else ''}"
            has = "has" if len(names) == 1 else "have"
            self.orphans_label.setText(f"{count} in {store.directory.name} {has} no test: {shown}")
            self.orphans_label.setToolTip("\n".join(str(path) for path in self._orphans))
        self.orphans_label.setVisible(bool(names))
        self.delete_orphans_button.setVisible(bool(names))

    def _ask_delete_snapshots(self, paths: list[Path]) -> bool:
        names = "\n".join(path.name for path in paths[:20]) + ("\n…" if len(paths) > 20 else "")
        answer = QMessageBox.question(
            self, "Delete snapshot files?",
            f"These {len(paths)} snapshot file(s) in {paths[0].parent} have no test:\n\n{names}\n\n"
            "Delete them? This cannot be undone.",
        )  # fmt: skip
        return answer == QMessageBox.StandardButton.Yes

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

    @Slot()
    def _on_delete_orphans_clicked(self) -> None:
        self.delete_orphan_snapshots()

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

    @Slot(bool)
    def _on_dirty_changed(self, dirty: bool) -> None:
        # Clean again with a file: it was saved (or its edits undone back to the saved text,
        # which is the same project to test).
        if not dirty and self.run_on_save_check.isChecked() and self._document.path is not None:
            self.refresh()
            self.run_all()

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
        self._find_orphans(force=True)  # the run may have recorded snapshots
        self.failing_resources_changed.emit(self.model.failing_resources())
        self.run_finished.emit(passed, failed)
