"""The traffic log keeps a bounded window of messages, filters them and exports them as JSON lines."""

import json
from datetime import datetime, timedelta

from PySide6.QtCore import QModelIndex

from resources_qt.server.events import TrafficEntry
from studio.serving.traffic_log import TrafficLog, TrafficModel

START = datetime(2026, 1, 1, 12, 0, 0)


def entries(count, *, session="session-a", method="resources/read", start=0):
    return [
        TrafficEntry(
            time=START + timedelta(milliseconds=i),
            session_id=session,
            direction="in" if i % 2 == 0 else "out",
            method=method,
            message={"jsonrpc": "2.0", "id": i, "method": method, "params": {"uri": f"test://{i}"}},
        )
        for i in range(start, start + count)
    ]


def test_model_is_a_ring_buffer_that_drops_the_oldest_rows():
    model = TrafficModel(capacity=100)
    inserts = []
    model.rowsInserted.connect(lambda parent, first, last: inserts.append((first, last)))
    for chunk in range(5):
        model.append_batch(entries(40, start=chunk * 40))
    assert model.rowCount() == 100
    assert [e.message["id"] for e in model.entries()] == list(range(100, 200))
    assert len(inserts) == 5  # one insert notification per batch, not per row


def test_a_batch_larger_than_the_capacity_keeps_its_newest_rows():
    model = TrafficModel(capacity=10)
    model.append_batch(entries(25))
    assert [e.message["id"] for e in model.entries()] == list(range(15, 25))


def test_rows_show_time_session_direction_method_and_a_summary():
    model = TrafficModel()
    model.append_batch(entries(2, session="0123456789abcdef"))
    row = [model.index(0, c).data() for c in range(model.columnCount())]
    assert row == ["12:00:00.000", "01234567", "←", "resources/read", "uri=test://0"]
    assert model.index(1, 2).data() == "→"
    assert model.rowCount(model.index(0, 0)) == 0 and model.rowCount(QModelIndex()) == 2


def test_filters_by_session_and_method(qtbot):
    log = TrafficLog()
    qtbot.addWidget(log)
    log.add_entries(entries(10, session="alpha-session") + entries(6, session="beta-session", method="resources/list"))
    assert log.proxy.rowCount() == 16
    beta = log.session_filter.findData("beta-session")
    assert beta > 0
    log.session_filter.setCurrentIndex(beta)
    assert log.proxy.rowCount() == 6
    log.session_filter.setCurrentIndex(0)
    log.method_filter.setText("read")
    assert log.proxy.rowCount() == 10
    assert "10 of 16" in log.count_label.text()


def test_selecting_a_row_shows_the_message_pretty_printed(qtbot):
    log = TrafficLog()
    qtbot.addWidget(log)
    log.add_entries(entries(3))
    log.table.selectRow(1)
    text = log.detail.toPlainText()
    assert '"uri": "test://1"' in text
    assert "sent to session session-a" in text


def test_pause_holds_messages_until_resumed_and_clear_empties(qtbot):
    log = TrafficLog()
    qtbot.addWidget(log)
    log.add_entries(entries(2))
    log.pause_button.setChecked(True)
    log.add_entries(entries(5, start=2))
    assert log.model.rowCount() == 2 and "5 held" in log.count_label.text()
    log.pause_button.setChecked(False)
    assert log.model.rowCount() == 7
    log.clear_button.click()
    assert log.model.rowCount() == 0


def test_export_writes_the_shown_messages_as_json_lines(qtbot, tmp_path):
    log = TrafficLog()
    qtbot.addWidget(log)
    log.add_entries(entries(4) + entries(3, method="resources/subscribe", start=4))
    log.method_filter.setText("subscribe")
    target = tmp_path / "traffic.jsonl"
    with qtbot.waitSignal(log.exported, timeout=2000):
        assert log.export_jsonl(target) == 3
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    assert [line["message"]["id"] for line in lines] == [4, 5, 6]
    assert lines[0]["session"] == "session-a" and lines[0]["method"] == "resources/subscribe"
    assert lines[0]["time"] == (START + timedelta(milliseconds=4)).isoformat()
