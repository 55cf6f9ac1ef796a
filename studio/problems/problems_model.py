"""The Problems panel's table model: one row per lint finding, most severe first, with its rule and resource."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QGuiApplication, QIcon
from PySide6.QtWidgets import QApplication, QStyle

from resources_qt.lint.findings import LEVELS, Finding, Level
from studio.look.marks import mark_colors

__all__ = [
    "FINDING_ROLE",
    "LEVEL_COLUMN",
    "MESSAGE_COLUMN",
    "RESOURCE_COLUMN",
    "RULE_COLUMN",
    "ProblemsModel",
    "worst_levels",
]

LEVEL_COLUMN, RULE_COLUMN, RESOURCE_COLUMN, MESSAGE_COLUMN = range(4)
_HEADERS = ("Level", "Rule", "Resource", "Message")
FINDING_ROLE = int(Qt.ItemDataRole.UserRole) + 1
"""The row's `Finding` (for views and tests)."""
_ICONS = {
    "error": QStyle.StandardPixmap.SP_MessageBoxCritical,
    "warning": QStyle.StandardPixmap.SP_MessageBoxWarning,
    "note": QStyle.StandardPixmap.SP_MessageBoxInformation,
}


def worst_levels(findings: Sequence[Finding]) -> dict[str, Level]:
    """Each resource's most severe finding level (resources without findings are absent)."""
    worst: dict[str, Level] = {}
    for finding in findings:
        if finding.resource is None:
            continue
        seen = worst.get(finding.resource)
        if seen is None or LEVELS.index(finding.level) < LEVELS.index(seen):
            worst[finding.resource] = finding.level
    return worst


class ProblemsModel(QAbstractTableModel):
    """The findings of the last lint of the open project."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[Finding] = []
        self._icons: dict[str, QIcon] = {}

    def set_findings(self, findings: Sequence[Finding]) -> None:
        self.beginResetModel()
        self._rows = list(findings)
        self.endResetModel()

    def findings(self) -> list[Finding]:
        return list(self._rows)

    def finding(self, row: int) -> Finding:
        return self._rows[row]

    def drop_rows(self, rows: Sequence[int]) -> None:
        """Remove these rows (a quick fix settled them; the next lint confirms)."""
        for row in sorted(set(rows), reverse=True):
            if 0 <= row < len(self._rows):
                self.beginRemoveRows(QModelIndex(), row, row)
                del self._rows[row]
                self.endRemoveRows()

    def counts(self) -> dict[Level, int]:
        tally: dict[Level, int] = dict.fromkeys(LEVELS, 0)
        for finding in self._rows:
            tally[finding.level] += 1
        return tally

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
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        finding = self._rows[index.row()]
        column = index.column()
        if role == FINDING_ROLE:
            return finding
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(finding, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = finding.message
            if finding.uri:
                tip += f"\n\nURI: {finding.uri}"
            if finding.fix is not None:
                tip += f"\nQuick fix: {finding.fix.label}"
            return tip
        if role == Qt.ItemDataRole.DecorationRole and column == LEVEL_COLUMN:
            return self._icon(finding.level)
        if role == Qt.ItemDataRole.ForegroundRole and column in (LEVEL_COLUMN, MESSAGE_COLUMN):
            colors = mark_colors(QGuiApplication.palette())
            if finding.level == "error":
                return QBrush(colors.error)
            if finding.level == "note":
                return QBrush(colors.muted)
        return None

    @staticmethod
    def _display(finding: Finding, column: int) -> str:
        if column == LEVEL_COLUMN:
            return finding.level
        if column == RULE_COLUMN:
            return finding.rule
        if column == RESOURCE_COLUMN:
            return finding.resource or ""
        return finding.message

    def _icon(self, level: str) -> QIcon:
        if level not in self._icons:
            self._icons[level] = QApplication.style().standardIcon(_ICONS[level])
        return self._icons[level]
