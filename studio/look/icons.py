"""The studio's SVG icons, loaded from the `resource_studio_icons` data package, their line art in the theme's ink."""

from __future__ import annotations

import functools
import logging
from importlib import resources
from pathlib import Path

from PySide6.QtCore import QByteArray, QRect, QSize, Qt
from PySide6.QtGui import QGuiApplication, QIcon, QIconEngine, QImage, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication, QStyle

from studio.look.theme import icon_ink

logger = logging.getLogger(__name__)

__all__ = ["ICON_NAMES", "icon", "icon_path", "pixmap", "studio_icon"]

ICON_NAMES = (
    "app", "new", "open", "save", "save-as", "undo", "redo", "add-resource", "add-template", "duplicate",
    "delete", "preview", "start-server", "stop-server", "notify-list-changed", "notify-updated", "copy",
    "export", "error", "resource", "template", "filter", "pause", "clear", "settings", "tests",
)  # fmt: skip

_INK = b"currentColor"
"""What the SVG files draw their line art in (SVG's own placeholder); rendering puts the theme's ink in its
place, so the icons stay legible on a dark toolbar (`studio.look.theme.icon_ink`)."""

# A checkout that is not pip-installed still finds the icons beside the packages.
_SOURCE_DIR = Path(__file__).resolve().parents[2] / "icons"


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


@functools.lru_cache(maxsize=128)
def _inked(name: str, ink: str) -> bytes:
    return _svg_data(name).replace(_INK, ink.encode("ascii"))


def _renderer(name: str, *, selected: bool = False) -> QSvgRenderer:
    """The icon's renderer with its line art in the application palette's ink (read at each paint, so a
    theme switch shows at the next repaint)."""
    return QSvgRenderer(QByteArray(_inked(name, icon_ink(QGuiApplication.palette(), selected=selected).name())))


def pixmap(name: str, size: int, *, device_pixel_ratio: float = 1.0) -> QPixmap:
    """Icon `name` rendered at `size` logical pixels, sharp on high-DPI screens."""
    physical = max(1, round(size * device_pixel_ratio))
    image = QImage(physical, physical, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    renderer = _renderer(name)
    if renderer.isValid():
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
    result = QPixmap.fromImage(image)
    result.setDevicePixelRatio(device_pixel_ratio)
    return result


class _SvgIconEngine(QIconEngine):
    """Renders the SVG at whatever size a view asks for, in the theme's ink; disabled icons are drawn faded."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self._name = name

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        renderer = _renderer(self._name, selected=mode == QIcon.Mode.Selected)
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


def studio_icon(name: str, fallback: QStyle.StandardPixmap) -> QIcon:
    """Icon `name` from the studio's SVG set, or a standard style icon when it is not available."""
    try:
        return icon(name)
    except ValueError as exc:
        logger.debug("icon %s unavailable (%s); using the style's", name, exc)
        return QApplication.style().standardIcon(fallback)
