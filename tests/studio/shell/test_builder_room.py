"""Room for the code with the builder open, through the real window: 60 columns at 1280x800, whole tab names."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTabBar

from studio.shell.main_window import MainWindow
from studio.shell.project_files import bundled_example
from studio.shell.resource_editor import MIN_CODE_COLUMNS

WAIT_MS = 15_000


def _example_window(make_window, qtbot, size: tuple[int, int]) -> MainWindow:
    window = make_window()
    example = bundled_example()
    assert example is not None and window.open_example(example)
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    template = next(name for name in window.document.names() if window.document.peek(name).is_template)
    assert window.catalogue.select(template)
    return window


def code_columns(window: MainWindow) -> float:
    editor = window.editor.snippet_editor
    return editor.viewport().width() / editor.fontMetrics().averageCharWidth()


def tabs_read_whole(bar: QTabBar) -> bool:
    """No tab's name is shortened or scrolled away."""
    return all(bar.tabRect(index).width() >= bar.tabSizeHint(index).width() and bar.tabRect(index).right() < bar.width()
               for index in range(bar.count()))  # fmt: skip


def test_the_code_keeps_60_columns_beside_the_open_builder_at_1280x800(make_window, qtbot):
    window = _example_window(make_window, qtbot, (1280, 800))
    editor = window.editor
    window.commands.builder.trigger()
    qtbot.waitUntil(editor.form.name_edit.isVisible)
    assert editor.builder_visible and window.commands.builder.isChecked()
    bar = editor.snippet_tabs.tabBar()
    qtbot.waitUntil(lambda: code_columns(window) >= MIN_CODE_COLUMNS, timeout=WAIT_MS)
    assert editor.snippet_tabs.elideMode().name == "ElideNone" and tabs_read_whole(bar)
    assert [bar.tabText(index) for index in range(bar.count())] == ["Reader", "Completions", "Instances", "Prelude"]
    # Too narrow for three columns: the builder is a tab over the preview, one click (or Ctrl+R) away.
    assert editor.builder.in_tab and not editor.preview.isVisible()
    window.commands.preview.trigger()
    qtbot.waitUntil(editor.preview.isVisible)
    assert not editor.builder_visible and not window.commands.builder.isChecked()
    window.commands.builder.trigger()
    assert editor.builder_visible and not editor.preview.isVisible()
    assert code_columns(window) >= MIN_CODE_COLUMNS and tabs_read_whole(bar)
    side_bar = editor.side_tabs.tabBar()
    index = editor.side_tabs.indexOf(editor.builder_panel)
    sides = (QTabBar.ButtonPosition.RightSide, QTabBar.ButtonPosition.LeftSide)
    close = next(button for side in sides if (button := side_bar.tabButton(index, side)) is not None)
    qtbot.mouseClick(close, Qt.MouseButton.LeftButton)  # closed, its tab goes too
    assert not editor.builder_visible and not window.commands.builder.isChecked()
    assert editor.side_tabs.count() == 1 and editor.preview.isVisible()


def test_at_1920x1080_the_builder_has_its_own_column_beside_code_and_preview(make_window, qtbot):
    window = _example_window(make_window, qtbot, (1920, 1080))
    editor = window.editor
    editor.set_builder_visible(True)
    qtbot.waitUntil(editor.form.name_edit.isVisible)
    assert not editor.builder.in_tab and editor.preview.isVisible()
    assert code_columns(window) >= MIN_CODE_COLUMNS + 20
    assert tabs_read_whole(editor.snippet_tabs.tabBar())
    # Narrowed to 1280, the builder moves over the preview and the code keeps its columns; back again.
    window.resize(1280, 800)
    qtbot.waitUntil(lambda: editor.builder.in_tab, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: code_columns(window) >= MIN_CODE_COLUMNS, timeout=WAIT_MS)
    assert editor.builder_visible and editor.form.name_edit.isVisible()
    window.resize(1920, 1080)
    qtbot.waitUntil(lambda: not editor.builder.in_tab, timeout=WAIT_MS)
    assert editor.builder_visible and editor.preview.isVisible()
