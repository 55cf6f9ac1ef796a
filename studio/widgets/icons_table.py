"""The icons of a resource as an editable table, with thumbnails for local files and data: URIs."""

from __future__ import annotations

import base64
import binascii
import functools
import logging
import urllib.parse
from pathlib import Path

from PySide6.QtCore import QByteArray, QSize, Qt, Signal, Slot
from PySide6.QtGui import QIcon, QImage, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import (
    QAbstractItemView,
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
from studio.widgets import studio_icon

logger = logging.getLogger(__name__)

__all__ = ["IconsTable", "load_icon_image", "thumbnail"]

THUMB = 24
_MAX_ICON_BYTES = 2 * 1024 * 1024
_SRC, _MIME, _SIZES = 1, 2, 3


def _read_source(src: str, base_dir: str) -> bytes | None:
    """The bytes of an icon that lives on this machine (a file or a data: URI); None for remote icons."""
    src = src.strip()
    if src.startswith("data:"):
        header, _, payload = src.partition(",")
        try:
            if header.endswith(";base64"):
                return base64.b64decode(payload, validate=False)
            return urllib.parse.unquote_to_bytes(payload)
        except (binascii.Error, ValueError):
            return None
    if src.startswith("file:"):
        path = Path(urllib.parse.unquote(urllib.parse.urlparse(src).path))
    elif "://" in src:
        return None
    else:
        path = Path(src)
        if not path.is_absolute() and base_dir:
            path = Path(base_dir) / path
    try:
        if path.is_file() and path.stat().st_size <= _MAX_ICON_BYTES:
            return path.read_bytes()
    except OSError:
        pass
    return None


@functools.lru_cache(maxsize=512)
def load_icon_image(src: str, base_dir: str = "") -> QImage | None:
    """The icon's image when it is a readable local file or data: URI (SVG included), else None."""
    data = _read_source(src, base_dir)
    if not data:
        return None
    image = QImage.fromData(data)
    if image.isNull() and b"<svg" in data[:2048]:
        renderer = QSvgRenderer(QByteArray(data))
        if renderer.isValid():
            size = renderer.defaultSize()
            if size.isEmpty():
                size = QSize(64, 64)
            image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
            image.fill(Qt.GlobalColor.transparent)
            painter = QPainter(image)
            renderer.render(painter)
            painter.end()
    return None if image.isNull() else image


def thumbnail(src: str, base_dir: str = "", size: int = THUMB) -> QIcon | None:
    image = load_icon_image(src, base_dir)
    if image is None:
        return None
    scaled = image.scaled(
        size, size, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
    )
    return QIcon(QPixmap.fromImage(scaled))


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
        self.table = QTableWidget(0, 4, self)
        self.table.setObjectName("iconsTable")
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
        self.remove_button = QPushButton("Remove", self)
        self.remove_button.setObjectName("removeIconButton")
        self.remove_button.setIcon(studio_icon("delete", QStyle.StandardPixmap.SP_TrashIcon))
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)
        layout.addLayout(buttons)
        self.add_button.clicked.connect(self._on_add_clicked)
        self.remove_button.clicked.connect(self._on_remove_clicked)
        self.table.itemChanged.connect(self._on_item_changed)

    def set_base_dir(self, base_dir: str) -> None:
        """Where relative icon paths are resolved (the project's folder)."""
        self._base_dir = base_dir

    def set_icons(self, icons: list[Icon]) -> None:
        self._loading = True
        try:
            self.table.setRowCount(0)
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
        return item.text().strip() if item is not None else ""

    def _append(self, src: str, mime: str, sizes: str) -> int:
        row = self.table.rowCount()
        self.table.insertRow(row)
        thumb = QTableWidgetItem()
        thumb.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
        self.table.setItem(row, 0, thumb)
        for column, text in ((_SRC, src), (_MIME, mime), (_SIZES, sizes)):
            self.table.setItem(row, column, QTableWidgetItem(text))
        self._update_thumbnail(row)
        return row

    def _update_thumbnail(self, row: int) -> None:
        item = self.table.item(row, 0)
        if item is None:
            return
        src = self._text(row, _SRC)
        icon = thumbnail(src, self._base_dir) if src else None
        item.setIcon(icon if icon is not None else QIcon())
        item.setToolTip(
            "" if icon is not None or not src else "No preview: the icon is not a local file or data: URI"
        )

    @Slot()
    def _on_add_clicked(self) -> None:
        row = self._append("", "image/png", "")
        self.table.setCurrentCell(row, _SRC)
        self.table.editItem(self.table.item(row, _SRC))

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
