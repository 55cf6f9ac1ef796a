"""Colour arithmetic for every view: WCAG 2.x luminance and contrast, blending, and pulling a colour to a contrast."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette

__all__ = ["MIN_CONTRAST", "blend", "contrast_ratio", "ensure_contrast", "is_dark", "relative_luminance"]

MIN_CONTRAST = 4.5
"""WCAG AA for body text (1.4.3)."""


def _channel(value: int) -> float:
    scaled = value / 255.0
    return scaled / 12.92 if scaled <= 0.04045 else ((scaled + 0.055) / 1.055) ** 2.4


def relative_luminance(color: QColor) -> float:
    """WCAG relative luminance of an opaque colour, 0 (black) to 1 (white)."""
    return 0.2126 * _channel(color.red()) + 0.7152 * _channel(color.green()) + 0.0722 * _channel(color.blue())


def contrast_ratio(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio of two opaque colours, 1 to 21."""
    light, dark = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def blend(a: QColor, b: QColor, *, amount: float) -> QColor:
    """`a` moved `amount` (clamped to 0..1) of the way to `b`, opaque."""
    t = min(max(amount, 0.0), 1.0)
    return QColor(
        round(a.red() + (b.red() - a.red()) * t),
        round(a.green() + (b.green() - a.green()) * t),
        round(a.blue() + (b.blue() - a.blue()) * t),
    )


def ensure_contrast(
    color: QColor, backgrounds: tuple[QColor, ...], *, toward: QColor, ratio: float, steps: int = 20
) -> QColor:
    """`color` blended toward `toward`, in `steps` even steps, just far enough to reach `ratio` against every
    background; `toward` itself when no step does."""
    for step in range(steps + 1):
        candidate = blend(color, toward, amount=step / steps)
        if all(contrast_ratio(candidate, background) >= ratio for background in backgrounds):
            return candidate
    return QColor(toward)


def is_dark(palette: QPalette) -> bool:
    """A palette is dark when its text background is darker than its text."""
    base = palette.color(QPalette.ColorRole.Base)
    text = palette.color(QPalette.ColorRole.Text)
    return relative_luminance(base) < relative_luminance(text)
