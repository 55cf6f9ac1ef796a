"""WCAG contrast measured on rendered widgets: luminance, contrast ratio, and text-vs-background of an image area."""

from __future__ import annotations

from collections import Counter

from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import QWidget

from studio.look.colours import contrast_ratio, relative_luminance

__all__ = ["contrast", "dark_palette", "grab", "luminance", "text_contrast"]


def luminance(color: QColor) -> float:
    """WCAG 2.x relative luminance (the studio's own: `test_colours` pins it to published values)."""
    return relative_luminance(color)


def contrast(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio (1..21)."""
    return contrast_ratio(a, b)


def grab(widget: QWidget) -> QImage:
    """The widget as rendered now, in a format whose pixels read back exactly."""
    return widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)


def text_contrast(image: QImage, area: QRect) -> tuple[float, QColor, QColor]:
    """(ratio, text colour, background) of the text drawn in `area`.

    The background is the area's most common colour; the text colour is the
    pixel that differs from it most (a glyph's core, past the anti-aliasing).
    Raises ValueError when the area holds no second colour (no text drawn).
    """
    area = area.intersected(image.rect())
    counts: Counter[int] = Counter(
        image.pixel(x, y) for y in range(area.top(), area.bottom() + 1) for x in range(area.left(), area.right() + 1)
    )
    if len(counts) < 2:
        raise ValueError("no text in the area: a single colour")
    background = QColor.fromRgb(counts.most_common(1)[0][0])
    text = max((QColor.fromRgb(rgb) for rgb in counts), key=lambda c: contrast(c, background))
    return contrast(text, background), text, background


def dark_palette() -> QPalette:
    """A typical dark desktop palette (the kind the issue's trial ran under), independent of the studio's theme."""
    palette = QPalette()
    roles = {
        QPalette.ColorRole.Window: "#2b2b2b",
        QPalette.ColorRole.WindowText: "#e6e6e6",
        QPalette.ColorRole.Base: "#1e1e1e",
        QPalette.ColorRole.AlternateBase: "#262626",
        QPalette.ColorRole.Text: "#e6e6e6",
        QPalette.ColorRole.Button: "#333333",
        QPalette.ColorRole.ButtonText: "#e6e6e6",
        QPalette.ColorRole.Highlight: "#3d6fb4",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.PlaceholderText: "#8c8c8c",
        QPalette.ColorRole.ToolTipBase: "#333333",
        QPalette.ColorRole.ToolTipText: "#e6e6e6",
    }
    for role, value in roles.items():
        palette.setColor(role, QColor(value))
    return palette
