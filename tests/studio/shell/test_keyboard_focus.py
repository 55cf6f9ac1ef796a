"""The window by keyboard: a new resource is named by typing, F6 goes round the panes, the focused pane is framed,
Tab follows the builder's layout, and tabbing into a catalogue list selects nothing.

Key bindings and focus differ between the offscreen platform and a real X server: .ci/run runs this file a
second time under Xvfb (where only the active window takes the focus, hence `activateWindow`).
"""

from __future__ import annotations

import itertools

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QWidget

from studio.look.theme import apply_theme, focus_frame_color
from studio.shell.focus_panes import FOCUS_FRAME_WIDTH
from studio.shell.main_window import MainWindow
from studio.shell.project_files import bundled_example

WAIT_MS = 15_000
CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


def _active_window(make_window, qtbot, size: tuple[int, int] = (1280, 800)) -> MainWindow:
    window = make_window()
    example = bundled_example()
    assert example is not None and window.open_example(example)
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitActive(window)
    template = next(name for name in window.document.names() if window.document.peek(name).is_template)
    assert window.catalogue.select(template)
    return window


def focused() -> QWidget | None:
    return QApplication.focusWidget()


def _type_a_name(qtbot, window: MainWindow, name: str) -> None:
    name_edit = window.editor.form.name_edit
    qtbot.waitUntil(lambda: focused() is name_edit, timeout=WAIT_MS)
    viewport = window.editor.form_scroll.viewport()
    assert viewport.rect().contains(name_edit.mapTo(viewport, QPoint(0, 0))), "the name field is out of sight"
    qtbot.keyClicks(focused(), name)
    window.editor.flush()


@pytest.mark.parametrize("builder_open", [False, True])
def test_adding_a_resource_or_template_puts_the_focus_in_the_builders_name_field(make_window, qtbot, builder_open):
    window = _active_window(make_window, qtbot)
    editor = window.editor
    editor.set_builder_visible(builder_open)
    editor.focus_code()
    qtbot.waitUntil(lambda: focused() is editor.snippet_editor)
    reader = editor.snippet_editor.toPlainText()
    ways = [
        ("key", lambda: qtbot.keyClick(focused(), Qt.Key.Key_N, CTRL_SHIFT), "weather", False),
        ("key", lambda: qtbot.keyClick(focused(), Qt.Key.Key_T, CTRL_SHIFT), "forecast", True),
        ("menu", window.commands.add_resource.trigger, "notes", False),
        ("toolbar", lambda: qtbot.mouseClick(
            window.commands.toolbar.widgetForAction(window.commands.add_template), Qt.MouseButton.LeftButton),
         "alerts", True),
    ]  # fmt: skip
    for how, add, name, template in ways:
        before = len(window.document.names())
        add()
        qtbot.waitUntil(lambda before=before: len(window.document.names()) == before + 1, timeout=WAIT_MS)
        assert editor.builder_visible, how
        _type_a_name(qtbot, window, name)  # the selected default name is replaced
        spec = window.document.peek(name)
        assert spec is not None and spec.is_template == template, (how, window.document.names())
        assert window.catalogue.current_name == name
        editor.focus_code()  # the next add starts from the code again, the form scrolled down
        editor.form_scroll.verticalScrollBar().setValue(editor.form_scroll.verticalScrollBar().maximum())
        qtbot.waitUntil(lambda: focused() is editor.snippet_editor)
    readers = [window.document.peek(name).reader for name in window.document.names()]
    assert reader in readers and not any(name in text for text in readers for _, _, name, _ in ways)


def _press(qtbot, key: Qt.Key, modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> QWidget:
    widget = focused()
    assert widget is not None, "nothing has the focus"
    qtbot.keyClick(widget, key, modifiers)
    return focused()


def test_f6_and_shift_f6_go_round_the_panes_in_their_order_on_screen(make_window, qtbot):
    window = _active_window(make_window, qtbot, (1920, 1080))
    editor, panes = window.editor, window.panes
    editor.set_builder_visible(True)  # wide enough: its own column, left of the code
    editor.focus_code()
    qtbot.waitUntil(lambda: focused() is editor.snippet_editor)
    assert [pane.name for pane in panes.shown()] == ["catalogue", "builder", "code", "preview"]
    seen = []
    for _ in range(4):
        _press(qtbot, Qt.Key.Key_F6)
        seen.append(panes.current().name)
    assert seen == ["preview", "catalogue", "builder", "code"]
    assert focused() is editor.snippet_editor  # round to where it started
    assert window.catalogue.focus_target() is window.catalogue.template_list  # the selected template's list
    back = []
    for _ in range(4):
        _press(qtbot, Qt.Key.Key_F6, Qt.KeyboardModifier.ShiftModifier)
        back.append(panes.current().name)
    assert back == ["builder", "catalogue", "preview", "code"]
    # A pane is entered where the focus last was in it.
    _press(qtbot, Qt.Key.Key_F6, Qt.KeyboardModifier.ShiftModifier)
    assert focused() is editor.form.name_edit
    editor.form.uri_edit.setFocus(Qt.FocusReason.MouseFocusReason)
    _press(qtbot, Qt.Key.Key_F6)
    _press(qtbot, Qt.Key.Key_F6, Qt.KeyboardModifier.ShiftModifier)
    assert focused() is editor.form.uri_edit


def test_at_1280x800_f6_skips_the_preview_hidden_behind_the_builders_tab(make_window, qtbot):
    window = _active_window(make_window, qtbot)
    window.editor.set_builder_visible(True)
    assert [pane.name for pane in window.panes.shown()] == ["catalogue", "code", "builder"]
    window.commands.preview.trigger()  # the preview comes to the front of the column
    assert [pane.name for pane in window.panes.shown()] == ["catalogue", "code", "preview"]


def _frame_pixels(window: MainWindow, pane: QWidget) -> set[str]:
    """The colours of the pane's outer ring, on the window as it is painted."""
    image = window.grab().toImage()
    corner = pane.mapTo(window, QPoint(0, 0))
    width, height = pane.width(), pane.height()
    points = [(width // 2, 0), (0, height // 2), (width - 1, height // 2), (width // 2, height - 1)]
    return {image.pixelColor(corner.x() + x, corner.y() + y).name() for x, y in points}


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_pane_holding_the_focus_is_framed_in_the_palettes_focus_colour(make_window, qtbot, theme):
    app = QApplication.instance()
    apply_theme(app, theme)
    try:
        window = _active_window(make_window, qtbot)
        editor = window.editor
        colour = focus_frame_color(window.palette()).name()
        assert colour == focus_frame_color(app.palette()).name()
        editor.focus_code()
        qtbot.waitUntil(lambda: focused() is editor.snippet_editor)
        qtbot.waitUntil(lambda: _frame_pixels(window, editor.snippet_tabs) == {colour}, timeout=WAIT_MS)
        assert colour not in _frame_pixels(window, window.catalogue)
        _press(qtbot, Qt.Key.Key_F6)  # to the preview
        qtbot.waitUntil(lambda: _frame_pixels(window, editor.side_splitter) == {colour}, timeout=WAIT_MS)
        assert colour not in _frame_pixels(window, editor.snippet_tabs)
        assert FOCUS_FRAME_WIDTH >= 2
    finally:
        apply_theme(app, "system")


def test_the_light_and_dark_focus_frames_come_from_their_palettes_highlight(qapp):
    apply_theme(qapp, "light")
    light = focus_frame_color(qapp.palette())
    apply_theme(qapp, "dark")
    dark = focus_frame_color(qapp.palette())
    apply_theme(qapp, "system")
    assert light != dark
    for colour in (light, dark):
        assert colour.isValid()


def _label(widget: QWidget) -> str:
    return widget.objectName() or type(widget).__name__


def _reading_order_breaks(widgets: list[QWidget], root: QWidget) -> list[str]:
    """Consecutive widgets that Tab visits against the layout (a later row before an earlier one, or right to
    left within a row)."""
    breaks = []
    for first, second in itertools.pairwise(widgets):
        a, b = (w.mapTo(root, QPoint(0, 0)) for w in (first, second))
        a_bottom = a.y() + first.height()
        same_row = b.y() < a_bottom and a.y() < b.y() + second.height()
        if (same_row and b.x() <= a.x()) or (not same_row and b.y() < a.y()):
            breaks.append(f"{_label(first)} -> {_label(second)}")
    return breaks


def test_tab_goes_through_the_builder_top_to_bottom(make_window, qtbot):
    window = _active_window(make_window, qtbot, (1920, 1080))
    editor = window.editor
    editor.set_builder_visible(True)
    editor.form.live.set_expanded(True)
    form = editor.form
    qtbot.waitUntil(lambda: focused() is form.name_edit)
    visited = [form.name_edit]
    for _ in range(60):
        widget = _press(qtbot, Qt.Key.Key_Tab)
        if widget is None or not form.isAncestorOf(widget) or widget in visited:
            break
        visited.append(widget)
    names = [w.objectName() for w in visited]
    for name in ("nameEdit", "uriEdit", "mimeEdit", "prioritySpin", "lastModifiedNowButton", "iconsTable",
                 "samplesEdit", "watchFilesEdit", "watchIntervalEdit"):  # fmt: skip
        assert name in names, f"Tab never reaches {name}: {names}"
    assert _reading_order_breaks(visited, form) == [], names


def test_tabbing_into_a_catalogue_list_keeps_the_selected_resource(make_window, qtbot):
    window = _active_window(make_window, qtbot)
    catalogue = window.catalogue
    template = catalogue.current_name
    catalogue.filter_edit.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(lambda: focused() is catalogue.filter_edit)
    lists = (catalogue.resource_list, catalogue.template_list)
    reached = []
    for _ in range(12):
        widget = _press(qtbot, Qt.Key.Key_Tab)
        if widget in lists and widget not in reached:
            reached.append(widget)
            assert catalogue.current_name == template and window.editor.resource_name == template
        if len(reached) == 2:
            break
    assert reached == list(lists)
    _press(qtbot, Qt.Key.Key_Tab, Qt.KeyboardModifier.ShiftModifier)  # back into the resources list
    assert focused() is catalogue.resource_list and catalogue.current_name == template
    _press(qtbot, Qt.Key.Key_Down)  # the arrows still pick a resource
    assert catalogue.current_name != template
    assert not window.document.peek(catalogue.current_name).is_template
