"""Item model of a remote server's catalogue: its resources, then its templates, with what each declares."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from resources_qt.client import CatalogueListed, RemoteResource

__all__ = ["ENTRY_ROLE", "HEADERS", "RemoteCatalogueModel"]

ENTRY_ROLE = Qt.ItemDataRole.UserRole + 1
"""The row's `RemoteResource`."""
HEADERS = ("Name", "Title", "Address", "MIME type", "Size", "Annotations")
_Index = QModelIndex | QPersistentModelIndex


def _annotations_text(entry: RemoteResource) -> str:
    return ", ".join(f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in entry.annotations.items())


class RemoteCatalogueModel(QAbstractTableModel):
    """Rows: the listing's resources in server order, then its templates. No signals of its own."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._entries: list[RemoteResource] = []

    def set_listing(self, listing: CatalogueListed | None) -> None:
        self.beginResetModel()
        self._entries = [*listing.resources, *listing.templates] if listing is not None else []
        self.endResetModel()

    def entries(self) -> list[RemoteResource]:
        return list(self._entries)

    def entry(self, row: int) -> RemoteResource:
        return self._entries[row]

    def row_of(self, key: str) -> int:
        """The row of the resource or template at `key` (its URI or URI template), or -1."""
        return next((row for row, entry in enumerate(self._entries) if entry.key == key), -1)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._entries)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and section < len(HEADERS):
            return HEADERS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._entries):
            return None
        entry = self._entries[index.row()]
        if role == ENTRY_ROLE:
            return entry
        if role == Qt.ItemDataRole.ToolTipRole:
            return entry.description or entry.key
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        column = index.column()
        if column == 0:
            return entry.name
        if column == 1:
            return entry.title
        if column == 2:
            return entry.key
        if column == 3:
            return entry.mime_type
        if column == 4:
            return "" if entry.size is None else str(entry.size)
        return _annotations_text(entry)
