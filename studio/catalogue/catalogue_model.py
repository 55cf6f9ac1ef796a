"""Item model of one catalogue list (direct resources or templates) over the project document."""

from __future__ import annotations

import logging
import time
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt, Slot
from PySide6.QtGui import QBrush, QGuiApplication, QIcon, QPalette
from PySide6.QtWidgets import QApplication, QStyle

from resources_qt.project import ResourceSpec
from studio.document.document import ProjectDocument
from studio.look.icon_loader import icon_loader, to_icon
from studio.look.icons import studio_icon
from studio.look.marks import mark_colors

logger = logging.getLogger(__name__)

__all__ = [
    "ERRORS_ROLE", "FILTER_ROLE", "LAST_CHANGE_ROLE", "LINT_WARNING_TEXT", "NAME_ROLE", "TESTS_FAILING_ROLE",
    "WATCH_ROLE", "CatalogueModel", "watch_text",
]

NAME_ROLE = Qt.ItemDataRole.UserRole + 1
ERRORS_ROLE = Qt.ItemDataRole.UserRole + 2
FILTER_ROLE = Qt.ItemDataRole.UserRole + 3
"""Text the filter box matches: name, title, address and MIME type."""
WATCH_ROLE = Qt.ItemDataRole.UserRole + 4
"""How the resource's data is watched: "files", "interval", "both" or "" (the "watching" mark)."""
LAST_CHANGE_ROLE = Qt.ItemDataRole.UserRole + 5
"""When watched data last changed (seconds since the epoch), or None."""
TESTS_FAILING_ROLE = Qt.ItemDataRole.UserRole + 6
"""True when the resource had a failing test in the last run of the Tests page (`set_failing_tests`)."""
TESTS_FAILING_TEXT = "A test of this resource failed in the last run (see the Tests page)"
LINT_WARNING_TEXT = "The lint finds problems in this resource (View > Problems)"

NAME_COLUMN, MIME_COLUMN = 0, 1
_ICON_SIZE = 16

_Index = QModelIndex | QPersistentModelIndex


class CatalogueModel(QAbstractTableModel):
    """Rows are the document's resources of one kind, in project order; columns are name and MIME type.

    Rows hold only names; everything else is read from the document when a
    view asks, and errors are computed (and cached by the document) only for
    rows that are painted, so 10,000 entries cost little.

    Live data: a watched resource carries a "watching" mark (`WATCH_ROLE`,
    the tooltip); the window feeds `note_data_changed` (last change time,
    `LAST_CHANGE_ROLE`) and `note_instances_failed` / `note_instances_listed`
    (a failing `instances` snippet shows as an error of its template).
    No signals of its own (the model's `dataChanged` marks what changed).
    """

    def __init__(self, document: ProjectDocument, *, templates: bool, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._document = document
        self._templates = templates
        self._names: list[str] = []
        self._icon_cache: dict[str, QIcon | None] = {}
        self._waiting: dict[str, set[str]] = {}  # loader key -> names of rows that wait for it
        self._loader = icon_loader()
        self._loader.loaded.connect(self._on_icon_loaded)
        self._kind_icon = (
            studio_icon("template", QStyle.StandardPixmap.SP_FileDialogDetailedView)
            if templates
            else studio_icon("resource", QStyle.StandardPixmap.SP_FileIcon)
        )
        self._error_icon = studio_icon("error", QStyle.StandardPixmap.SP_MessageBoxCritical)
        self._failing_icon = QApplication.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
        self._failing_tests: set[str] = set()
        self._lint_warnings: set[str] = set()
        self._last_change: dict[str, float] = {}
        document.project_reset.connect(self._on_project_reset)
        document.resource_added.connect(self._on_resource_added)
        document.resource_removed.connect(self._on_resource_removed)
        document.resource_changed.connect(self._on_resource_changed)
        document.errors_changed.connect(self._on_errors_changed)
        document.instances_failure_changed.connect(self._refresh_name)
        self._on_project_reset()

    @property
    def templates(self) -> bool:
        return self._templates

    def names(self) -> list[str]:
        return list(self._names)

    def row_of(self, name: str) -> int:
        try:
            return self._names.index(name)
        except ValueError:
            return -1

    # -- Qt model API --------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt signature
        return 0 if parent.isValid() else len(self._names)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt signature
        return 0 if parent.isValid() else 2

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return ("Template" if self._templates else "Resource", "MIME type")[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._names):
            return None
        name = self._names[index.row()]
        spec = self._document.peek(name)
        if spec is None:
            return None
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return name if column == NAME_COLUMN else spec.mime_type
        if role == NAME_ROLE:
            return name
        if role == FILTER_ROLE:
            return f"{name}\n{spec.title}\n{spec.key}\n{spec.mime_type}"
        if role == ERRORS_ROLE:
            return self._errors(name)
        if role == WATCH_ROLE:
            return _watch_kind(spec)
        if role == LAST_CHANGE_ROLE:
            return self._last_change.get(name)
        if role == TESTS_FAILING_ROLE:
            return name in self._failing_tests
        warnings = self._warnings(name)
        if role == Qt.ItemDataRole.ToolTipRole:
            errors = self._errors(name)
            failing = warnings
            if errors:
                return "\n".join(errors + failing)
            lines = [spec.title or name, spec.key, *failing]
            watching = watch_text(spec)
            if watching:
                lines.append(watching)
            if name in self._last_change:
                lines.append("Last change: " + time.strftime("%H:%M:%S", time.localtime(self._last_change[name])))
            return "\n".join(lines)
        if column == NAME_COLUMN and role == Qt.ItemDataRole.DecorationRole:
            if self._errors(name):
                return self._error_icon
            if warnings:
                return self._failing_icon
            return self._resource_icon(spec.icons[0].src if spec.icons else "", name) or self._kind_icon
        if role == Qt.ItemDataRole.AccessibleDescriptionRole and column == NAME_COLUMN:
            return "; ".join(warnings) or None
        if role == Qt.ItemDataRole.ForegroundRole:
            # From the application palette (it follows the theme), never a fixed colour.
            if column == NAME_COLUMN and self._errors(name):
                return QBrush(mark_colors(QGuiApplication.palette()).error)
            if column == NAME_COLUMN and warnings:
                return QBrush(mark_colors(QGuiApplication.palette()).warning)
            if column == MIME_COLUMN:
                return QBrush(QGuiApplication.palette().color(QPalette.ColorRole.PlaceholderText))
        return None

    def _warnings(self, name: str) -> list[str]:
        """Why the resource is marked with a warning: a failing test, lint findings (View > Problems)."""
        return ([TESTS_FAILING_TEXT] if name in self._failing_tests else []) + (
            [LINT_WARNING_TEXT] if name in self._lint_warnings else []
        )

    def _errors(self, name: str) -> list[str]:
        errors = list(self._document.errors(name))
        failure = self._document.instances_failure(name)
        if failure is not None:
            errors.append(f"instances: {failure.message}")
        return errors

    # -- test results (fed by the window after each run of the Tests page) ----

    def set_failing_tests(self, names: list[str]) -> None:
        """Mark the resources with a failing test (the Tests page's `failing_resources`); unmark the rest."""
        new = set(names)
        changed, self._failing_tests = new ^ self._failing_tests, new
        for name in changed:
            self._refresh_name(name)

    def set_lint_warnings(self, names: list[str]) -> None:
        """Mark the resources the lint finds warnings or errors in (the Problems panel); unmark the rest."""
        new = set(names)
        changed, self._lint_warnings = new ^ self._lint_warnings, new
        for name in changed:
            self._refresh_name(name)

    # -- live data (fed by the window from the controller's signals) ----------

    @Slot(str, float, list, list)
    def note_data_changed(
        self, name: str, when: float, uris: list[str] | None = None, paths: list[str] | None = None
    ) -> None:
        """The resource's watched data changed at `when`."""
        self._last_change[name] = when
        self._refresh_name(name)

    @Slot(str, str)
    def note_instances_failed(self, name: str, message: str) -> None:
        """The template's `instances` snippet failed: shown as one of its errors until it answers again.

        Kept by the document (`instances_failure`), so the editor's Instances tab shows it too.
        """
        failure = self._document.instances_failure(name)
        if failure is None or failure.message != message:
            self._document.note_instances_failed(name, message)

    @Slot(str, int)
    def note_instances_listed(self, name: str, count: int) -> None:
        self._document.note_instances_listed(name)

    @Slot(str)
    def _refresh_name(self, name: str) -> None:
        row = self.row_of(name)
        if row >= 0:
            self._refresh_row(row)

    def _resource_icon(self, src: str, name: str) -> QIcon | None:
        if not src:
            return None
        if src in self._icon_cache:
            return self._icon_cache[src]
        path = self._document.path
        base_dir = str(path.parent) if path else ""
        # Decoded off the GUI thread: until it is ready the row shows the kind icon, then repaints.
        result = self._loader.result(src, base_dir=base_dir, size=_ICON_SIZE)
        if result is None:
            self._waiting.setdefault(self._loader.key(src, base_dir=base_dir, size=_ICON_SIZE), set()).add(name)
            return None
        self._icon_cache[src] = to_icon(result.image)
        return self._icon_cache[src]

    @Slot(str)
    def _on_icon_loaded(self, key: str) -> None:
        for name in self._waiting.pop(key, set()):
            row = self.row_of(name)
            if row >= 0:
                self._refresh_row(row)

    # -- document signals ----------------------------------------------------

    def _kind_matches(self, name: str) -> bool:
        spec = self._document.peek(name)
        return spec is not None and spec.is_template == self._templates

    def _insert_position(self, name: str) -> int:
        """Where `name` goes so rows keep project order."""
        order = {n: i for i, n in enumerate(self._document.names())}
        target = order.get(name, len(order))
        for row, existing in enumerate(self._names):
            if order.get(existing, -1) > target:
                return row
        return len(self._names)

    def _insert(self, name: str) -> None:
        row = self._insert_position(name)
        self.beginInsertRows(QModelIndex(), row, row)
        self._names.insert(row, name)
        self.endInsertRows()

    def _remove_row(self, row: int) -> None:
        self.beginRemoveRows(QModelIndex(), row, row)
        del self._names[row]
        self.endRemoveRows()

    def _refresh_row(self, row: int) -> None:
        self.dataChanged.emit(self.index(row, 0), self.index(row, 1))

    @Slot()
    def _on_project_reset(self) -> None:
        self.beginResetModel()
        self._failing_tests.clear()
        self._icon_cache.clear()
        self._waiting.clear()
        self._names = [
            spec.name for spec in self._document.project.resources if spec.is_template == self._templates
        ]
        self.endResetModel()

    @Slot(str)
    def _on_resource_added(self, name: str) -> None:
        if self._kind_matches(name):
            self._insert(name)

    @Slot(str)
    def _on_resource_removed(self, name: str) -> None:
        self._failing_tests.discard(name)
        row = self.row_of(name)
        if row >= 0:
            self._remove_row(row)

    @Slot(str, str)
    def _on_resource_changed(self, old_name: str, new_name: str) -> None:
        if old_name != new_name and old_name in self._failing_tests:
            self._failing_tests.discard(old_name)
            self._failing_tests.add(new_name)
        row = self.row_of(old_name)
        mine = self._kind_matches(new_name)
        if row >= 0 and not mine:
            self._remove_row(row)
        elif row < 0 and mine:
            self._insert(new_name)
        elif row >= 0:
            self._names[row] = new_name
            self._icon_cache.clear()
            self._refresh_row(row)

    @Slot(list)
    def _on_errors_changed(self, names: list[str]) -> None:
        for name in names:
            row = self.row_of(name)
            if row >= 0:
                self._refresh_row(row)


def _watch_kind(spec: ResourceSpec) -> str:
    watch = spec.watch
    if watch is None or watch.is_empty:
        return ""
    if watch.files and watch.interval is not None:
        return "both"
    return "files" if watch.files else "interval"


def watch_text(spec: ResourceSpec) -> str:
    """The "watching" mark in words: which files, how often ("" when not watched)."""
    watch = spec.watch
    if watch is None or watch.is_empty:
        return ""
    parts = []
    if watch.files:
        parts.append("files " + ", ".join(watch.files))
    if watch.interval is not None:
        parts.append(f"every {watch.interval:g} s")
    return "Watching: " + "; ".join(parts)
