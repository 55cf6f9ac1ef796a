"""What a screen reader announces, through the real window: at least 95% of every page's focusable widgets have an
accessible name (their own, a label buddy's, a button's text), measured with QAccessible."""

from __future__ import annotations

import pytest
from helpers.accessibility import accessible_description, accessible_name, focusable_widgets, name_coverage
from PySide6.QtWidgets import QWidget

from studio.shell.main_window import MainWindow
from studio.shell.project_files import bundled_example

WAIT_MS = 15_000
REQUIRED = 0.95

# resources/subscribe is deprecated at 2026-07-28; the legacy client uses it on purpose.
pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


def _example_window(make_window, qtbot, size=(1280, 800)) -> MainWindow:
    window = make_window()
    example = bundled_example()
    assert example is not None and window.open_example(example)
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    template = next(name for name in window.document.names() if window.document.peek(name).is_template)
    assert window.catalogue.select(template)
    return window


def _read_preview(window: MainWindow, qtbot) -> None:
    window.commands.preview.trigger()
    preview = window.editor.preview
    qtbot.waitUntil(lambda: any(view.is_ready for view in preview.content_views()), timeout=WAIT_MS)


def _outside(widgets: list[QWidget], part: QWidget) -> list[QWidget]:
    return [widget for widget in widgets if widget is not part and not part.isAncestorOf(widget)]


def _coverage_without(page: QWidget, part: QWidget) -> tuple[float, list[str]]:
    widgets = _outside(focusable_widgets(page), part)
    unnamed = [f"{type(w).__name__}#{w.objectName()}" for w in widgets if not accessible_name(w)]
    return (len(widgets) - len(unnamed)) / len(widgets), unnamed


@pytest.mark.parametrize(("size", "builder"), [((1280, 800), False), ((1920, 1080), True)])
def test_the_editor_page_names_its_widgets(make_window, qtbot, size, builder):
    window = _example_window(make_window, qtbot, size)
    editor = window.editor
    editor.set_builder_visible(builder)
    _read_preview(window, qtbot)
    assert editor.builder_visible == builder and editor.preview.isVisible()
    page = window.pages.currentWidget()
    # The preview column is studio/preview's to name (see test_the_preview_column_names_its_widgets).
    share, unnamed = _coverage_without(page, editor.side_splitter)
    assert share >= REQUIRED, f"{share:.0%} named; unnamed: {unnamed}"
    catalogue = window.catalogue
    named = ((catalogue.filter_edit, "Filter the catalogue"), (catalogue.resource_list, "Resources"),
             (catalogue.template_list, "Templates"), (editor.snippet_editor, "Reader snippet"))  # fmt: skip
    for widget, name in named:
        assert accessible_name(widget) == name
        assert accessible_description(widget), f"{name}: no description"
    if builder:
        form = editor.form
        assert accessible_name(form.name_edit) == "Name" and accessible_name(form.icons_table.table) == "Icons"


def test_the_preview_column_names_its_widgets(make_window, qtbot):
    window = _example_window(make_window, qtbot)
    _read_preview(window, qtbot)
    coverage = name_coverage(window.editor.side_splitter)
    assert coverage.share >= REQUIRED, str(coverage)


def test_the_server_page_names_its_widgets(make_window, qtbot, connect):
    window = _example_window(make_window, qtbot)
    window.start_http("127.0.0.1", 0)
    qtbot.waitUntil(lambda: window.server_panel.is_running, timeout=WAIT_MS)
    connect(window.server_panel.url)
    qtbot.waitUntil(lambda: window.sessions.rowCount() == 1, timeout=WAIT_MS)
    window.show_page("server")
    coverage = name_coverage(window.pages.currentWidget())
    assert coverage.total >= 15 and coverage.share >= REQUIRED, str(coverage)
    panel = window.server_panel
    assert accessible_name(panel.host_edit) == "Address" and accessible_name(panel.port_spin) == "Port"
    assert accessible_name(panel.client_config.text) == "Client configuration"


def test_the_traffic_page_names_its_widgets(make_window, qtbot, connect):
    window = _example_window(make_window, qtbot)
    window.start_http("127.0.0.1", 0)
    qtbot.waitUntil(lambda: window.server_panel.is_running, timeout=WAIT_MS)
    connect(window.server_panel.url)
    window.show_page("traffic")
    log = window.traffic_log
    qtbot.waitUntil(lambda: log.proxy.rowCount() > 0, timeout=WAIT_MS)
    log.table.selectRow(0)
    coverage = name_coverage(window.pages.currentWidget())
    assert coverage.share >= REQUIRED, str(coverage)
    assert accessible_name(log.table) == "Traffic" and accessible_name(log.detail) == "Message"


def test_the_settings_page_names_its_widgets(make_window, qtbot):
    window = _example_window(make_window, qtbot)
    window.show_page("settings")
    coverage = name_coverage(window.pages.currentWidget())
    assert coverage.total >= 15 and coverage.share >= REQUIRED, str(coverage)


def test_the_tests_page_names_its_widgets(make_window, qtbot):
    window = _example_window(make_window, qtbot)
    window.show_page("tests")
    coverage = name_coverage(window.pages.currentWidget())
    assert coverage.share >= REQUIRED, str(coverage)
    view = window.tests_view
    assert accessible_name(view.table) == "Resource tests" and accessible_description(view.table)
