"""The code editor's colours, derived from a QPalette and the pygments style that suits it (dark or light)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from pygments.style import StyleMeta
from pygments.styles import get_style_by_name
from pygments.token import Error, Generic
from PySide6.QtGui import QColor, QPalette

from studio.look.colours import MIN_CONTRAST, blend, contrast_ratio, ensure_contrast, is_dark, relative_luminance

# MIN_CONTRAST and ensure_contrast are studio.look.colours', offered here too for the editor's highlighters.
__all__ = ["DARK_STYLE", "LIGHT_STYLE", "MIN_CONTRAST", "EditorTheme", "ensure_contrast", "style_for_palette",
           "theme_for_palette"]  # fmt: skip

DARK_STYLE = "github-dark"
LIGHT_STYLE = "default"


def style_for_palette(palette: QPalette) -> str:
    """The pygments style name for a palette: a dark style on a dark base, the default one otherwise."""
    return DARK_STYLE if is_dark(palette) else LIGHT_STYLE


def _style_color(style: StyleMeta, *tokens: object) -> QColor | None:
    for token in tokens:
        info = style.style_for_token(token)
        for key in ("color", "border"):
            value = info.get(key)
            if value:
                return QColor(value if str(value).startswith("#") else f"#{value}")
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class EditorTheme:
    """Every colour the editor paints, for one palette."""

    style: str
    dark: bool
    base: QColor
    text: QColor
    current_line: QColor
    gutter_background: QColor
    gutter_text: QColor
    gutter_current: QColor
    error: QColor
    error_background: QColor
    bracket_match: QColor
    find_match: QColor

    @property
    def key(self) -> tuple[str, int, int, int]:
        """Identifies the colours token formats depend on (for caching)."""
        return (self.style, self.base.rgb(), self.current_line.rgb(), self.text.rgb())


@functools.lru_cache(maxsize=16)
def _theme(style_name: str, *, base_rgb: int, text_rgb: int, highlight_rgb: int) -> EditorTheme:
    base, text, highlight = QColor.fromRgb(base_rgb), QColor.fromRgb(text_rgb), QColor.fromRgb(highlight_rgb)
    style = get_style_by_name(style_name)
    dark = relative_luminance(base) < relative_luminance(text)
    current_line = blend(base, highlight, amount=0.14 if dark else 0.08)
    # The current line must never cost the text its contrast: fall back toward the base until it is readable.
    step = 0.14 if dark else 0.08
    while contrast_ratio(text, current_line) < MIN_CONTRAST and step > 0:
        step = max(step - 0.02, 0.0)
        current_line = blend(base, highlight, amount=step)
    raw_error = _style_color(style, Generic.Error, Error) or highlight
    error = ensure_contrast(raw_error, (base, current_line), toward=text, ratio=MIN_CONTRAST)
    gutter_background = blend(base, text, amount=0.05)
    return EditorTheme(
        style=style_name,
        dark=dark,
        base=base,
        text=text,
        current_line=current_line,
        gutter_background=gutter_background,
        gutter_text=ensure_contrast(blend(text, base, amount=0.55), (gutter_background,), toward=text, ratio=3.0),
        gutter_current=ensure_contrast(blend(text, base, amount=0.15), (gutter_background,), toward=text,
                                       ratio=MIN_CONTRAST),
        error=error,
        error_background=blend(gutter_background, error, amount=0.18),
        bracket_match=blend(base, highlight, amount=0.35),
        find_match=blend(base, highlight, amount=0.25),
    )


def theme_for_palette(palette: QPalette) -> EditorTheme:
    """The editor colours for `palette` (its Base, Text and Highlight roles, and the matching pygments style)."""
    group = QPalette.ColorGroup.Active
    return _theme(
        style_for_palette(palette),
        base_rgb=palette.color(group, QPalette.ColorRole.Base).rgb(),
        text_rgb=palette.color(group, QPalette.ColorRole.Text).rgb(),
        highlight_rgb=palette.color(group, QPalette.ColorRole.Highlight).rgb(),
    )
