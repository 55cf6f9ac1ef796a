"""CSV and TSV as a table over a read-only model, with the source a toggle away."""

from __future__ import annotations

import csv
import io

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QTableView, QWidget

from resources_qt.content import ResourceContent
from studio.preview.renderers.base import (
    DISPLAY_LIMIT,
    PageActions,
    Prepared,
    Renderer,
    base_mime,
    content_size,
    content_text,
    mime_of,
)
from studio.preview.renderers.text import text_prepared

__all__ = ["CSV_ROW_LIMIT", "CsvRenderer"]

CSV_ROW_LIMIT = 100_000


class _CsvModel(QAbstractTableModel):
    """A read-only table over parsed rows; the first row is the header."""

    def __init__(self, rows: list[list[str]], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._header = rows[0] if rows else []
        self._rows = rows[1:]
        self._columns = max((len(row) for row in rows), default=0)

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self._columns

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole) and index.isValid():
            row = self._rows[index.row()]
            return row[index.column()] if index.column() < len(row) else ""
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return self._header[section] if section < len(self._header) else f"column {section + 1}"
        return str(section + 1)


class CsvRenderer(Renderer):
    kind = "csv"
    mime_types = ("text/csv", "text/tab-separated-values")

    def prepare(self, content: ResourceContent) -> Prepared | None:
        text = content_text(content)
        if text is None:
            return None
        mime = mime_of(content)
        delimiter = "\t" if base_mime(mime) == "text/tab-separated-values" else ","
        reader = csv.reader(io.StringIO(text[: DISPLAY_LIMIT * 8]), delimiter=delimiter)
        rows: list[list[str]] = []
        notes = []
        try:
            for row in reader:
                if len(rows) >= CSV_ROW_LIMIT:
                    notes.append(f"Showing the first {CSV_ROW_LIMIT:,} rows.")
                    break
                rows.append(row)
        except csv.Error as exc:
            notes.append(f"CSV stopped parsing at row {len(rows) + 1}: {exc}")
        prepared = text_prepared(text, mime, content_size(content), kind=self.kind)
        prepared.payload = rows
        prepared.notes = notes + prepared.notes
        return prepared

    def create_page(self, parent: QWidget, actions: PageActions) -> QWidget | None:
        table = QTableView(parent)
        table.setObjectName("contentTable")
        table.setAlternatingRowColors(True)
        table.horizontalHeader().setStretchLastSection(True)
        table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 6)
        return table

    def show(self, page: QWidget, prepared: Prepared) -> bool:
        assert isinstance(page, QTableView) and isinstance(prepared.payload, list)
        old = page.model()
        page.setModel(_CsvModel(prepared.payload, page))
        if old is not None:
            old.deleteLater()
        return True
