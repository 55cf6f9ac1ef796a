"""EventPump: batches from any thread reach the GUI thread together, and traffic stays bounded."""

from __future__ import annotations

import threading
from typing import Any

from resources_qt.qt.pump import EventPump


def test_a_burst_arrives_as_one_batch_in_order(qtbot: Any) -> None:
    pump = EventPump(interval_ms=20)
    batches: list[tuple[list[Any], list[Any], list[Any]]] = []
    pump.drained.connect(lambda *batch: batches.append(batch))
    for i in range(200):  # no event processing in between: one batch
        pump.push_traffic(i)
    pump.push("opened")
    qtbot.waitUntil(lambda: bool(batches), timeout=5000)
    qtbot.wait(50)
    assert len(batches) == 1
    events, traffic, output = batches[0]
    assert events == ["opened"] and traffic == list(range(200)) and output == []


def test_pushes_from_another_thread_are_delivered(qtbot: Any) -> None:
    pump = EventPump(interval_ms=10)
    seen: list[Any] = []
    pump.drained.connect(lambda events, traffic, output: seen.extend(events + traffic + output))

    def produce() -> None:
        for i in range(500):
            pump.push_traffic(i)
        pump.push_output(("key", "text"))

    worker = threading.Thread(target=produce)
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: len(seen) == 501, timeout=5000)
    assert [x for x in seen if isinstance(x, int)] == list(range(500))  # order kept across batches
    assert seen.count(("key", "text")) == 1


def test_traffic_buffer_is_bounded(qtbot: Any) -> None:
    pump = EventPump(interval_ms=10, traffic_limit=100)
    traffic: list[Any] = []
    pump.drained.connect(lambda events, batch, output: traffic.extend(batch))
    for i in range(1000):
        pump.push_traffic(i)
    qtbot.waitUntil(lambda: bool(traffic), timeout=5000)
    assert traffic == list(range(900, 1000))
    assert pump.dropped_traffic == 900
