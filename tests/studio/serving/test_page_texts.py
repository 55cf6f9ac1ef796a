"""The server and traffic pages through the real window with a real SDK client: the notify row stays under the
pointer, and no text is cut without a way to read it (sessions, traffic methods, the message detail)."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError
from PySide6.QtCore import QPoint, Qt

from resources_qt.server.events import SessionInfo
from studio.look.elided_label import ElidedLabel
from studio.serving.sessions_view import SessionsModel
from studio.serving.traffic_log import TrafficModel
from studio.shell.project_files import bundled_example

WAIT_MS = 15_000

# resources/subscribe is deprecated at 2026-07-28; the legacy client uses it on purpose.
pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


def _serving_example(make_window, qtbot, connect, size=(1280, 800)):
    window = make_window()
    example = bundled_example()
    assert example is not None and window.open_example(example)
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    window.start_http("127.0.0.1", 0)
    qtbot.waitUntil(lambda: window.server_panel.is_running, timeout=WAIT_MS)
    client = connect(window.server_panel.url)
    qtbot.waitUntil(lambda: window.sessions.rowCount() == 1, timeout=WAIT_MS)
    return window, client


def _run(qtbot, client, job):
    done = client.submit(job)
    qtbot.waitUntil(done.done, timeout=WAIT_MS)
    return done.result()


def test_the_notify_row_stays_put_when_a_session_is_selected_and_updated_is_sent(make_window, qtbot, connect):
    window, client = _serving_example(make_window, qtbot, connect)
    panel = window.server_panel
    uri = "docs://support-desk/README.md"
    _run(qtbot, client, lambda c: c.subscribe_resource(uri))
    qtbot.waitUntil(lambda: uri in window.sessions.subscribed_uris(), timeout=WAIT_MS)
    window.show_page("server")
    panel.notify_uri.setEditText(uri)
    button = panel.notify_updated_button
    qtbot.waitUntil(button.isEnabled)

    def row_top() -> int:
        return button.mapTo(window, QPoint(0, 0)).y()

    qtbot.waitUntil(panel.notify_hint.isVisible)  # "Select a session…"
    before = row_top()
    panel.sessions_view.selectRow(0)
    qtbot.waitUntil(lambda: not panel.notify_hint.isVisible())
    qtbot.wait(20)  # the layout settles (a move would show now)
    assert row_top() == before, "selecting a session moved the notify row"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "1 recipient" in panel.notify_result.text(), timeout=WAIT_MS)
    qtbot.wait(20)
    assert row_top() == before, "the result line moved the notify row"


def test_a_long_result_line_is_cut_with_the_whole_in_its_tooltip(qtbot):
    label = ElidedLabel()
    qtbot.addWidget(label)
    label.resize(200, 30)
    label.show()
    short_height = label.sizeHint().height()
    label.setText("Sent updated for crm://customers/" + "9" * 200 + "/profile to 1 recipient")
    assert label.is_elided() and label.shown_text().endswith("…")
    assert label.toolTip() == label.text() and label.sizeHint().height() == short_height
    label.resize(2000, 30)
    qtbot.waitUntil(lambda: not label.is_elided())
    assert label.toolTip() == ""


def test_a_sessions_cut_client_name_and_subscriptions_read_whole_in_their_tooltips(make_window, qtbot, connect):
    window, client = _serving_example(make_window, qtbot, connect)
    uris = [f"crm://customers/{number}/profile" for number in range(40, 52)]
    for uri in uris:
        _run(qtbot, client, lambda c, uri=uri: c.subscribe_resource(uri))
    model, view = window.sessions, window.server_panel.sessions_view
    column = SessionsModel.COLUMN_SUBSCRIPTIONS
    qtbot.waitUntil(lambda: len(model.rows()[0].subscriptions) == len(uris), timeout=WAIT_MS)
    window.show_page("server")
    cell = model.index(0, column)
    shown = str(cell.data())
    assert view.fontMetrics().horizontalAdvance(shown) > view.columnWidth(column)  # cut on screen
    tip = str(cell.data(Qt.ItemDataRole.ToolTipRole))
    assert tip.startswith(f"{len(uris)} subscriptions:") and all(uri in tip for uri in uris)

    # A longer client name: its column grows to it; a name past reason is cut, whole in the cell's tooltip.
    for session_id, name in (("s-2", "mcp-inspector-desktop"), ("s-3", "a-client-" + "with-a-long-name-" * 6)):
        model.add_session(SessionInfo(id=session_id, transport="http", client_name=name, client_version="12.3.4",
                                      protocol_version="2025-11-25", connected_at=None))  # fmt: skip
    texts = [str(model.index(row, 0).data()) for row in (1, 2)]
    assert view.columnWidth(0) >= view.fontMetrics().horizontalAdvance(texts[0])
    assert view.columnWidth(0) < view.fontMetrics().horizontalAdvance(texts[1])
    assert str(model.index(2, 0).data(Qt.ItemDataRole.ToolTipRole)).startswith(texts[1] + "\n")


def test_the_traffic_method_column_fits_its_methods_and_a_long_message_wraps(make_window, qtbot, connect):
    window, client = _serving_example(make_window, qtbot, connect)
    log = window.traffic_log
    long_uri = "crm://customers/" + "7" * 400 + "/profile"
    async def read(c):
        try:
            await c.read_resource(long_uri)
        except MCPError as exc:  # no such customer: the request is what is looked at
            return exc

    _run(qtbot, client, read)
    window.server_panel.notify_list_button.click()  # notifications/resources/list_changed: the longest method
    qtbot.waitUntil(lambda: "notifications/resources/list_changed" in client.methods(), timeout=WAIT_MS)
    window.show_page("traffic")
    qtbot.waitUntil(lambda: any(e.method == "notifications/resources/list_changed" for e in log.model.entries()),
                    timeout=WAIT_MS)  # fmt: skip
    metrics = log.table.fontMetrics()
    methods = {entry.method for entry in log.model.entries() if entry.method}
    widest = max(metrics.horizontalAdvance(method) for method in methods)
    assert log.table.columnWidth(TrafficModel.COLUMN_METHOD) > widest

    request = next(row for row in range(log.proxy.rowCount())
                   if long_uri in str(log.proxy.index(row, 0).data(TrafficModel.EntryRole).message))  # fmt: skip
    log.table.selectRow(request)
    detail = log.detail
    qtbot.waitUntil(lambda: "7777" in detail.toPlainText())
    qtbot.waitUntil(lambda: detail.document().size().width() <= detail.viewport().width() + 1)
    assert detail.horizontalScrollBar().maximum() == 0, "the message runs out of sight sideways"
    assert long_uri in detail.toPlainText().replace("\n", "").replace("\u2028", "")
