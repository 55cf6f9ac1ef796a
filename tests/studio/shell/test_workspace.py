"""The editor-first workspace, through the real window: room for code, pages one click away, the fixes of issue 9."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QPlainTextEdit, QScrollArea, QTableView, QTabWidget, QWidget

from studio.shell.main_window import MainWindow
from studio.shell.project_files import bundled_example

WAIT_MS = 15_000


def _example_window(make_window, size: tuple[int, int] = (1280, 800)) -> MainWindow:
    window = make_window()
    example = bundled_example()
    assert example is not None
    assert window.open_example(example)
    window.resize(*size)
    window.show()
    template = next(name for name in window.document.names() if window.document.peek(name).is_template)
    window.catalogue.select(template)
    return window


def _inside(widget: QWidget, window: QWidget) -> bool:
    """The whole widget is on screen inside the window (nothing cut off by the window's edge)."""
    top_left = widget.mapTo(window, widget.rect().topLeft())
    return widget.isVisible() and window.rect().contains(QRect(top_left, widget.size()))


def test_the_reader_shows_30_lines_beside_a_visible_preview_at_1280x800(make_window, qtbot):
    window = _example_window(make_window)
    qtbot.waitExposed(window)
    editor = window.editor
    qtbot.waitUntil(editor.snippet_editor.isVisible)
    assert editor.visible_reader_lines() >= 30, f"{editor.visible_reader_lines():.1f} lines"
    assert editor.preview.output.isVisible() and _inside(editor.preview.output, window)
    assert editor.preview.output.height() >= 300 and editor.preview.output.width() >= 300
    assert editor.snippet_editor.width() >= editor.preview.width()  # the code is the centre
    assert not editor.builder_visible  # one key away (Ctrl+B), not a permanent column


def test_the_extra_room_at_1920x1080_goes_to_editor_and_preview(make_window, qtbot):
    small = _example_window(make_window)
    qtbot.waitExposed(small)
    large = _example_window(make_window, (1920, 1080))
    qtbot.waitExposed(large)
    for window in (small, large):
        qtbot.waitUntil(lambda window=window: window.editor.snippet_editor.isVisible())
    assert large.editor.visible_reader_lines() >= small.editor.visible_reader_lines() + 15
    assert large.editor.snippet_editor.width() >= small.editor.snippet_editor.width() + 250
    assert large.editor.preview.width() >= small.editor.preview.width() + 150
    assert large.catalogue.width() <= small.catalogue.width() + 20  # the catalogue keeps its width


def test_the_server_page_cuts_nothing_off_at_1280x800(make_window, qtbot):
    window = _example_window(make_window)
    window.show_page("server")
    qtbot.waitExposed(window)
    scroll = window.findChild(QScrollArea, "serverPanelScroll")
    assert scroll is not None and scroll.isVisible()
    panel = window.server_panel
    qtbot.waitUntil(lambda: panel.height() <= scroll.viewport().height())  # nothing to scroll to
    sessions = window.findChild(QTableView, "sessionsView")
    assert sessions is not None and _inside(sessions, window)
    row = sessions.verticalHeader().defaultSectionSize()
    assert sessions.viewport().height() // row >= 4
    for name in ("clientConfig", "notifyResult", "notifyUri", "startHttpButton"):
        child = window.findChild(QWidget, name)
        assert child is not None and _inside(child, window), name


def test_pages_are_one_click_away_and_the_settings_page_is_there(make_window, qtbot):
    window = _example_window(make_window)
    for key in ("server", "traffic", "settings", "tests", "editor"):
        window.commands.page_actions[key].trigger()
        assert window.current_page == key
    assert window.commands.page_actions["tests"].shortcut().toString() == "Ctrl+5"
    window.show_page("settings")
    assert window.project_settings.isVisible()
    with pytest.raises(ValueError, match="page"):
        window.show_page("nowhere")


def test_distraction_free_mode_leaves_only_the_code(make_window, qtbot):
    window = _example_window(make_window)
    qtbot.waitExposed(window)
    editor = window.editor
    before = editor.visible_reader_lines()
    toggle = window.commands.focus_mode
    keys = [sequence.toString() for sequence in toggle.shortcuts()]
    assert keys == ["F11", "Ctrl+Shift+M"]
    # The offscreen platform activates no window, so Qt's shortcut map is not reached: trigger the action.
    toggle.trigger()
    assert window.focus_mode
    assert not window.catalogue.isVisible() and not editor.preview.isVisible()
    qtbot.waitUntil(lambda: editor.visible_reader_lines() > before)
    toggle.trigger()
    assert not window.focus_mode and window.catalogue.isVisible() and editor.preview.isVisible()


def test_the_completions_tab_is_not_left_selected_on_a_direct_resource(make_window, qtbot):
    window = _example_window(make_window)
    tabs = window.findChild(QTabWidget, "snippetTabs")
    assert tabs is not None
    tabs.setCurrentIndex(1)
    assert tabs.currentWidget() is window.editor.complete_pane
    direct = next(name for name in window.document.names() if not window.document.peek(name).is_template)
    window.catalogue.select(direct)
    assert tabs.currentIndex() == 0 and not tabs.isTabEnabled(1)
    assert "template" in tabs.tabToolTip(1)


def test_the_preview_uri_follows_the_address_until_the_user_types_one(make_window, project_file, qtbot):
    window = make_window()
    window.open_project(project_file)
    window.show()
    window.catalogue.select("readme")
    preview = window.editor.preview
    assert preview.uri == "docs://readme" and preview.follows_resource
    window.editor.set_builder_visible(True)
    uri_edit = window.editor.form.uri_edit
    uri_edit.selectAll()
    qtbot.keyClicks(uri_edit, "docs://read-me")
    window.editor.flush()
    qtbot.waitUntil(lambda: preview.uri == "docs://read-me")

    # A URI the user typed is theirs: later edits of the address leave it alone.
    line = preview.uri_box.lineEdit()
    line.selectAll()
    qtbot.keyClicks(line, "docs://mine")
    assert not preview.follows_resource
    uri_edit.selectAll()
    qtbot.keyClicks(uri_edit, "docs://readme")
    window.editor.flush()
    assert preview.uri == "docs://mine"
    window.catalogue.select("ticket")
    window.catalogue.select("readme")
    assert preview.uri == "docs://readme" and preview.follows_resource  # another resource: its own address


def test_enter_in_a_template_variable_field_reads(make_window, project_file, qtbot):
    window = make_window()
    window.open_project(project_file)
    window.show()
    window.catalogue.select("ticket")
    preview = window.editor.preview
    edit = preview.variable_edit("id")
    assert edit is not None
    edit.clear()
    qtbot.keyClicks(edit, "42")
    edit.completer().popup().hide()
    with qtbot.waitSignal(window.controller.preview_finished, timeout=WAIT_MS) as finished:
        qtbot.keyClick(edit, Qt.Key.Key_Return)
    outcome = finished.args[0]
    assert outcome.uri == "tickets://42" and outcome.error_code is None


def test_a_restart_from_the_settings_page_serves_again_on_the_same_port(make_window, project_file, qtbot):
    window = make_window()
    window.open_project(project_file)
    window.show()
    with qtbot.waitSignal(window.controller.server_started, timeout=WAIT_MS) as started:
        window.start_http("127.0.0.1", 0)  # any free port: the restart keeps the one it got
    first_url = started.args[0]
    with qtbot.waitSignals([window.controller.server_stopped, window.controller.server_started],
                           timeout=WAIT_MS, order="strict"):  # fmt: skip
        window.project_settings.restart_requested.emit()
    assert window.controller.is_running and window.controller.url == first_url


def test_view_word_wrap_wraps_every_snippet_editor(make_window, project_file):
    window = make_window()
    window.open_project(project_file)
    wrap, no_wrap = QPlainTextEdit.LineWrapMode.WidgetWidth, QPlainTextEdit.LineWrapMode.NoWrap
    editors = (window.editor.snippet_editor, window.editor.complete_editor, window.editor.prelude_editor)
    assert all(editor.lineWrapMode() == no_wrap for editor in editors)
    window.commands.word_wrap.trigger()
    assert all(editor.lineWrapMode() == wrap for editor in editors)
    assert window.settings.layout_flag("word_wrap", False)


def test_the_builder_fits_its_fields_at_1280x800(make_window, qtbot):
    window = _example_window(make_window)
    qtbot.waitExposed(window)
    editor = window.editor
    editor.set_builder_visible(True)
    scroll = editor.form_scroll
    qtbot.waitUntil(lambda: editor.form.isVisible() and editor.form.width() > 0)
    viewport = scroll.viewport()
    assert scroll.horizontalScrollBar().maximum() == 0, "nothing to scroll sideways to"
    names = ("nameEdit", "lastModifiedNowButton", "resourceCacheScope", "resourceCacheTtlEdit",
             "lastModifiedEdit", "uncheckedValuesCheck", "samplesEdit", "completionsBox")  # fmt: skip
    for name in names:
        child = editor.form.findChild(QWidget, name)
        assert child is not None, name
        right = child.mapTo(viewport, child.rect().topRight()).x()
        assert right < viewport.width(), f"{name} ends at {right}, the builder shows {viewport.width()} px"
