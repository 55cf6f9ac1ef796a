"""The Server page's live charts: a real window serving real reads, charted from the engine's counters."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QApplication

from resources_qt.qt.metrics_feed import MetricsSample, quantile_ms
from studio.serving.metrics_charts import MetricsCharts

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

WAIT_MS = 20_000
README = "docs://readme"


def _read(client, uri: str) -> None:
    client.submit(lambda c: c.read_resource(uri, cache_mode="bypass")).result(timeout=15)


def test_reads_and_errors_are_charted_and_a_resource_shows_its_own(make_window, connect, qtbot, project_file: Path):
    window = make_window()
    assert window.open_project(project_file)
    panel, controller = window.server_panel, window.controller
    charts = panel.metrics_charts
    panel.set_endpoint("127.0.0.1", 0)
    with qtbot.waitSignal(controller.server_started, timeout=WAIT_MS) as started:
        qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    client = connect(started.args[0])
    qtbot.waitUntil(lambda: len(charts.rate_chart.samples) >= 1, timeout=WAIT_MS)  # the feed runs while serving
    for _ in range(5):
        _read(client, README)
    _read(client, "tickets://7")
    with pytest.raises(MCPError):
        _read(client, "nothing://here")

    def charted() -> tuple[int, int]:
        samples = list(charts.rate_chart.samples)
        return sum(s.reads for s in samples), sum(s.errors.get("not_found", 0) for s in samples)

    qtbot.waitUntil(lambda: charted() == (7, 1), timeout=WAIT_MS)
    by_resource: dict[str, int] = {}
    for sample in charts.rate_chart.samples:
        for name, part in sample.by_resource.items():
            by_resource[name] = by_resource.get(name, 0) + part.reads
    assert by_resource == {"readme": 5, "ticket": 1, "": 1}
    busy = next(s for s in charts.latency_chart.samples if s.reads)
    assert busy.p50_ms is not None and 0 < busy.p50_ms <= (busy.p99_ms or 0)
    # The window opens on its first resource: the charts show that resource's own numbers.
    assert charts.resource == "readme" and charts.title() == "Reads of readme"
    assert "5 reads and 0 errors" in charts.summary.text()

    # Selecting another resource in the catalogue: the charts follow it.
    assert window.catalogue.select("ticket")
    qtbot.waitUntil(lambda: charts.resource == "ticket", timeout=WAIT_MS)
    assert charts.title() == "Reads of ticket"
    assert sum(charts._reads(s)[0] * s.seconds for s in charts.rate_chart.samples) == pytest.approx(1, abs=0.01)
    assert "1 reads and 0 errors" in charts.summary.text()

    # A chart's second takes the traffic log to that second's messages.
    charts.rate_chart.resize(600, 120)
    spike = max(range(len(charts.rate_chart.samples)), key=lambda i: charts.rate_chart.samples[i].reads)
    plot = charts.rate_chart._plot()
    step = plot.width() / 300
    x = plot.right() - step * (len(charts.rate_chart.samples) - spike) + step / 2
    with qtbot.waitSignal(charts.second_clicked, timeout=WAIT_MS) as clicked:
        qtbot.mouseClick(charts.rate_chart, Qt.MouseButton.LeftButton, pos=QPointF(x, plot.center().y()).toPoint())
    clicked_sample = charts.rate_chart.samples[spike]
    assert clicked.args[0] == clicked_sample.time - clicked_sample.seconds
    log = window.traffic_log
    selected = log.table.selectionModel().selectedRows()
    assert selected, "the traffic log selected nothing"
    entry = selected[0].data(log.model.EntryRole)
    assert int(clicked.args[0]) <= entry.time.timestamp() <= clicked_sample.time
    QApplication.processEvents()


def test_latency_quantiles_from_histogram_buckets() -> None:
    buckets = (0.001, 0.01, 0.1)
    assert quantile_ms(buckets, [0, 0, 0, 0], 0.5) is None
    assert quantile_ms(buckets, [0, 10, 10, 10], 0.5) == pytest.approx(5.5)  # halfway through 1-10 ms
    assert quantile_ms(buckets, [0, 0, 0, 4], 0.99) == pytest.approx(100.0)  # past the last bound: that bound
    assert quantile_ms(buckets, [10, 10, 10, 10], 0.99) == pytest.approx(0.99)


def test_every_chart_paints_its_samples(qtbot) -> None:
    """Painted, not only fed: a one-series chart once indexed a second colour and crashed the grab."""
    charts = MetricsCharts()
    qtbot.addWidget(charts)
    charts.resize(900, 200)
    for second in range(3):
        charts.add_sample(MetricsSample(time=1_000.0 + second, seconds=1.0, reads=10 + second,
                                        errors={"error": 1}, p50_ms=2.0, p99_ms=9.0, by_resource={}))
    for chart in (charts.rate_chart, charts.latency_chart, charts.error_chart):
        assert not chart.grab().isNull()
