"""The real window, offscreen: build, preview, serve to a real SDK client, notify, save, reopen, recover."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from mcp.shared.exceptions import MCPError
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QPlainTextEdit, QPushButton, QSpinBox, QTableView

from resources_qt.project import (
    dumps_project,
    load_project,
    save_project,
)
from studio.catalogue.catalogue_model import ERRORS_ROLE
from studio.document.recovery import RecoveryStore
from studio.shell.main_window import MainWindow, UnsavedChoice

WAIT_MS = 15_000

# resources/subscribe is deprecated at 2026-07-28; the legacy client uses it on purpose.
pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


def find(window: MainWindow, kind, name: str):
    widget = window.findChild(kind, name)
    assert widget is not None, f"no {kind.__name__} named {name!r}"
    return widget


def preview_text(window: MainWindow) -> str:
    views = window.editor.preview.content_views()
    return "\n".join(view.shown_text() for view in views if view.is_ready)


def type_snippet(qtbot, window: MainWindow, source: str) -> None:
    editor = find(window, QPlainTextEdit, "snippetEditor")
    editor.selectAll()
    editor.insertPlainText(source)
    window.editor.flush()


def test_window_layout_names_and_title(make_window, project_file):
    window = make_window()
    assert window.open_project(project_file)
    window.show()
    assert (window.width(), window.height()) == (1280, 800)
    for kind, name in [(QLineEdit, "nameEdit"), (QLineEdit, "uriEdit"), (QComboBox, "mimeEdit"),
                       (QPlainTextEdit, "snippetEditor"), (QComboBox, "previewUri"), (QPushButton, "previewButton"),
                       (QSpinBox, "httpPort"), (QPushButton, "startHttpButton"), (QLabel, "serverStatus"),
                       (QTableView, "sessionsView"), (QComboBox, "notifyUri"), (QPushButton, "notifyUpdatedButton"),
                       (QPushButton, "notifyListChangedButton"), (QTableView, "trafficLog")]:  # fmt: skip
        find(window, kind, name)
    assert find(window, QLabel, "serverStatus").text() == "Stopped"
    assert "desk.toml" in window.windowTitle() and not window.isWindowModified()
    assert window.catalogue.current_name == "readme"
    window.commands.add_resource.trigger()
    assert window.isWindowModified() and len(window.document.names()) == 3
    window.commands.undo.trigger()
    assert window.document.names() == ["readme", "ticket"] and not window.isWindowModified()
    window.commands.redo.trigger()
    assert len(window.document.names()) == 3 and window.isWindowModified()
    assert window.commands.preview.shortcut().toString() == "Ctrl+R"
    assert window.commands.list_changed.shortcut().toString() == "Ctrl+Shift+L"
    assert window.commands.server.shortcut().toString() == "F5"
    for action in (window.commands.new, window.commands.open, window.commands.save, window.commands.preview,
                   window.commands.server, window.commands.list_changed, window.commands.updated):  # fmt: skip
        assert action.toolTip() and not action.icon().isNull()


def test_build_a_template_through_the_form_and_preview_it(make_window, project_file, qtbot):
    window = make_window()
    window.open_project(project_file)
    window.show()
    window.commands.add_template.trigger()
    name = window.catalogue.current_name
    assert window.document.peek(name).is_template

    name_edit = find(window, QLineEdit, "nameEdit")
    qtbot.keyClicks(name_edit.clear() or name_edit, "weather")
    uri_edit = find(window, QLineEdit, "uriEdit")
    uri_edit.clear()
    qtbot.keyClicks(uri_edit, "weather://{city}/today")
    mime = find(window, QComboBox, "mimeEdit")
    mime.setEditText("text/plain")
    window.editor.form.samples_edit.setPlainText("weather://Oslo/today")
    window.editor.flush()
    type_snippet(qtbot, window, "def read(uri, params):\n    return f\"{GREETING}, it is sunny in {params['city']}\"\n")
    qtbot.waitUntil(lambda: window.document.is_valid("weather"), timeout=WAIT_MS)
    spec = window.document.peek("weather")
    assert (spec.uri_template, spec.mime_type, spec.samples) == ("weather://{city}/today", "text/plain",
                                                                  ["weather://Oslo/today"])  # fmt: skip

    window.editor.preview.set_uri("weather://Oslo/today")
    qtbot.mouseClick(find(window, QPushButton, "previewButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "sunny in Oslo" in preview_text(window), timeout=WAIT_MS)
    summary = window.editor.preview.summary_label.text()
    assert "weather" in summary and "Oslo" in summary

    # A reader that raises: the preview shows the JSON-RPC error, as a client would get it.
    type_snippet(qtbot, window, "def read(uri, params):\n    raise LookupError('no forecast for ' + params['city'])\n")
    qtbot.waitUntil(lambda: window.document.peek("weather").reader.count("raise") == 1, timeout=WAIT_MS)
    window.commands.preview.trigger()
    qtbot.waitUntil(lambda: "no forecast for Oslo" in window.editor.preview.error_view.toPlainText(), timeout=WAIT_MS)
    assert "-32000" in window.editor.preview.error_view.toPlainText()


def test_a_syntax_error_is_shown_and_fails_reads_until_fixed(make_window, project_file, qtbot, connect):
    window = make_window()
    window.open_project(project_file)
    window.start_http("127.0.0.1", 0)
    qtbot.waitUntil(lambda: window.server_panel.is_running, timeout=WAIT_MS)
    client = connect(window.server_panel.url)

    def client_read() -> str:
        async def read(c):
            try:
                result = await c.read_resource("docs://readme", cache_mode="bypass")
            except MCPError as exc:
                return f"{exc.code} {exc.message}"
            return result.contents[0].text

        future = client.submit(read)
        qtbot.waitUntil(future.done, timeout=WAIT_MS)
        return future.result()

    window.catalogue.select("readme")
    type_snippet(qtbot, window, "def read(uri, params)\n    return 'broken'\n")
    qtbot.waitUntil(lambda: window.editor.snippet_editor.diagnostic is not None, timeout=WAIT_MS)
    assert window.editor.snippet_editor.diagnostic[0] == 1
    assert window.document.snippet_errors("readme") and not window.document.form_errors("readme")
    # A broken snippet is served as broken, never silently replaced by the old version.
    assert "readme" not in window.sync.held_back() and "readme" in window.sync.failing()
    qtbot.waitUntil(lambda: window.errors_label.text() == "1 with snippet errors (failing)", timeout=WAIT_MS)
    model = window.catalogue.resource_model
    assert model.index(model.row_of("readme"), 0).data(ERRORS_ROLE)  # the catalogue still marks it
    window.commands.preview.trigger()
    error_view = window.editor.preview.error_view
    qtbot.waitUntil(lambda: "-32000" in error_view.toPlainText(), timeout=WAIT_MS)
    assert "line 1" in error_view.toPlainText() and "syntax" in error_view.toPlainText().lower()
    answer = client_read()
    assert answer.startswith("-32000") and "line 1" in answer and "syntax" in answer.lower()

    # Fixing the snippet serves the new version at once.
    type_snippet(qtbot, window, "def read(uri, params):\n    return 'fixed ' + uri\n")
    qtbot.waitUntil(lambda: window.errors_label.text() == "", timeout=WAIT_MS)
    assert client_read() == "fixed docs://readme"
    window.commands.preview.trigger()
    qtbot.waitUntil(lambda: "fixed docs://readme" in preview_text(window), timeout=WAIT_MS)


def test_a_form_error_holds_the_declaration_back(make_window, project_file, qtbot):
    window = make_window()
    window.open_project(project_file)
    window.catalogue.select("readme")
    uri_edit = find(window, QLineEdit, "uriEdit")
    uri_edit.selectAll()
    qtbot.keyClicks(uri_edit, "not a uri")
    window.editor.flush()
    assert window.document.form_errors("readme")
    assert window.sync.held_back() == ["readme"]
    qtbot.waitUntil(lambda: window.errors_label.text() == "1 with errors (not served)", timeout=WAIT_MS)
    # The last valid declaration keeps serving.
    window.editor.preview.set_uri("docs://readme")
    window.commands.preview.trigger()
    qtbot.waitUntil(lambda: "hello from docs://readme" in preview_text(window), timeout=WAIT_MS)


def test_serve_over_http_subscribe_notify_and_watch_sessions(make_window, project_file, qtbot, connect):
    window = make_window()
    window.open_project(project_file)
    window.show()
    find(window, QSpinBox, "httpPort").setValue(0)
    qtbot.mouseClick(find(window, QPushButton, "startHttpButton"), Qt.MouseButton.LeftButton)
    status = find(window, QLabel, "serverStatus")
    qtbot.waitUntil(lambda: status.text().startswith("Serving http://127.0.0.1:"), timeout=WAIT_MS)
    url = window.server_panel.url
    assert url.endswith("/mcp") and url in status.text()
    assert find(window, QPushButton, "startHttpButton").text() == "Stop"

    client = connect(url)
    sessions = find(window, QTableView, "sessionsView")
    qtbot.waitUntil(lambda: sessions.model().rowCount() == 1, timeout=WAIT_MS)
    assert "1 session" in status.text()

    listed = client.submit(lambda c: c.list_resources(cursor=None, cache_mode="bypass"))
    qtbot.waitUntil(listed.done, timeout=WAIT_MS)
    assert [r.uri for r in listed.result().resources] == ["docs://readme"]
    subscribed = client.submit(lambda c: c.subscribe_resource("docs://readme"))
    qtbot.waitUntil(subscribed.done, timeout=WAIT_MS)
    subscribed.result()
    qtbot.waitUntil(lambda: "docs://readme" in sessions.model().index(0, 4).data(), timeout=WAIT_MS)

    notify_uri = find(window, QComboBox, "notifyUri")
    notify_uri.setEditText("docs://readme")
    button = find(window, QPushButton, "notifyUpdatedButton")
    assert button.isEnabled()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: ("notifications/resources/updated", {"uri": "docs://readme"}) in client.notifications,
                    timeout=WAIT_MS)  # fmt: skip
    # The same, to the selected session only.
    sessions.selectRow(0)
    qtbot.mouseClick(find(window, QPushButton, "notifySessionButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: client.methods().count("notifications/resources/updated") == 2, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: "1 recipient" in window.server_panel.notify_result.text(), timeout=WAIT_MS)
    qtbot.mouseClick(find(window, QPushButton, "notifyListChangedButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "notifications/resources/list_changed" in client.methods(), timeout=WAIT_MS)

    # The traffic log saw the client's requests.
    log = window.traffic_log
    qtbot.waitUntil(lambda: any(e.method == "resources/subscribe" for e in log.model.entries()), timeout=WAIT_MS)

    left = client.close()
    qtbot.waitUntil(left.done, timeout=WAIT_MS)
    client.join()
    qtbot.waitUntil(lambda: sessions.model().rowCount() == 0, timeout=WAIT_MS)
    qtbot.mouseClick(find(window, QPushButton, "startHttpButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: status.text() == "Stopped", timeout=WAIT_MS)


def test_edits_reach_a_connected_client_but_invalid_ones_do_not(make_window, project_file, qtbot, connect):
    window = make_window()
    window.open_project(project_file)
    window.start_http("127.0.0.1", 0)
    qtbot.waitUntil(lambda: window.server_panel.is_running, timeout=WAIT_MS)
    client = connect(window.server_panel.url)

    def titles():
        future = client.submit(lambda c: c.list_resources(cursor=None, cache_mode="bypass"))
        qtbot.waitUntil(future.done, timeout=WAIT_MS)
        return {r.name: r.title for r in future.result().resources}

    spec = window.document.spec("readme")
    spec.title = "Welcome"
    window.document.update_resource("readme", spec)
    assert titles() == {"readme": "Welcome"}
    spec = window.document.spec("readme")
    spec.title, spec.uri = "Broken", ""
    window.document.update_resource("readme", spec)
    assert window.document.errors("readme")
    assert titles() == {"readme": "Welcome"}
    added = window.document.add_resource(template=False)
    qtbot.waitUntil(lambda: added in titles(), timeout=WAIT_MS)


def test_save_and_reopen_losslessly(make_window, project_file, qtbot, tmp_path):
    window = make_window()
    window.open_project(project_file)
    window.document.set_prelude("GREETING = 'hej'\n")
    window.commands.add_resource.trigger()
    assert window.isWindowModified()
    target = tmp_path / "saved" / "copy.toml"
    assert window.save_as(target)
    assert not window.isWindowModified() and "copy.toml" in window.windowTitle()
    saved_text = dumps_project(window.document.project)

    again = make_window()
    assert again.open_project(target)
    assert dumps_project(again.document.project) == saved_text
    assert load_project(target).resources == window.document.project.resources
    assert str(target.resolve()) == again.settings.recent_files()[0]


def test_unsaved_changes_prompt_can_cancel_close_and_new(make_window, project_file):
    answers = [UnsavedChoice.CANCEL]
    window = make_window(ask_unsaved=lambda label: answers[0])
    window.open_project(project_file)
    window.show()
    window.commands.add_resource.trigger()
    assert not window.close() and window.isVisible()
    assert not window.new_project() and window.document.path == project_file
    answers[0] = UnsavedChoice.SAVE
    assert window.new_project()
    assert len(load_project(project_file).resources) == 3  # saved before starting anew
    assert window.document.names() == [] and window.document.path is None


def test_recover_after_a_crash(make_window, project_file, qtbot, tmp_path):
    crashed = make_window()
    crashed.open_project(project_file)
    crashed.commands.add_template.trigger()
    crashed.document.set_prelude("GREETING = 'recovered'\n")
    written = crashed.autosaver.save_now()
    assert written is not None and written.exists()
    lost_work = dumps_project(crashed.document.project)
    crashed.shutdown()  # the process "dies": no save, no clean close

    offers = []
    window = make_window(ask_restore=lambda candidate: offers.append(candidate) or True)
    assert window.open_project(project_file)
    assert len(offers) == 1 and offers[0].project_path == project_file
    assert window.isWindowModified()
    assert dumps_project(window.document.project) == lost_work
    assert window.save()
    assert RecoveryStore(tmp_path / "recovery").pending(project_file) is None
    assert "recovered" in project_file.read_text()


def test_window_layout_and_last_project_are_remembered(make_window, project_file, qtbot):
    window = make_window()
    window.open_project(project_file)
    window.show()
    window.commands.builder.trigger()
    window.commands.word_wrap.trigger()
    window.catalogue.select("ticket")
    window.editor.splitter.setSizes([300, 400, 320])
    window.main_splitter.setSizes([200, 1080])
    builder_width, catalogue_width = window.editor.splitter.sizes()[0], window.main_splitter.sizes()[0]
    window.show_page("traffic")
    assert window.close()
    again = make_window()
    assert again.settings.last_project() == str(project_file.resolve())
    again.open_initial(None)
    assert again.document.path == project_file.resolve() or again.document.path == project_file
    again.resize(1280, 800)  # the offscreen screen is smaller: restoreGeometry clamps the window to it
    again.show()
    assert again.current_page == "traffic" and again.traffic_log.isVisible()
    assert again.commands.builder.isChecked() and again.commands.word_wrap.isChecked()
    again.show_page("editor")
    again.catalogue.select("ticket")
    assert again.main_splitter.sizes()[0] == catalogue_width
    assert again.editor.splitter.sizes()[0] == builder_width


def test_preview_variables_are_completed_by_the_completion_snippet(make_window, project_file, qtbot):
    window = _completing_ticket_window(make_window, project_file)
    edit = window.editor.preview.variable_edit("id")
    assert edit is not None
    edit.clear()
    edit.setFocus()
    qtbot.keyClicks(edit, "10")
    model = edit.completer().model()
    qtbot.waitUntil(lambda: model.stringList() == ["1001", "1002"], timeout=WAIT_MS)
    assert window.editor.preview.uri == "tickets://10"


def test_untitled_work_is_offered_back_at_start_up(make_window, project_file, tmp_path):
    store = RecoveryStore(tmp_path / "recovery")
    text = project_file.read_text(encoding="utf-8")
    store.write(None, text)
    window = make_window(ask_restore=lambda candidate: candidate.project_path is None)
    window.open_initial(None)
    assert window.document.path is None and window.isWindowModified()
    assert window.document.names() == ["readme", "ticket"]
    assert window.save_as(tmp_path / "rescued.toml")
    assert store.pending(None) is None


def test_the_example_opens_untitled_when_nothing_else_is_known(make_window):
    window = make_window()
    window.open_initial(None)
    assert window.document.path is None and window.document.names()
    assert "(example)" in window.windowTitle() and not window.isWindowModified()


def test_a_busy_port_is_reported_and_the_panel_can_start_again(make_window, project_file, qtbot):
    import socket

    window = make_window()
    window.open_project(project_file)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        window.start_http("127.0.0.1", port)
        status = find(window, QLabel, "serverStatus")
        qtbot.waitUntil(lambda: status.text().startswith("Failed:"), timeout=WAIT_MS)
    button = find(window, QPushButton, "startHttpButton")
    assert button.isEnabled() and button.text() == "Start"
    assert window.server_panel.port_spin.isEnabled()


def test_dropping_a_project_file_opens_it(make_window, project_file, qtbot):
    from PySide6.QtCore import QMimeData, QPointF, QUrl
    from PySide6.QtGui import QDropEvent

    window = make_window()
    window.show()
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(project_file))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, data, Qt.MouseButton.NoButton,
                       Qt.KeyboardModifier.NoModifier)  # fmt: skip
    window.dropEvent(event)
    assert window.document.path == project_file and window.document.names() == ["readme", "ticket"]


def test_a_broken_project_file_is_reported_and_the_open_project_kept(make_window, project_file, tmp_path):
    window = make_window()
    window.open_project(project_file)
    broken = tmp_path / "broken.toml"
    broken.write_text("format = 1\n[[resources]]\nname = 'x'\nuri = \n")
    assert not window.open_project(broken)
    title, message = window.errors[-1]
    assert title == "Cannot open project" and "broken.toml:4" in message
    assert window.document.path == project_file and window.document.names() == ["readme", "ticket"]
    assert str(broken.resolve()) not in window.settings.recent_files()


def test_what_the_snippet_prints_appears_under_the_editor(make_window, project_file, qtbot):
    window = make_window()
    window.open_project(project_file)
    window.catalogue.select("readme")
    type_snippet(qtbot, window, "def read(uri, params):\n    print('looking up', uri)\n    return 'ok'\n")
    qtbot.waitUntil(lambda: "print" in window.document.peek("readme").reader, timeout=WAIT_MS)
    window.commands.preview.trigger()
    output = window.editor.output_view
    qtbot.waitUntil(lambda: "looking up docs://readme" in output.toPlainText(), timeout=WAIT_MS)


def test_snippet_output_is_one_block_per_read_with_time_and_uri(make_window, project_file, qtbot):
    window = make_window()
    window.open_project(project_file)
    window.catalogue.select("ticket")
    type_snippet(qtbot, window, "def read(uri, params):\n    print('reading', params['id'])\n    return {}\n")
    qtbot.waitUntil(lambda: "reading" in window.document.peek("ticket").reader, timeout=WAIT_MS)
    view = window.editor.output
    for number in ("7", "8"):
        window.editor.preview.set_uri(f"tickets://{number}")
        blocks = view.block_count
        window.commands.preview.trigger()
        qtbot.waitUntil(lambda blocks=blocks: view.block_count == blocks + 1, timeout=WAIT_MS)
    lines = view.text().splitlines()
    assert len(lines) == 4 and re.match(r"── \d\d:\d\d:\d\d\.\d{3}  tickets://7$", lines[0])
    assert lines[1:] == ["reading 7", lines[2], "reading 8"] and lines[2].endswith("tickets://8")


def test_snippet_output_shows_stdout_and_stderr_in_the_order_written(make_window, project_file, qtbot):
    window = make_window()
    window.open_project(project_file)
    window.catalogue.select("ticket")
    type_snippet(qtbot, window, "import sys\ndef read(uri, params):\n    print('out 1')\n"
                 "    print('err 2', file=sys.stderr)\n    print('out 3')\n    return {'id': params['id']}\n")
    qtbot.waitUntil(lambda: "err 2" in window.document.peek("ticket").reader, timeout=WAIT_MS)
    view = window.editor.output
    for number in ("7", "8"):
        window.editor.preview.set_uri(f"tickets://{number}")
        blocks = view.block_count
        window.commands.preview.trigger()
        qtbot.waitUntil(lambda blocks=blocks: view.block_count == blocks + 1, timeout=WAIT_MS)
    lines = view.text().splitlines()
    headers = [line for line in lines if line.startswith("──")]
    assert len(headers) == 2 and headers[0].endswith("tickets://7") and headers[1].endswith("tickets://8")
    assert re.match(r"── \d\d:\d\d:\d\d\.\d{3}  ", headers[0])
    first = lines[lines.index(headers[0]) + 1 : lines.index(headers[1])]
    assert first == ["out 1", "err 2", "out 3"]  # stdout and stderr in the order written


def test_announce_edits_tells_subscribers_as_soon_as_an_edit_is_applied(make_window, project_file, qtbot, connect):
    window = make_window()
    window.open_project(project_file)
    window.server_panel.announce_check.setChecked(True)
    assert window.controller.announce_edits
    window.start_http("127.0.0.1", 0)
    qtbot.waitUntil(lambda: window.server_panel.is_running, timeout=WAIT_MS)
    client = connect(window.server_panel.url)
    settled = client.submit(lambda c: c.list_resources(cursor=None, cache_mode="bypass"))
    qtbot.waitUntil(settled.done, timeout=WAIT_MS)
    subscribed = client.submit(lambda c: c.subscribe_resource("docs://readme"))
    qtbot.waitUntil(subscribed.done, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.sessions.subscribed_uris() == ["docs://readme"], timeout=WAIT_MS)

    window.catalogue.select("readme")
    type_snippet(qtbot, window, "def read(uri, params):\n    return 'edited'\n")
    qtbot.waitUntil(lambda: ("notifications/resources/updated", {"uri": "docs://readme"}) in client.notifications,
                    timeout=WAIT_MS)  # fmt: skip
    window.commands.add_resource.trigger()
    qtbot.waitUntil(lambda: "notifications/resources/list_changed" in client.methods(), timeout=WAIT_MS)


def _completing_ticket_window(make_window, project_file):
    window = make_window()
    window.open_project(project_file)
    spec = window.document.spec("ticket")
    spec.completions = {}  # a static list would take precedence over the snippet
    spec.complete = (
        "def complete(name, value, context):\n"
        "    return [t for t in ('1001', '1002', '2001') if t.startswith(value)]\n"
    )
    window.document.update_resource("ticket", spec)
    window.catalogue.select("ticket")
    window.show()
    return window


def test_picking_a_suggestion_closes_the_popup_for_good(make_window, project_file, qtbot):
    window = _completing_ticket_window(make_window, project_file)
    edit = window.editor.preview.variable_edit("id")
    edit.clear()
    edit.setFocus()
    qtbot.keyClicks(edit, "10")
    popup = edit.completer().popup()
    qtbot.waitUntil(lambda: edit.completer().model().stringList() == ["1001", "1002"], timeout=WAIT_MS)
    qtbot.waitUntil(popup.isVisible, timeout=WAIT_MS)
    qtbot.keyClick(popup, Qt.Key.Key_Down)
    qtbot.keyClick(popup, Qt.Key.Key_Return)
    assert edit.text() == "1001" and window.editor.preview.uri == "tickets://1001"
    # Every completion answer in flight has arrived: the popup stays closed over the picked value.
    qtbot.waitUntil(lambda: not window._completion_requests, timeout=WAIT_MS)
    qtbot.wait(50)
    assert not popup.isVisible()
    window.commands.preview.trigger()
    qtbot.waitUntil(lambda: '"1001"' in preview_text(window), timeout=WAIT_MS)
    assert not popup.isVisible()


def test_a_lone_suggestion_equal_to_the_text_opens_no_popup(make_window, project_file, qtbot):
    window = _completing_ticket_window(make_window, project_file)
    edit = window.editor.preview.variable_edit("id")
    edit.clear()
    edit.setFocus()
    qtbot.keyClicks(edit, "1002")
    model = edit.completer().model()
    qtbot.waitUntil(lambda: model.stringList() == ["1002"], timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not window._completion_requests, timeout=WAIT_MS)
    assert not edit.completer().popup().isVisible()


def test_notify_uri_follows_the_open_project(make_window, project_file, qtbot, tmp_path):
    window = make_window()
    window.open_project(project_file)
    notify_uri = find(window, QComboBox, "notifyUri")

    def offered():
        return [notify_uri.itemText(i) for i in range(notify_uri.count())]

    # Direct URIs and the templates' samples are offered.
    qtbot.waitUntil(lambda: offered() == ["docs://readme", "tickets://7"], timeout=WAIT_MS)
    assert notify_uri.currentText() == "docs://readme"
    other = load_project(project_file)
    other.resources = [replace(other.resources[1], name="order", uri_template="orders://{id}",
                               samples=["orders://1"])]  # fmt: skip
    other_file = save_project(other, tmp_path / "orders.toml")
    assert window.open_project(other_file)
    qtbot.waitUntil(lambda: offered() == ["orders://1"], timeout=WAIT_MS)
    assert notify_uri.currentText() == "orders://1"  # nothing of the previous project lingers


def test_a_refused_name_survives_looking_at_another_resource(make_window, project_file, qtbot):
    window = make_window()
    window.open_project(project_file)
    window.show()
    window.catalogue.select("ticket")
    window.commands.builder.trigger()  # View > Builder Form (Ctrl+B)
    name_edit = find(window, QLineEdit, "nameEdit")
    assert name_edit.isVisible()
    name_edit.selectAll()
    qtbot.keyClicks(name_edit, "readme")
    window.editor.flush()
    form_error = find(window, QLabel, "formError")
    assert "already named 'readme'" in form_error.text() and form_error.isVisible()
    assert window.document.names() == ["readme", "ticket"]  # refused, not applied

    window.catalogue.select("readme")
    assert name_edit.text() == "readme" and not form_error.isVisible()
    window.catalogue.select("ticket")
    assert name_edit.text() == "readme"  # what the user typed is back, with its error
    assert "already named 'readme'" in form_error.text() and form_error.isVisible()
    assert window.catalogue.current_name == "ticket"

    # Once the name is free, the draft is applied like any edit.
    name_edit.selectAll()
    qtbot.keyClicks(name_edit, "tickets")
    window.editor.flush()
    assert window.document.names() == ["readme", "tickets"] and not form_error.isVisible()


def test_a_new_templates_sample_follows_the_template_and_strays_are_flagged(make_window, project_file, qtbot):
    window = make_window()
    window.open_project(project_file)
    window.show()
    window.commands.add_template.trigger()
    name = window.catalogue.current_name
    form = window.editor.form
    assert form.isVisible()  # a new resource opens the builder: it needs a name and an address
    assert form.samples_edit.toPlainText() == f"example://{name}/id-1"
    uri_edit = find(window, QLineEdit, "uriEdit")
    uri_edit.selectAll()
    qtbot.keyClicks(uri_edit, "weather://{city}/{day}")
    window.editor.flush()
    assert form.samples_edit.toPlainText() == "weather://city-1/day-1"
    assert window.document.peek(name).samples == ["weather://city-1/day-1"]
    warning = find(window, QLabel, "samplesWarning")
    assert not warning.isVisible()

    # A sample the user wrote stays as written; one that does not match the template is flagged.
    form.samples_edit.setPlainText("weather://Oslo/today\nweather://Bergen")
    assert warning.isVisible() and "weather://Bergen" in warning.text() and "Oslo" not in warning.text()
    uri_edit.selectAll()
    qtbot.keyClicks(uri_edit, "weather://{city}")
    assert form.samples_edit.toPlainText() == "weather://Oslo/today\nweather://Bergen"
    assert "weather://Oslo/today" in warning.text() and "Bergen" not in warning.text()


def test_a_result_is_marked_stale_once_the_uri_or_snippet_changes(make_window, project_file, qtbot):
    window = make_window()
    window.open_project(project_file)
    window.show()
    window.catalogue.select("readme")
    preview = window.editor.preview
    stale = find(window, QLabel, "previewStale")
    window.commands.preview.trigger()
    qtbot.waitUntil(lambda: "hello from docs://readme" in preview_text(window), timeout=WAIT_MS)
    assert not stale.isVisible() and not preview.is_stale

    type_snippet(qtbot, window, "def read(uri, params):\n    return 'changed'\n")
    assert stale.isVisible() and "press Read" in stale.text()
    window.commands.preview.trigger()
    qtbot.waitUntil(lambda: "changed" in preview_text(window), timeout=WAIT_MS)
    assert not stale.isVisible()

    preview.set_uri("docs://other")
    assert stale.isVisible()
    preview.set_uri("docs://readme")  # back to what was read
    assert not stale.isVisible()
    window.document.set_prelude("GREETING = 'hej'\n")
    assert stale.isVisible()


def test_undoing_a_delete_selects_the_restored_resource(make_window, project_file, qtbot):
    window = make_window()
    window.open_project(project_file)
    window.show()
    window.catalogue.select("ticket")
    window.catalogue.delete_action.trigger()
    assert window.document.names() == ["readme"] and window.catalogue.current_name != "ticket"
    window.commands.undo.trigger()
    assert window.document.names() == ["readme", "ticket"]
    assert window.catalogue.current_name == "ticket" and window.editor.resource_name == "ticket"
    assert find(window, QLineEdit, "nameEdit").text() == "ticket"
    window.commands.redo.trigger()
    assert window.catalogue.current_name != "ticket"


def test_saving_with_a_broken_snippet_does_not_claim_it_is_unserved(make_window, project_file, qtbot):
    window = make_window()
    window.open_project(project_file)
    window.catalogue.select("readme")
    type_snippet(qtbot, window, "def read(uri, params)\n    return 'broken'\n")
    assert window.save()
    message = window.statusBar().currentMessage()
    assert "1 resource(s) still have errors: readme" in message and "not served" not in message


def test_selecting_a_resource_offers_its_uri_to_notify(make_window, project_file, qtbot):
    window = make_window()
    window.open_project(project_file)
    panel = window.server_panel
    qtbot.waitUntil(lambda: panel.notify_uri_text() == "docs://readme", timeout=15_000)
    window.catalogue.select("ticket")
    qtbot.waitUntil(lambda: panel.notify_uri_text() == "tickets://7", timeout=15_000)  # the template's sample
    window.catalogue.select("readme")
    qtbot.waitUntil(lambda: panel.notify_uri_text() == "docs://readme", timeout=15_000)


def test_add_as_test_records_the_read_with_its_snapshot_and_the_tests_page_runs_it(make_window, project_file, qtbot):
    window = make_window()
    window.open_project(project_file)
    window.show()
    window.catalogue.select("ticket")
    preview = window.editor.preview
    button = preview.findChild(QPushButton, "addTestButton")
    assert button is not None and not button.isEnabled()  # nothing read yet
    with qtbot.waitSignal(window.controller.preview_finished, timeout=WAIT_MS):
        preview.read()
    assert button.isEnabled()
    button.click()
    (test,) = window.document.project.tests
    assert test.uri == "tickets://7" and test.expect.resource == "ticket" and test.expect.snapshot
    assert test.expect.mime_type == "application/json"
    snapshots = project_file.with_name("desk.snapshots")
    assert any(snapshots.iterdir()), "the content is recorded as the test's snapshot"
    tests = window.tests_view
    assert tests.model.row_named("tickets://7") is not None
    assert window.document.is_dirty  # an added test is an unsaved change like any other
    assert window.save()
    assert [t.uri for t in load_project(project_file).tests] == ["tickets://7"]
    assert not window.document.is_dirty
    window.commands.page_actions["tests"].trigger()
    assert window.current_page == "tests"
    with qtbot.waitSignal(tests.run_finished, timeout=60_000) as finished:
        assert tests.run_all()
    passed, failed = finished.args
    assert failed == 0 and passed >= 1
    window.document.undo_stack.undo()  # the addition is one undo step
    assert window.document.project.tests == [] and tests.model.row_named("tickets://7") is None
    assert window.document.is_dirty
    window.document.undo_stack.redo()
    assert not window.document.is_dirty  # back to what was saved


def test_add_as_test_in_a_project_never_saved_says_to_save_first(make_window, qtbot):
    errors: list[tuple[str, str]] = []
    window = make_window(report_error=lambda title, message: errors.append((title, message)))
    window.new_project()
    name = window.document.add_resource(template=False)
    window.catalogue.select(name)
    preview = window.editor.preview
    with qtbot.waitSignal(window.controller.preview_finished, timeout=WAIT_MS):
        preview.read()
    preview.findChild(QPushButton, "addTestButton").click()
    assert window.document.project.tests == []
    assert errors and "save the project first" in errors[0][1]


def test_add_as_test_of_an_error_expects_its_code_and_needs_no_snapshot(make_window, qtbot):
    window = make_window()
    window.new_project()
    name = window.document.add_resource(template=False)
    window.catalogue.select(name)
    preview = window.editor.preview
    preview.set_uri("nowhere://at-all")
    with qtbot.waitSignal(window.controller.preview_finished, timeout=WAIT_MS) as finished:
        preview.read()
    assert finished.args[0].error_code == -32002
    preview.findChild(QPushButton, "addTestButton").click()
    (test,) = window.document.project.tests
    assert test.uri == "nowhere://at-all" and test.expect.error == -32002 and not test.expect.snapshot
    assert window.tests_view.model.row_named("nowhere://at-all") is not None
