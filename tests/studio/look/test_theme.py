"""Themes: apply_theme, View > Theme, --theme, and WCAG AA contrast on rendered widgets in the dark theme."""

from __future__ import annotations

import pytest
from helpers.contrast import contrast, grab, text_contrast
from PySide6.QtCore import QRect, QSize
from PySide6.QtGui import QColor, QIcon, QPalette, QTextCursor
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QRadioButton,
    QStyle,
    QStyleOptionButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from studio.app import run_app
from studio.cli import build_parser
from studio.look.icons import icon
from studio.look.theme import MIN_CONTROL_CONTRAST, apply_theme, current_theme, is_dark, status_colors

WAIT_MS = 15_000
AA = 4.5


@pytest.fixture
def app(qapp):
    """The application; whatever a test applies, the platform's look is back afterwards."""
    yield qapp
    apply_theme(qapp, "system")


def test_light_and_dark_are_full_palettes_and_system_puts_the_platform_back(app):
    original = QApplication.palette().color(QPalette.ColorRole.Base)
    apply_theme(app, "dark")
    style = app.style()
    assert is_dark(QApplication.palette()) and style.baseStyle().name().lower() == "fusion"
    assert current_theme(app) == "dark"
    apply_theme(app, "light")
    assert not is_dark(QApplication.palette())
    apply_theme(app, "system")
    assert QApplication.palette().color(QPalette.ColorRole.Base) == original and current_theme(app) == "system"
    with pytest.raises(ValueError, match="theme"):
        apply_theme(app, "neon")


def _indicator_rect(button: QCheckBox | QRadioButton) -> QRect:
    option = QStyleOptionButton()
    option.initFrom(button)
    element = (
        QStyle.SubElement.SE_CheckBoxIndicator if isinstance(button, QCheckBox)
        else QStyle.SubElement.SE_RadioButtonIndicator
    )  # fmt: skip
    return button.style().subElementRect(element, option, button).translated(button.pos())


@pytest.mark.parametrize("name", ["light", "dark"])
def test_check_box_and_radio_frames_stand_out_from_the_window_and_their_base(app, qtbot, name):
    apply_theme(app, name)
    host = QWidget()
    qtbot.addWidget(host)
    layout = QVBoxLayout(host)
    buttons = [QCheckBox("user", host), QRadioButton("Direct URI", host), QCheckBox("checked", host)]
    buttons[2].setChecked(True)
    for button in buttons:
        layout.addWidget(button)
    host.show()
    qtbot.waitExposed(host)
    image = grab(host)
    window = host.palette().color(QPalette.ColorRole.Window)
    base = host.palette().color(QPalette.ColorRole.Base)
    for button in buttons:
        area = _indicator_rect(button)
        pixels = {image.pixel(x, y) for y in range(area.top(), area.bottom() + 1)
                  for x in range(area.left(), area.right() + 1)}  # fmt: skip
        colors = [QColor.fromRgb(rgb) for rgb in pixels]
        # The frame: the pixels that differ most from the window around the box and from the base inside it.
        against_window = max(contrast(color, window) for color in colors)
        against_base = max(contrast(color, base) for color in colors)
        label = f"{name} {button.text()}"
        assert against_window >= MIN_CONTROL_CONTRAST, f"{label}: frame on the window only {against_window:.2f}"
        assert against_base >= MIN_CONTROL_CONTRAST, f"{label}: frame on the base only {against_base:.2f}"
        ratio, _mark, _background = text_contrast(image, area)
        assert ratio >= MIN_CONTROL_CONTRAST, f"{label}: indicator {ratio:.2f}"


@pytest.mark.parametrize("name", ["light", "dark"])
def test_icons_line_art_stands_out_from_its_button_and_a_selected_row(app, qtbot, name):
    apply_theme(app, "dark" if name == "light" else "light")  # the cached icon was shown in the other theme
    host = QWidget()
    qtbot.addWidget(host)
    button = QToolButton(host)
    button.setIcon(icon("copy"))  # line art only: no accent colour to carry it
    button.setIconSize(QSize(24, 24))
    host.show()
    qtbot.waitExposed(host)
    button.grab()
    apply_theme(app, name)
    face = QApplication.palette().color(QPalette.ColorRole.Button)
    qtbot.waitUntil(lambda: button.palette().color(QPalette.ColorRole.Button) == face)
    image = grab(button)
    lines_area = QRect(0, 0, 20, 20)  # inside the icon, clear of the button's frame
    lines_area.moveCenter(image.rect().center())
    ratio, ink, _background = text_contrast(image, lines_area)
    assert ratio >= MIN_CONTROL_CONTRAST, f"{name}: the copy icon's lines {ink.name()} only {ratio:.2f} on the button"
    palette = QApplication.palette()
    selected = icon("copy").pixmap(QSize(24, 24), QIcon.Mode.Selected).toImage()  # as on a selected row
    pixels = (selected.pixelColor(x, y) for y in range(24) for x in range(24))
    lines = [color for color in pixels if color.alpha() == 255]
    highlight = palette.color(QPalette.ColorRole.Highlight)
    on_row = max((contrast(c, highlight) for c in lines), default=0.0)
    assert on_row >= MIN_CONTROL_CONTRAST, f"{name}: the copy icon's lines only {on_row:.2f} on a selected row"


@pytest.mark.parametrize("name", ["light", "dark"])
def test_status_colours_reach_aa_on_their_backgrounds(app, name):
    apply_theme(app, name)
    palette = QApplication.palette()
    colors = status_colors(palette)
    assert colors.dark == (name == "dark")
    assert contrast(colors.error_text, colors.error_background) >= AA
    assert contrast(colors.warning_text, colors.warning_background) >= AA
    assert contrast(colors.muted_text, palette.color(QPalette.ColorRole.Window)) >= AA
    for hue in (colors.incoming, colors.outgoing):
        assert contrast(hue, palette.color(QPalette.ColorRole.Base)) >= AA


def test_view_theme_is_applied_and_remembered(app, make_window):
    window = make_window()
    window.commands.theme_actions["dark"].trigger()
    assert is_dark(QApplication.palette()) and window.settings.theme() == "dark"
    window.set_theme("light", remember=False)  # what --theme does: this run only
    assert not is_dark(QApplication.palette()) and window.settings.theme() == "dark"
    again = make_window()
    assert again.commands.theme_actions["dark"].isChecked()


def test_theme_on_the_command_line():
    assert build_parser().parse_args(["--theme", "dark"]).theme == "dark"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--theme", "neon"])
    assert run_app(theme="neon") == 2  # refused before any window opens


def _line_rect(editor, number: int) -> QRect:
    block = editor.document().findBlockByNumber(number)
    rect = editor.blockBoundingGeometry(block).translated(editor.contentOffset()).toRect()
    return QRect(0, rect.top(), editor.viewport().width(), rect.height())


def test_dark_theme_text_current_line_and_preview_error_reach_aa(app, make_window, project_file, qtbot):
    apply_theme(app, "dark")
    window = make_window()
    window.open_project(project_file)
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    window.catalogue.select("readme")
    editor = window.editor.snippet_editor
    editor.setPlainText("def read(uri, params):\n    raise ValueError('no readme today')\n")
    editor.setTextCursor(QTextCursor(editor.document().findBlockByNumber(0)))  # line 1 is the current line
    qtbot.waitUntil(lambda: window.document.peek("readme").reader.startswith("def read"), timeout=WAIT_MS)
    window.editor.flush()

    image = editor.viewport().grab().toImage()
    current, _, current_bg = text_contrast(image, _line_rect(editor, 0))
    other, _, other_bg = text_contrast(image, _line_rect(editor, 1))
    assert current >= AA and other >= AA, (current, other)
    assert current_bg != other_bg  # the current line is marked, and still readable

    with qtbot.waitSignal(window.controller.preview_finished, timeout=WAIT_MS):
        window.commands.preview.trigger()
    error_view = window.editor.preview.error_view
    qtbot.waitUntil(lambda: "no readme today" in error_view.toPlainText(), timeout=WAIT_MS)
    shot = grab(error_view.viewport())
    title_height = error_view.fontMetrics().height() * 2
    title, _, _ = text_contrast(shot, QRect(0, 0, shot.width(), title_height))
    whole, _, _ = text_contrast(shot, shot.rect())
    assert title >= AA and whole >= AA, (title, whole)
