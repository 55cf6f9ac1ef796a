"""At 1920x1080 the pages use the room, through the real window: no group left mostly empty on the server page,
the project settings across the page rather than in a half-width column."""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QGroupBox, QWidget

from studio.shell.main_window import MainWindow
from studio.shell.project_files import bundled_example


def _example_window(make_window, qtbot) -> MainWindow:
    window = make_window()
    example = bundled_example()
    assert example is not None and window.open_example(example)
    window.resize(1920, 1080)
    window.show()
    qtbot.waitExposed(window)
    return window


def _used(box: QGroupBox) -> float:
    """How far down its box the box's content reaches (1.0: to the bottom)."""
    children = [child for child in box.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly)
                if child.isVisible()]  # fmt: skip
    area = QRect()
    for child in children:
        area = area.united(child.geometry())
    return area.bottom() / max(1, box.height())


def _span(widgets: list[QWidget], page: QWidget) -> float:
    """The share of the page's width the widgets cover, from the leftmost to the rightmost."""
    lefts = [widget.mapTo(page, widget.rect().topLeft()).x() for widget in widgets]
    rights = [widget.mapTo(page, widget.rect().topRight()).x() for widget in widgets]
    return (max(rights) - min(lefts)) / page.width()


def test_the_server_page_leaves_no_group_mostly_empty_at_1920x1080(make_window, qtbot):
    window = _example_window(make_window, qtbot)
    window.show_page("server")
    page = window.pages.currentWidget()
    boxes = [box for box in window.server_panel.findChildren(QGroupBox) if box.isVisible()]
    qtbot.waitUntil(lambda: all(box.height() > 0 for box in boxes))
    assert len(boxes) >= 3
    for box in boxes:
        assert _used(box) >= 0.85, f"{box.title()}: its content ends {_used(box):.0%} of the way down"
    assert _span(boxes, page) >= 0.97


def test_the_project_settings_spread_across_the_page_at_1920x1080(make_window, qtbot):
    window = _example_window(make_window, qtbot)
    window.show_page("settings")
    settings = window.project_settings
    page = window.pages.currentWidget()
    boxes = [box for box in settings.findChildren(QGroupBox) if box.isVisible()]
    qtbot.waitUntil(lambda: settings.column_count >= 3 and _span(boxes, page) >= 0.95)
    # Every group in view: nothing to scroll down to on a 1080 px screen.
    bottom = max(box.mapTo(page, box.rect().bottomLeft()).y() for box in boxes)
    assert bottom < page.height()
