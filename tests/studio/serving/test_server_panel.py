"""The server panel asks for starts, stops and notifications, and follows the sessions it is shown."""

import json
import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from resources_qt.notifications import ListChanged, Updated
from resources_qt.server.events import SessionInfo
from studio.serving.client_config import client_configurations, server_key, studio_command
from studio.serving.server_panel import ServerPanel
from studio.serving.sessions_view import SessionsModel, connected_text, shown_text


def session(session_id, *, client="inspector", subscriptions=()):
    return SessionInfo(
        id=session_id,
        transport="http",
        client_name=client,
        client_version="1.2",
        protocol_version="2025-11-25",
        connected_at=datetime(2026, 1, 1, 9, 30, 5),
        subscriptions=frozenset(subscriptions),
    )


@pytest.fixture
def panel(qtbot):
    model = SessionsModel()
    widget = ServerPanel(model)
    qtbot.addWidget(widget)
    widget.set_capabilities(True, True)
    return widget, model


def test_start_button_asks_to_start_then_to_stop(panel, qtbot):
    widget, _ = panel
    widget.host_edit.setText("127.0.0.1")
    widget.port_spin.setValue(0)
    widget.token_edit.setText("s3cret")
    with qtbot.waitSignal(widget.start_requested, timeout=1000) as started:
        qtbot.mouseClick(widget.start_button, Qt.MouseButton.LeftButton)
    assert started.args == ["127.0.0.1", 0, "s3cret"]
    widget.set_running("http://127.0.0.1:5555/mcp")
    assert widget.start_button.text() == "Stop"
    assert not widget.port_spin.isEnabled() and not widget.subscriptions_check.isEnabled()
    with qtbot.waitSignal(widget.stop_requested, timeout=1000):
        qtbot.mouseClick(widget.start_button, Qt.MouseButton.LeftButton)
    widget.set_stopped()
    assert widget.start_button.text() == "Start" and widget.port_spin.isEnabled()


def test_copy_url_puts_the_url_on_the_clipboard(panel, qtbot):
    widget, _ = panel
    widget.set_running("http://127.0.0.1:5555/mcp")
    with qtbot.waitSignal(widget.url_copied, timeout=1000):
        widget.copy_url_button.click()
    assert QGuiApplication.clipboard().text() == "http://127.0.0.1:5555/mcp"


def test_sessions_table_follows_sessions_and_subscriptions(panel):
    _widget, model = panel
    model.add_session(session("s-1"))
    model.add_session(session("s-2", client="claude", subscriptions={"docs://a"}))
    assert model.rowCount() == 2
    assert model.index(1, 0).data() == "claude 1.2"
    assert model.index(1, 4).data() == "docs://a"
    model.add_subscription("s-1", "docs://b")
    assert model.index(0, 4).data() == "docs://b"
    model.remove_subscription("s-1", "docs://b")
    assert model.index(0, 4).data() == "—"
    model.remove_session("s-1")
    assert [row.id for row in model.rows()] == ["s-2"]


def test_notify_uri_offers_subscribed_then_direct_uris(panel):
    widget, model = panel
    widget.set_direct_uris(["docs://readme", "docs://a"])
    model.add_session(session("s-1", subscriptions={"docs://a", "tickets://7"}))
    items = [widget.notify_uri.itemText(i) for i in range(widget.notify_uri.count())]
    assert items == ["docs://a", "tickets://7", "docs://readme"]


def test_notify_buttons_emit_requests_only_while_running(panel, qtbot):
    widget, model = panel
    model.add_session(session("s-1", subscriptions={"docs://a"}))
    widget.notify_uri.setEditText("docs://a")
    assert not widget.notify_updated_button.isEnabled()
    widget.set_running("http://127.0.0.1:1/mcp")
    with qtbot.waitSignal(widget.notification_requested, timeout=1000) as updated:
        widget.notify_updated_button.click()
    assert updated.args == [Updated("docs://a")]
    with qtbot.waitSignal(widget.notification_requested, timeout=1000) as listed:
        widget.notify_list_button.click()
    assert listed.args == [ListChanged()]
    assert not widget.notify_session_button.isEnabled()
    widget.sessions_view.selectRow(0)
    with qtbot.waitSignal(widget.notification_requested, timeout=1000) as per_session:
        widget.notify_session_button.click()
    assert per_session.args == [Updated("docs://a", session_id="s-1")]
    widget.show_notification_result("notifications/resources/updated", "docs://a", 1)
    assert widget.notify_result.text() == "Sent updated for docs://a to 1 recipient"


def test_capability_switches_report_changes(panel, qtbot):
    widget, _ = panel
    with qtbot.waitSignal(widget.capabilities_changed, timeout=1000) as changed:
        widget.subscriptions_check.setChecked(False)
    assert changed.args == [True, False]
    assert not widget.notify_updated_button.isEnabled()


def test_client_configurations_cover_http_and_stdio(tmp_path):
    project = tmp_path / "desk.toml"
    configs = client_configurations(
        server_name="Support Desk", url="http://127.0.0.1:9/mcp", token="t0k", project_path=project
    )
    assert server_key("Support Desk") == "support-desk"
    http = next(text for label, text in configs.items() if label.startswith("HTTP · mcpServers"))
    assert '"url": "http://127.0.0.1:9/mcp"' in http and "Bearer t0k" in http
    stdio = json.loads(next(text for label, text in configs.items() if label.startswith("stdio · mcpServers")))
    entry = stdio["mcpServers"]["support-desk"]
    assert Path(entry["command"]).is_absolute() and entry["args"][-3:] == ["serve", str(project), "--stdio"]


def test_the_stdio_command_is_the_absolute_console_script_of_this_install():
    command = studio_command()
    assert Path(command[0]).is_absolute() and Path(command[0]).exists()
    assert command == [str(Path(sys.executable).absolute().parent / "resource-studio")] or command[1:] == [
        "-m",
        "studio",
    ]


def test_a_pasted_stdio_config_starts_without_the_venv_on_path(tmp_path):
    project = tmp_path / "desk.toml"
    project.write_text('format = 1\n[server]\nname = "Desk"\n', encoding="utf-8")
    configs = client_configurations(server_name="Desk", url=None, token=None, project_path=project)
    entry = json.loads(configs["stdio · mcpServers (Claude Desktop)"])["mcpServers"]["desk"]
    # What a client does with the config: run the command with its own (venv-less) PATH.
    environment = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        [entry["command"], *entry["args"][:-1], "--help"], check=False, env=environment, capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")


def test_http_configs_use_the_port_in_the_box_until_the_server_runs(panel):
    widget, _ = panel
    widget.client_config.update_config(server_name="Desk", url=None, token=None, project_path=None)
    widget.port_spin.setValue(9123)
    assert '"url": "http://127.0.0.1:9123/mcp"' in widget.client_config.current_text()
    widget.host_edit.setText("::1")
    assert '"url": "http://[::1]:9123/mcp"' in widget.client_config.current_text()
    widget.client_config.update_config(
        server_name="Desk", url="http://127.0.0.1:5555/mcp", token=None, project_path=None
    )
    assert '"url": "http://127.0.0.1:5555/mcp"' in widget.client_config.current_text()


def test_notify_uri_follows_the_project_until_the_user_types(panel, qtbot):
    widget, _ = panel
    widget.set_direct_uris(["docs://readme", "docs://config"], samples=["tickets://ticket-1"])
    assert widget.notify_uri.currentText() == "docs://readme"
    widget.set_current_uri("tickets://ticket-1")
    assert widget.notify_uri.currentText() == "tickets://ticket-1"
    # The resource's address is edited: the box follows.
    widget.set_direct_uris(["docs://readme", "docs://config"], samples=["tickets://id-1"])
    widget.set_current_uri("tickets://id-1")
    assert widget.notify_uri.currentText() == "tickets://id-1"
    # A deleted default URI is dropped.
    widget.set_direct_uris(["docs://config"])
    assert widget.notify_uri.currentText() == "docs://config"
    # A URI picked from the list is kept while offered, then dropped when deleted.
    widget.set_direct_uris(["docs://config", "docs://faq"])
    widget.notify_uri.setCurrentIndex(1)
    widget.notify_uri.activated.emit(1)
    widget.set_current_uri("docs://config")
    assert widget.notify_uri.currentText() == "docs://faq"
    widget.set_direct_uris(["docs://config"])
    assert widget.notify_uri.currentText() == "docs://config"
    # Typed text is the user's own and stays.
    line = widget.notify_uri.lineEdit()
    line.selectAll()
    qtbot.keyClicks(line, "custom://mine")
    widget.set_direct_uris(["docs://other"])
    widget.set_current_uri("docs://other")
    assert widget.notify_uri.currentText() == "custom://mine"
    widget.set_direct_uris(["docs://other"], reset=True)
    assert widget.notify_uri.currentText() == "docs://other"


def test_notify_uri_follows_an_edited_address_without_being_told(panel):
    widget, _ = panel
    widget.set_direct_uris(["docs://readme", "docs://config"], samples=["tickets://id-1"])
    assert widget.notify_uri.currentText() == "docs://readme"
    # The user edits a template's address in the form: its default sample changes.
    widget.set_direct_uris(["docs://readme", "docs://config"], samples=["issues://id-1"])
    assert widget.notify_uri.currentText() == "issues://id-1"
    widget.set_direct_uris(["docs://readme", "docs://settings"], samples=["issues://id-1"])
    assert widget.notify_uri.currentText() == "docs://settings"


def test_disabled_notify_buttons_say_why_inline(panel, qtbot):
    widget, model = panel
    widget.show()
    widget.set_direct_uris(["docs://readme"])
    assert not widget.notify_updated_button.isEnabled()
    assert widget.notify_hint.isVisible() and "Start the server first" in widget.notify_hint.text()
    widget.set_capabilities(True, False)
    widget.set_running("http://127.0.0.1:1/mcp")
    assert not widget.notify_updated_button.isEnabled() and widget.notify_list_button.isEnabled()
    assert "turn on Subscriptions in Project settings" in widget.notify_hint.text()
    widget.set_capabilities(False, True)
    assert widget.notify_updated_button.isEnabled() and not widget.notify_list_button.isEnabled()
    assert "turn on Notifications in Project settings" in widget.notify_hint.text()
    widget.set_capabilities(True, True)
    model.add_session(session("s-1"))
    assert "Select a session" in widget.notify_hint.text()
    widget.sessions_view.selectRow(0)
    assert widget.notify_session_button.isEnabled() and not widget.notify_hint.isVisible()


def test_the_panel_stacks_its_sections_for_a_side_dock(panel):
    widget, _ = panel
    assert not widget.is_stacked
    widget.set_stacked(True)
    assert widget.is_stacked
    wide = widget.minimumSizeHint().width()
    widget.set_stacked(False)
    assert widget.minimumSizeHint().width() > wide


def test_notify_uri_also_offers_template_samples(panel):
    widget, model = panel
    widget.set_direct_uris(["docs://readme"], samples=["tickets://7", "docs://readme"])
    model.add_session(session("s-1", subscriptions={"crm://customers/42/profile"}))
    items = [widget.notify_uri.itemText(i) for i in range(widget.notify_uri.count())]
    assert items == ["crm://customers/42/profile", "docs://readme", "tickets://7"]


def test_connected_shows_local_time_and_age(panel):
    _widget, model = panel
    started = datetime.now(UTC) - timedelta(seconds=150)
    model.add_session(replace(session("s-1"), connected_at=started))
    shown = model.index(0, 3).data()
    assert shown == f"{started.astimezone():%H:%M:%S} (2 min ago)"
    later = started + timedelta(hours=1, minutes=5, seconds=10)
    assert connected_text(started, later).endswith("(1 h 5 min ago)")
    assert connected_text(started, started).endswith("(just now)")


def test_the_connected_column_fits_its_text(panel):
    widget, model = panel
    model.add_session(replace(session("s-1"), connected_at=datetime.now(UTC) - timedelta(minutes=42)))
    view = widget.sessions_view
    text = model.index(0, 3).data()
    assert view.columnWidth(3) >= view.fontMetrics().horizontalAdvance(text) + 8


def test_client_strings_are_shown_escaped(panel):
    _widget, model = panel
    forged = "evil\x1b[2J\x1b[31mclient\nFAKE LOG LINE\u200b"
    model.add_session(session("s-1", client=forged, subscriptions={"docs://a\x07b", "x://" + "y" * 9000}))
    shown = model.index(0, 0).data()
    assert "\x1b" not in shown and "\n" not in shown and "\u200b" not in shown
    assert shown.startswith("evil\\x1b[2J\\x1b[31mclient\\nFAKE LOG LINE\\u200b")
    subscriptions = model.index(0, 4).data()
    assert "\x07" not in subscriptions and "docs://a\\x07b" in subscriptions and len(subscriptions) < 600
    tip = model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert "\x1b" not in tip and "docs://a\\x07b" in tip
    # The model keeps what the client sent: a per-session send uses the real URI.
    assert "docs://a\x07b" in model.rows()[0].subscriptions
    assert shown_text("plain://uri") == "plain://uri"


def test_endpoint_token_and_notify_uri_are_offered_without_reaching_into_fields(panel, qtbot):
    widget, _ = panel
    widget.set_endpoint("", 9000)
    assert widget.endpoint() == ("127.0.0.1", 9000, "")  # an empty host means loopback, as Start asks
    with qtbot.waitSignal(widget.token_changed, timeout=1000) as changed:
        widget.token_edit.setText(" tok ")
    assert changed.args == ["tok"]
    assert widget.endpoint() == ("127.0.0.1", 9000, "tok")
    widget.notify_uri.setEditText("  docs://a ")
    assert widget.notify_uri_text() == "docs://a"
    widget.update_client_config(server_name="desk", url="http://127.0.0.1:9000/mcp", project_path=None)
    assert "Bearer tok" in widget.client_config.text.toPlainText()


def test_listen_streams_are_marked_in_the_transport_column(panel):
    _, model = panel
    model.add_session(replace(session("l-1"), kind="listen"))
    (row,) = model.rows()
    assert row.transport == "http (listen)" and row.client == "inspector 1.2"


def test_stdio_alone_enables_notifications_and_fixes_the_whole_server_settings(panel):
    widget, _ = panel
    widget.notify_uri.setEditText("docs://readme")
    assert not widget.notify_updated_button.isEnabled()
    widget.set_serving(["stdio"])
    assert widget.is_serving and not widget.is_running and widget.start_button.text() == "Start"
    assert widget.notify_updated_button.isEnabled() and widget.notify_list_button.isEnabled()
    # HTTP's own fields stay editable (Start adds HTTP); capabilities and the bus are the server's.
    assert widget.host_edit.isEnabled() and widget.port_spin.isEnabled()
    assert not widget.bus_edit.isEnabled() and not widget.notifications_check.isEnabled()
    assert "Start adds HTTP" in widget.transports_label.text()
    widget.set_running("http://127.0.0.1:8765/mcp")
    widget.set_serving(["stdio", "http"])
    assert "keeps serving when HTTP stops" in widget.transports_label.text() and not widget.host_edit.isEnabled()
    widget.set_stopped()
    widget.set_serving([])
    assert not widget.notify_updated_button.isEnabled() and widget.bus_edit.isEnabled()
    assert not widget.transports_label.isVisibleTo(widget)
    assert widget.url_label.text() == "Not serving"


def test_the_url_line_says_http_is_not_started_while_stdio_serves(panel):
    widget, _ = panel
    widget.set_serving(["stdio"])
    assert widget.url_label.text() == "HTTP not started"
    widget.set_stopped("Port 8765 on 127.0.0.1 is already in use")
    assert widget.url_label.text() == "Port 8765 on 127.0.0.1 is already in use"  # a failure stays shown


def test_the_sessions_table_names_who_called_an_authorized_server_never_the_token(panel):
    _widget, model = panel
    info = session("s-9", client="claude")
    model.add_session(replace(info, subject="alice", client_id="support-desk"))
    model.add_session(session("s-10", client="inspector"))
    shown = [model.index(row, 0).data() for row in range(model.rowCount())]
    assert shown == ["claude 1.2 · alice (support-desk)", "inspector 1.2"]
