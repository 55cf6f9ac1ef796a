"""Error and warning marks for form fields and banners, coloured from the widget's palette (light or dark)."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor, QPalette

from studio.look.colours import MIN_CONTRAST, blend, contrast_ratio, relative_luminance

__all__ = ["MarkColors", "banner_style", "invalid_style", "mark_colors", "note_style"]

_ERROR_HUE = 0
_WARNING_HUE = 35


def _readable(hue: int, background: QColor, text: QColor) -> QColor:
    """A saturated colour of `hue` with WCAG AA contrast on `background`, light on dark palettes."""
    dark = relative_luminance(background) < 0.35
    color = QColor.fromHsv(hue, 200 if dark else 230, 255 if dark else 190)
    step = 0.0
    while contrast_ratio(color, background) < MIN_CONTRAST and step < 1.0:
        step += 0.1
        color = blend(color, text, amount=step)
    return color


@dataclass(frozen=True)
class MarkColors:
    """Colours of the marks for one palette."""

    error: QColor
    error_background: QColor
    warning: QColor
    muted: QColor


def mark_colors(palette: QPalette) -> MarkColors:
    base = palette.color(QPalette.ColorRole.Base)
    window = palette.color(QPalette.ColorRole.Window)
    text = palette.color(QPalette.ColorRole.Text)
    tint = blend(window, QColor.fromHsv(_ERROR_HUE, 255, 255 if relative_luminance(window) < 0.35 else 220),
                 amount=0.14)  # fmt: skip
    return MarkColors(
        error=_readable(_ERROR_HUE, tint, text),
        error_background=tint,
        warning=_readable(_WARNING_HUE, window, palette.color(QPalette.ColorRole.WindowText)),
        muted=blend(text, base, amount=0.35),
    )


def invalid_style(palette: QPalette) -> str:
    """A field's frame when its value is refused."""
    return f"border: 1px solid {mark_colors(palette).error.name()}; border-radius: 2px;"


def banner_style(palette: QPalette) -> str:
    """An error banner (QLabel): readable text on a faint tint of the window colour."""
    colors = mark_colors(palette)
    return (
        f"QLabel {{ color: {colors.error.name()}; background: {colors.error_background.name()};"
        f" border: 1px solid {colors.error.name()}; border-radius: 3px; padding: 4px 6px; }}"
    )


def note_style(palette: QPalette, *, warning: bool = False) -> str:
    """An inline note (QLabel): a warning colour, or the palette's muted text."""
    colors = mark_colors(palette)
    return f"QLabel {{ color: {(colors.warning if warning else colors.muted).name()}; }}"
