"""The studio's SVG icons, loaded from the `resource_studio_icons` data package."""

from __future__ import annotations

import functools
import logging
from importlib import resources
from pathlib import Path

from PySide6.QtCore import QByteArray, QRect, QSize, Qt
from PySide6.QtGui import QIcon, QIconEngine, QImage, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer

logger = logging.getLogger(__name__)

__all__ = ["ICON_NAMES", "icon", "icon_path", "pixmap"]

ICON_NAMES = (
    "app", "new", "open", "save", "save-as", "undo", "redo", "add-resource", "add-template", "duplicate",
    "delete", "preview", "start-server", "stop-server", "notify-list-changed", "notify-updated", "copy",
    "export", "error", "resource", "template", "filter", "pause", "clear", "settings", "tests",
)  # fmt: skip

# A checkout that is not pip-installed still finds the icons beside the packages.
_SOURCE_DIR = Path(__file__).resolve().parent.parent / "icons"


@functools.cache
def _icon_dir() -> Path:
    try:
        folder = Path(str(resources.files("resource_studio_icons")))
        if (folder / "app.svg").is_file():
            return folder
    except (ModuleNotFoundError, TypeError):
        pass
    return _SOURCE_DIR


def icon_path(name: str) -> Path:
    """The SVG file of icon `name` (one of `ICON_NAMES`)."""
    if name not in ICON_NAMES:
        raise ValueError(f"unknown icon {name!r}; known icons: {', '.join(ICON_NAMES)}")
    return _icon_dir() / f"{name}.svg"


@functools.cache
def _svg_data(name: str) -> bytes:
    try:
        return icon_path(name).read_bytes()
    except OSError as exc:
        logger.warning("icon %s is missing: %s", name, exc)
        return b""


def pixmap(name: str, size: int, *, device_pixel_ratio: float = 1.0) -> QPixmap:
    """Icon `name` rendered at `size` logical pixels, sharp on high-DPI screens."""
    physical = max(1, round(size * device_pixel_ratio))
    image = QImage(physical, physical, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    renderer = QSvgRenderer(QByteArray(_svg_data(name)))
    if renderer.isValid():
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
    result = QPixmap.fromImage(image)
    result.setDevicePixelRatio(device_pixel_ratio)
    return result


class _SvgIconEngine(QIconEngine):
    """Renders the SVG at whatever size a view asks for; disabled icons are drawn faded."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self._name = name

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        renderer = QSvgRenderer(QByteArray(_svg_data(self._name)))
        if not renderer.isValid():
            return
        painter.save()
        if mode == QIcon.Mode.Disabled:
            painter.setOpacity(0.35)
        renderer.render(painter, rect)
        painter.restore()

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.paint(painter, image.rect(), mode, state)
        painter.end()
        return QPixmap.fromImage(image)

    def clone(self) -> QIconEngine:
        return _SvgIconEngine(self._name)


@functools.cache
def icon(name: str) -> QIcon:
    """Icon `name` as a scalable `QIcon` (cached; create a QGuiApplication first)."""
    icon_path(name)  # reject unknown names early, with the list of known ones
    return QIcon(_SvgIconEngine(name))
