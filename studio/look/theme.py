"""The studio's themes (system, light, dark) and the status colours every view derives from the palette."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPainter, QPalette, QPen
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QStyleFactory, QStyleOption, QWidget

from studio.look.colours import MIN_CONTRAST, blend, contrast_ratio, ensure_contrast, is_dark
from studio.look.editor_theme import style_for_palette

logger = logging.getLogger(__name__)

__all__ = [
    "MIN_CONTRAST",
    "THEMES",
    "StatusColors",
    "apply_theme",
    "contrast_ratio",
    "current_theme",
    "focus_frame_color",
    "icon_ink",
    "indicator_outline",
    "is_dark",
    "pygments_style",
    "status_colors",
]

THEMES = ("system", "light", "dark")

_Role = QPalette.ColorRole
_Group = QPalette.ColorGroup

# The one place the studio's own colours are written down: (role, active/inactive, disabled).
_LIGHT: dict[QPalette.ColorRole, tuple[str, str]] = {
    _Role.Window: ("#f3f3f4", "#f3f3f4"),
    _Role.WindowText: ("#1f2328", "#8c959f"),
    _Role.Base: ("#ffffff", "#f6f8fa"),
    _Role.AlternateBase: ("#f6f8fa", "#f6f8fa"),
    _Role.ToolTipBase: ("#fffbe6", "#fffbe6"),
    _Role.ToolTipText: ("#1f2328", "#1f2328"),
    _Role.PlaceholderText: ("#6e7781", "#8c959f"),
    _Role.Text: ("#1f2328", "#8c959f"),
    _Role.Button: ("#eaecef", "#eaecef"),
    _Role.ButtonText: ("#1f2328", "#8c959f"),
    _Role.BrightText: ("#cf222e", "#cf222e"),
    _Role.Light: ("#ffffff", "#ffffff"),
    _Role.Midlight: ("#e1e4e8", "#e1e4e8"),
    _Role.Mid: ("#c4c9cf", "#c4c9cf"),
    _Role.Dark: ("#8c959f", "#8c959f"),
    _Role.Shadow: ("#57606a", "#57606a"),
    _Role.Highlight: ("#2f6fd0", "#d0d7de"),
    _Role.HighlightedText: ("#ffffff", "#57606a"),
    _Role.Link: ("#0b5cc4", "#8c959f"),
    _Role.LinkVisited: ("#6f42c1", "#8c959f"),
}
_DARK: dict[QPalette.ColorRole, tuple[str, str]] = {
    _Role.Window: ("#25272b", "#25272b"),
    _Role.WindowText: ("#dfe1e5", "#7d828a"),
    _Role.Base: ("#1b1d20", "#222428"),
    _Role.AlternateBase: ("#212327", "#212327"),
    _Role.ToolTipBase: ("#33363b", "#33363b"),
    _Role.ToolTipText: ("#dfe1e5", "#dfe1e5"),
    _Role.PlaceholderText: ("#8b9099", "#6b7079"),
    _Role.Text: ("#dfe1e5", "#7d828a"),
    _Role.Button: ("#33363b", "#2b2d31"),
    _Role.ButtonText: ("#dfe1e5", "#7d828a"),
    _Role.BrightText: ("#ff7b72", "#ff7b72"),
    _Role.Light: ("#4a4e55", "#4a4e55"),
    _Role.Midlight: ("#3b3e44", "#3b3e44"),
    _Role.Mid: ("#2e3035", "#2e3035"),
    _Role.Dark: ("#141518", "#141518"),
    _Role.Shadow: ("#0a0b0c", "#0a0b0c"),
    _Role.Highlight: ("#2f65ca", "#3b3e44"),
    _Role.HighlightedText: ("#ffffff", "#9da2aa"),
    _Role.Link: ("#6cb0ff", "#7d828a"),
    _Role.LinkVisited: ("#c297ff", "#7d828a"),
}
# Status hues (error, warning, incoming, outgoing) for light and dark bases; text and fills derive from them.
_HUES = {
    False: {"error": "#b3261e", "warning": "#7a5200", "incoming": "#1f5fa8", "outgoing": "#1e7a46"},
    True: {"error": "#ff8a80", "warning": "#f2c14e", "incoming": "#79b8ff", "outgoing": "#7ee2a8"},
}
_SYSTEM_STYLE_PROPERTY = "studioSystemStyle"
_SYSTEM_PALETTE: dict[str, QPalette] = {}
_THEME_PROPERTY = "studioTheme"
MIN_CONTROL_CONTRAST = 3.0
"""WCAG 1.4.11: what a control's boundary needs against the colours beside it (a check box's frame)."""
_OUTLINE_CONTRAST = 4.0
"""What the indicator frame is computed for: a margin over `MIN_CONTROL_CONTRAST`, since a round frame is
anti-aliased and its pixels come out lighter than the pen (measured on rendered radio buttons)."""


def _palette(table: dict[QPalette.ColorRole, tuple[str, str]]) -> QPalette:
    palette = QPalette()
    for role, (normal, disabled) in table.items():
        for group in (_Group.Active, _Group.Inactive):
            palette.setColor(group, role, QColor(normal))
        palette.setColor(_Group.Disabled, role, QColor(disabled))
    return palette


def apply_theme(app: QApplication, name: str) -> None:
    """Switch `app` to the "system", "light" or "dark" theme (Fusion and a full palette for light and dark)."""
    if name not in THEMES:
        raise ValueError(f"theme: expected one of {', '.join(THEMES)}, got {name!r}")
    style = app.style()
    if app.property(_SYSTEM_STYLE_PROPERTY) is None:
        # Remember the platform's look the first time, so "system" can put it back.
        app.setProperty(_SYSTEM_STYLE_PROPERTY, style.name() if style is not None else "")
        _SYSTEM_PALETTE["palette"] = QPalette(app.palette())
    if name == "system":
        system_style = str(app.property(_SYSTEM_STYLE_PROPERTY) or "")
        available = [key.lower() for key in QStyleFactory.keys()]  # noqa: SIM118 - a Qt call, not a dict
        # Setting the style the application already has re-polishes every widget (about 30 ms
        # with the window built, at every start): only a switch back from the studio's style does it.
        shown = (style is not None and not isinstance(style, StudioStyle)
                 and style.name().lower() == system_style.lower())  # fmt: skip
        if system_style and system_style in available and not shown:
            app.setStyle(system_style)
        app.setPalette(_SYSTEM_PALETTE.get("palette", QPalette()))
    else:
        # Applied again (the window marks its View menu at start), it changes nothing: a new style
        # would re-polish every widget.
        if not (isinstance(style, StudioStyle) and app.property(_THEME_PROPERTY) == name):
            app.setStyle(StudioStyle())
        palette = _palette(_DARK if name == "dark" else _LIGHT)
        if app.palette() != palette:
            app.setPalette(palette)
    app.setProperty(_THEME_PROPERTY, name)
    logger.debug("theme %s applied", name)


def current_theme(app: QGuiApplication | None = None) -> str:
    """The theme last applied to the application ("system" when none was)."""
    instance = app or QGuiApplication.instance()
    value = instance.property(_THEME_PROPERTY) if instance is not None else None
    return str(value) if value in THEMES else "system"


# -- colours derived from the palette (the arithmetic is in studio.look.colours) ----------


def icon_ink(palette: QPalette, *, selected: bool = False) -> QColor:
    """The colour of the icons' line art: the button text a fifth of the way toward the button, so an icon
    sits a step below the label beside it in every theme; on a selected row, the highlighted text."""
    if selected:
        return palette.color(_Role.HighlightedText)
    return blend(palette.color(_Role.ButtonText), palette.color(_Role.Button), amount=0.2)


def _readable(color: QColor, background: QColor, toward: QColor) -> QColor:
    """`color` moved toward `toward` just enough to reach AA contrast on `background`."""
    return ensure_contrast(color, (background,), toward=toward, ratio=MIN_CONTRAST)


def pygments_style(palette: QPalette) -> str:
    """The pygments style for highlighted views: the code editor's rule (a dark style on a dark base)."""
    return style_for_palette(palette)


@dataclass(frozen=True, slots=True)
class StatusColors:
    """Status colours for one palette; every `*_text` reaches WCAG AA on its own background."""

    dark: bool
    muted_text: QColor
    error_text: QColor
    error_background: QColor
    error_border: QColor
    warning_text: QColor
    warning_background: QColor
    warning_border: QColor
    incoming: QColor
    outgoing: QColor

    def banner_css(self, kind: str, selector: str) -> str:
        """A style sheet for a rounded banner (`kind` "error" or "warning") on widgets matching `selector`."""
        text, background, border = (
            (self.error_text, self.error_background, self.error_border)
            if kind == "error"
            else (self.warning_text, self.warning_background, self.warning_border)
        )
        return (
            f"{selector} {{ color: {text.name()}; background: {background.name()};"
            f" border: 1px solid {border.name()}; border-radius: 3px; padding: 2px 6px; }}"
        )


def status_colors(palette: QPalette) -> StatusColors:
    """Error, warning, muted and traffic colours that suit `palette`."""
    dark = is_dark(palette)
    base, text = palette.color(_Role.Base), palette.color(_Role.Text)
    window = palette.color(_Role.Window)
    hues = {key: QColor(value) for key, value in _HUES[dark].items()}
    error_bg = blend(base, hues["error"], amount=0.14 if dark else 0.09)
    warning_bg = blend(base, hues["warning"], amount=0.14 if dark else 0.12)
    return StatusColors(
        dark=dark,
        muted_text=_readable(blend(text, base, amount=0.45), window, text),
        error_text=_readable(hues["error"], error_bg, text),
        error_background=error_bg,
        error_border=blend(base, hues["error"], amount=0.45),
        warning_text=_readable(hues["warning"], warning_bg, text),
        warning_background=warning_bg,
        warning_border=blend(base, hues["warning"], amount=0.45),
        incoming=_readable(hues["incoming"], base, text),
        outgoing=_readable(hues["outgoing"], base, text),
    )


def indicator_outline(palette: QPalette) -> QColor:
    """The frame of a check box or radio button: the window colour moved toward the text far enough to
    stand out against both the window around it and the base inside it (4:1, so the anti-aliased circle
    still reaches WCAG's 3:1). Fusion's own frame, the window colour darkened, all but vanishes on a dark
    window."""
    window, base, text = (palette.color(role) for role in (_Role.Window, _Role.Base, _Role.Text))
    return ensure_contrast(window, (window, base), toward=text, ratio=_OUTLINE_CONTRAST, steps=40)


def focus_frame_color(palette: QPalette) -> QColor:
    """The frame of the pane holding the keyboard focus: the palette's (active) highlight, moved toward the
    text just enough to stand out 3:1 against the window and the base beside it (WCAG 1.4.11)."""
    highlight = palette.color(_Group.Active, _Role.Highlight)
    window, base, text = (palette.color(role) for role in (_Role.Window, _Role.Base, _Role.Text))
    return ensure_contrast(highlight, (window, base), toward=text, ratio=MIN_CONTROL_CONTRAST, steps=40)


class StudioStyle(QProxyStyle):
    """Fusion, with check box and radio button frames from `indicator_outline`, so they are seen in both themes.

    No signals.
    """

    def __init__(self) -> None:
        super().__init__(QStyleFactory.create("Fusion"))

    def drawPrimitive(
        self,
        element: QStyle.PrimitiveElement,
        option: QStyleOption,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        super().drawPrimitive(element, option, painter, widget)
        indicators = (QStyle.PrimitiveElement.PE_IndicatorCheckBox, QStyle.PrimitiveElement.PE_IndicatorRadioButton)
        if element not in indicators:
            return
        state = option.state
        if state & QStyle.StateFlag.State_HasFocus and state & QStyle.StateFlag.State_KeyboardFocusChange:
            return  # Fusion frames a keyboard-focused indicator in the highlight colour: keep that
        rect = option.rect
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setPen(QPen(indicator_outline(option.palette)))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        if element == QStyle.PrimitiveElement.PE_IndicatorCheckBox:
            # Fusion's geometry: the rect less one pixel, on half pixels so the line is crisp.
            painter.drawRect(QRectF(rect).adjusted(0.5, 0.5, -0.5, -0.5))
        else:
            width = rect.width()
            radius = (width + (width + 1) % 2) / 2.0 - 1
            centre = QPointF(rect.center()) + QPointF(1.0, 1.0)
            painter.drawEllipse(centre, radius, radius)
        painter.restore()
