"""The icons of a resource as an editable table, with thumbnails for local files and data: URIs."""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QSize, Qt, Signal, Slot
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QStyle,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from resources_qt.errors import ValidationError
from resources_qt.resource import Icon
from studio.look.icon_loader import IconLoader, icon_loader, to_icon
from studio.look.icons import studio_icon

logger = logging.getLogger(__name__)

__all__ = ["IconsTable", "thumbnail"]

THUMB = 24
_SRC, _MIME, _SIZES = 1, 2, 3
_MAX_SHOWN_CHARS = 2000
_SRC_ROLE = Qt.ItemDataRole.UserRole + 1
"""Which kept source a shortened cell stands for (kept whole: nothing the user wrote is lost)."""
_PROBLEM_ROLE = Qt.ItemDataRole.UserRole + 2
_KEY_ROLE = Qt.ItemDataRole.UserRole + 3
_MIME_BY_SUFFIX = {
    ".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
    ".webp": "image/webp", ".ico": "image/x-icon",
}  # fmt: skip
"""The full source of a row whose cell shows it shortened (kept whole: nothing the user wrote is lost)."""


def thumbnail(src: str, base_dir: str = "", size: int = THUMB) -> QIcon | None:
    """The icon's thumbnail if it is already decoded; None otherwise (a load starts, `icon_loader().loaded` follows).

    Never decodes on the calling thread, so a huge icon cannot stall the window.
    """
    result = icon_loader().result(src, base_dir=base_dir, size=size)
    return to_icon(result.image) if result is not None else None


def _display_text(src: str) -> str:
    # A multi-megabyte data: URI in a cell would be elided (measured) on every paint.
    if len(src) <= _MAX_SHOWN_CHARS:
        return src
    return f"{src[:_MAX_SHOWN_CHARS]}… ({len(src):,} characters)"


class IconsTable(QWidget):
    """Rows of (thumbnail, source, MIME type, sizes); rows without a source are kept but not declared.

    Signals:
        icons_edited(): a cell, or the set of rows, changed.
    """

    icons_edited = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._base_dir = ""
        self._loading = False
        self._long_sources: dict[int, str] = {}
        self._serial = 0
        self.table = QTableWidget(0, 4, self)
        self.table.setObjectName("iconsTable")
        self.table.setAccessibleName("Icons")
        self.table.setAccessibleDescription("The resource's icons: source, MIME type and sizes, one per row")
        # Tab leaves the table for the next field; the arrows move between its cells.
        self.table.setTabKeyNavigation(False)
        self.table.setHorizontalHeaderLabels(["", "Source", "MIME type", "Sizes"])
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Fixed)
        header.resizeSection(0, THUMB + 8)
        header.setSectionResizeMode(_SRC, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(_MIME, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(_SIZES, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(_MIME, 80)
        header.resizeSection(_SIZES, 60)
        header.setMinimumSectionSize(24)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.setWordWrap(False)
        self.table.setMinimumWidth(200)
        self.table.setIconSize(QSize(THUMB, THUMB))
        self.table.verticalHeader().setDefaultSectionSize(THUMB + 6)
        self.table.setMinimumHeight(THUMB * 3 + 10)
        self.table.setMaximumHeight(THUMB * 4 + 8)
        self.table.setToolTip("Sizes are space-separated, e.g. '16x16 32x32' or 'any'")
        self.add_button = QPushButton("Add icon", self)
        self.add_button.setObjectName("addIconButton")
        self.choose_button = QPushButton("Choose file…", self)
        self.choose_button.setObjectName("chooseIconButton")
        self.choose_button.setToolTip("Add an icon from a file on this computer (shown wherever it is)")
        self.remove_button = QPushButton("Remove", self)
        self.remove_button.setObjectName("removeIconButton")
        self.remove_button.setIcon(studio_icon("delete", QStyle.StandardPixmap.SP_TrashIcon))
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.choose_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)
        layout.addLayout(buttons)
        self.add_button.clicked.connect(self._on_add_clicked)
        self.choose_button.clicked.connect(self._on_choose_clicked)
        self._loader: IconLoader = icon_loader()
        self._loader.loaded.connect(self._on_icon_loaded)
        self.remove_button.clicked.connect(self._on_remove_clicked)
        self.table.itemChanged.connect(self._on_item_changed)

    def set_base_dir(self, base_dir: str) -> None:
        """The project's folder: relative icon paths resolve there, and only files under it are shown."""
        self._base_dir = base_dir

    def thumbnail_problem(self, row: int) -> str:
        """Why row `row` has no thumbnail ("" when it has one or it is still loading)."""
        item = self.table.item(row, 0)
        return str(item.data(_PROBLEM_ROLE) or "") if item is not None else ""

    def set_icons(self, icons: list[Icon]) -> None:
        self._loading = True
        try:
            self.table.setRowCount(0)
            self._long_sources.clear()
            for icon in icons:
                self._append(icon.src, icon.mime_type or "", " ".join(icon.sizes))
        finally:
            self._loading = False

    def icons(self) -> list[Icon]:
        """The declared icons; raises `ValidationError` naming the row of an unusable entry."""
        result = []
        for row in range(self.table.rowCount()):
            src = self._text(row, _SRC)
            if not src:
                continue
            try:
                result.append(
                    Icon(src, self._text(row, _MIME) or None, tuple(self._text(row, _SIZES).split()))
                )
            except ValidationError as exc:
                raise ValidationError(f"Icon {row + 1}: {exc.message}") from exc
        return result

    def _text(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        if item is None:
            return ""
        serial = item.data(_SRC_ROLE) if column == _SRC else None
        whole = self._long_sources.get(serial) if isinstance(serial, int) else None
        return (whole if whole is not None else item.text()).strip()

    def _append(self, src: str, mime: str, sizes: str) -> int:
        row = self.table.rowCount()
        self.table.insertRow(row)
        thumb = QTableWidgetItem()
        thumb.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
        self.table.setItem(row, 0, thumb)
        shown = _display_text(src)
        for column, text in ((_SRC, shown), (_MIME, mime), (_SIZES, sizes)):
            self.table.setItem(row, column, QTableWidgetItem(text))
        source = self.table.item(row, _SRC)
        if shown != src and source is not None:
            # Kept on the Python side: copying megabytes into Qt strings on every look shows.
            self._serial += 1
            self._long_sources[self._serial] = src
            source.setData(_SRC_ROLE, self._serial)
            # Editing it in a cell would put megabytes into a line edit; it is kept whole and can be removed.
            source.setFlags(source.flags() & ~Qt.ItemFlag.ItemIsEditable)
            source.setToolTip(f"{len(src):,} characters: too long to edit here; kept as written")
        self._update_thumbnail(row)
        return row

    def _update_thumbnail(self, row: int) -> None:
        item = self.table.item(row, 0)
        if item is None:
            return
        src = self._text(row, _SRC)
        result = self._loader.result(src, base_dir=self._base_dir, size=THUMB) if src else None
        icon = to_icon(result.image) if result is not None else None
        item.setIcon(icon if icon is not None else QIcon())
        problem = result.problem if result is not None else ""
        item.setData(_PROBLEM_ROLE, problem)
        item.setData(_KEY_ROLE, self._loader.key(src, base_dir=self._base_dir, size=THUMB) if src else "")
        if result is None and src:
            item.setToolTip("Loading the preview…")
        elif problem:
            item.setText("⚠")
            item.setToolTip(f"Preview {problem}")
        else:
            item.setText("")
            item.setToolTip("" if icon is not None or not src else "No preview: remote icons are not fetched")

    @Slot(str)
    def _on_icon_loaded(self, key: str) -> None:
        for row in range(self.table.rowCount()):
            item = self.table.item(row, 0)
            if item is not None and item.data(_KEY_ROLE) == key:
                self._loading, was = True, self._loading
                try:
                    self._update_thumbnail(row)
                finally:
                    self._loading = was

    @Slot()
    def _on_add_clicked(self) -> None:
        row = self._append("", "image/png", "")
        self.table.setCurrentCell(row, _SRC)
        item = self.table.item(row, _SRC)
        if item is not None:
            self.table.editItem(item)

    @Slot()
    def _on_choose_clicked(self) -> None:
        patterns = " ".join("*" + suffix for suffix in _MIME_BY_SUFFIX)
        path, _filter = QFileDialog.getOpenFileName(
            self, "Choose an icon", self._base_dir, f"Images ({patterns});;All files (*)"
        )
        if path:
            self.add_chosen_file(path)

    def add_chosen_file(self, path: str) -> None:
        """Add an icon for a file the user chose: shown even outside the project folder."""
        self._loader.allow(path)
        mime = _MIME_BY_SUFFIX.get(Path(path).suffix.lower(), "image/png")
        self._append(path, mime, "")
        self.icons_edited.emit()

    @Slot()
    def _on_remove_clicked(self) -> None:
        rows = sorted({index.row() for index in self.table.selectedIndexes()}, reverse=True)
        if not rows and self.table.currentRow() >= 0:
            rows = [self.table.currentRow()]
        for row in rows:
            self.table.removeRow(row)
        if rows:
            self.icons_edited.emit()

    @Slot(QTableWidgetItem)
    def _on_item_changed(self, item: QTableWidgetItem) -> None:
        if self._loading or item.column() == 0:
            return
        if item.column() == _SRC:
            self._loading = True
            try:
                self._update_thumbnail(item.row())
            finally:
                self._loading = False
        self.icons_edited.emit()
