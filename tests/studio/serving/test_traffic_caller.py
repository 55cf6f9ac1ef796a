"""The traffic log names an authorized session by its client and who called (the token's subject), never the token."""

from __future__ import annotations

from datetime import UTC, datetime

from resources_qt.server.events import SessionInfo, Traffic


def test_the_traffic_sessions_are_named_by_client_and_caller(make_window, qtbot) -> None:
    window = make_window()
    info = SessionInfo(id="s-1", transport="http", client_name="claude", client_version="1.0",
                       protocol_version="2025-11-25", connected_at=datetime.now(UTC), subscriptions=frozenset(),
                       subject="alice", client_id="support-desk")  # fmt: skip
    window.controller.session_opened.emit(info)
    entry = Traffic(time=datetime.now(UTC), session_id="s-1", direction="in", method="resources/list",
                    message={"jsonrpc": "2.0", "id": 1, "method": "resources/list"})  # fmt: skip
    window.controller.traffic_logged.emit([entry])
    box = window.traffic_log.session_filter
    qtbot.waitUntil(lambda: box.findData("s-1") >= 0)
    assert box.itemText(box.findData("s-1")).startswith("claude · alice (support-desk) (")
