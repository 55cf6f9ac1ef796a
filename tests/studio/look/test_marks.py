"""Form marks: error and warning colours come from the palette and stay readable (WCAG AA) in light and dark."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QPalette

from studio.look.marks import banner_style, mark_colors


def luminance(color: QColor) -> float:
    def channel(value: int) -> float:
        v = value / 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.red()) + 0.7152 * channel(color.green()) + 0.0722 * channel(color.blue())


def contrast(a: QColor, b: QColor) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize(
    ("window", "text", "base"),
    [("#efefef", "#000000", "#ffffff"), ("#2b2b2b", "#e6e6e6", "#1e1e1e"), ("#000000", "#ffffff", "#000000")],
)
def test_marks_are_readable_on_their_palette(qapp, window: str, text: str, base: str):
    palette = QPalette()
    for role, value in ((QPalette.ColorRole.Window, window), (QPalette.ColorRole.WindowText, text),
                        (QPalette.ColorRole.Text, text), (QPalette.ColorRole.Base, base)):  # fmt: skip
        palette.setColor(role, QColor(value))
    colors = mark_colors(palette)
    assert contrast(colors.error, colors.error_background) >= 4.5
    assert contrast(colors.warning, QColor(window)) >= 4.5
    assert colors.error.name() in banner_style(palette)
