"""Live charts of the server's reads: reads per second, p50/p99 latency and errors by kind, painted from samples."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from datetime import datetime

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal, Slot
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QGroupBox, QHBoxLayout, QLabel, QSizePolicy, QToolTip, QVBoxLayout, QWidget

from resources_qt.qt.metrics_feed import ERROR_OUTCOMES, MetricsSample, ResourceSample
from studio.look.colours import blend
from studio.look.theme import status_colors

__all__ = ["HISTORY", "MetricsCharts", "SampleChart"]

HISTORY = 300
"""Samples kept and drawn: five minutes at one a second."""

Series = Callable[[MetricsSample], Sequence[float]]


class SampleChart(QWidget):
    """One chart over the kept samples: lines (or stacked bars) of values `series(sample)` picks.

    Colours come from the palette (and the theme's status colours for errors). Hovering shows that second's
    numbers; clicking one emits `second_clicked(time)`.

    Signals:
        second_clicked(float time): the user clicked a sample; `time` is the wall-clock start of its interval.
    """

    second_clicked = Signal(float)

    def __init__(
        self, title: str, names: Sequence[str], series: Series, *, bars: bool = False, unit: str = "",
        parent: QWidget | None = None,
    ) -> None:  # fmt: skip
        super().__init__(parent)
        self.title, self.names, self.unit = title, tuple(names), unit
        self._series, self._bars = series, bars
        self.samples: deque[MetricsSample] = deque(maxlen=HISTORY)
        self.setMinimumHeight(70)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)  # the page's room is theirs
        self.setMouseTracking(True)
        self.setAccessibleName(title)

    def sizeHint(self) -> QSize:
        return QSize(320, 90)

    def set_series(self, series: Series) -> None:
        self._series = series
        self.update()

    def add(self, sample: MetricsSample) -> None:
        self.samples.append(sample)
        self.update()

    def values(self) -> list[Sequence[float]]:
        return [self._series(s) for s in self.samples]

    def _colours(self) -> list[QColor]:
        palette = self.palette()
        if self._bars:
            status = status_colors(palette)
            return [status.warning_text, status.error_text, blend(status.error_text, palette.color(
                QPalette.ColorRole.Text), amount=0.4), status.muted_text][: len(self.names)]  # fmt: skip
        highlight = palette.color(QPalette.ColorRole.Highlight)
        return [highlight, blend(highlight, palette.color(QPalette.ColorRole.Text), amount=0.5)][: len(self.names)]

    def _plot(self) -> QRectF:
        return QRectF(self.rect()).adjusted(4, 16, -4, -4)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        try:
            self._paint(painter)
        finally:
            painter.end()  # an active painter left behind by an exception crashes the backing store

    def _paint(self, painter: QPainter) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        plot = self._plot()
        painter.fillRect(plot, palette.color(QPalette.ColorRole.Base))
        painter.setPen(QPen(palette.color(QPalette.ColorRole.Mid)))
        painter.drawRect(plot)
        values = self.values()
        peak = max((sum(v) if self._bars else max(v, default=0.0) for v in values), default=0.0) or 1.0
        painter.setPen(palette.color(QPalette.ColorRole.WindowText))
        painter.drawText(QPointF(4, 12), f"{self.title} (max {peak:.4g}{self.unit})")
        step = plot.width() / HISTORY
        left = plot.right() - step * len(values)
        colours = self._colours()
        for index, colour in enumerate(colours):
            if self._bars:
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(colour)
                for i, v in enumerate(values):
                    below = sum(v[:index])
                    top = plot.bottom() - plot.height() * (below + v[index]) / peak
                    bottom = plot.bottom() - plot.height() * below / peak
                    if v[index] > 0:
                        painter.drawRect(QRectF(left + i * step, top, max(step, 1.0), bottom - top))
                continue
            painter.setPen(QPen(colour, 1.5))
            points = [QPointF(left + (i + 0.5) * step, plot.bottom() - plot.height() * v[index] / peak)
                      for i, v in enumerate(values)]  # fmt: skip
            if len(points) > 1:
                painter.drawPolyline(points)

    def sample_at(self, x: float) -> MetricsSample | None:
        plot = self._plot()
        step = plot.width() / HISTORY
        index = int((x - (plot.right() - step * len(self.samples))) // step)
        return self.samples[index] if 0 <= index < len(self.samples) else None

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        sample = self.sample_at(event.position().x())
        if sample is None:
            QToolTip.hideText()
            return
        QToolTip.showText(event.globalPosition().toPoint(), describe(sample, self.names, self._series(sample)), self)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        sample = self.sample_at(event.position().x())
        if sample is not None and event.button() == Qt.MouseButton.LeftButton:
            self.second_clicked.emit(sample.time - sample.seconds)  # where the reads it counts began


def describe(sample: MetricsSample, names: Sequence[str], values: Sequence[float]) -> str:
    """A sample's tooltip: its second, the chart's values, and the busiest resources of that second."""
    when = datetime.fromtimestamp(sample.time).strftime("%H:%M:%S")
    lines = [when, *(f"{name}: {value:.4g}" for name, value in zip(names, values, strict=True))]
    busiest = sorted(sample.by_resource.items(), key=lambda item: -item[1].reads)[:5]
    lines += [f"  {name or '(no resource)'}: {r.reads} reads" for name, r in busiest]
    return "\n".join(lines)


def _rate(reads: int, sample: MetricsSample) -> float:
    return reads / sample.seconds if sample.seconds > 0 else float(reads)


class MetricsCharts(QGroupBox):
    """The Server page's live charts, fed with `add_sample` (the controller's `metrics_sampled`); with
    `set_resource(name)` they show that resource's own numbers ("" for all).

    Signals:
        second_clicked(float time): a chart's second was clicked (the traffic log can show its messages).
    """

    second_clicked = Signal(float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Reads", parent)
        self.setObjectName("metricsCharts")
        self.resource = ""
        self.rate_chart = SampleChart("reads/s", ["reads/s"], self._reads, unit="/s")
        self.latency_chart = SampleChart("latency", ["p50 ms", "p99 ms"], self._latency, unit=" ms")
        self.error_chart = SampleChart("errors/s", ERROR_OUTCOMES, self._errors, bars=True, unit="/s")
        self.summary = QLabel("No reads yet")
        self.summary.setObjectName("metricsSummary")
        charts = QHBoxLayout()
        for chart in (self.rate_chart, self.latency_chart, self.error_chart):
            chart.second_clicked.connect(self.second_clicked)
            charts.addWidget(chart, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(charts, 1)
        layout.addWidget(self.summary)

    def _part(self, sample: MetricsSample) -> ResourceSample:
        if not self.resource:
            return ResourceSample(sample.reads, sample.errors, sample.p50_ms, sample.p99_ms)
        return sample.by_resource.get(self.resource, ResourceSample())

    def _reads(self, sample: MetricsSample) -> Sequence[float]:
        return [_rate(self._part(sample).reads, sample)]

    def _latency(self, sample: MetricsSample) -> Sequence[float]:
        part = self._part(sample)
        return [part.p50_ms or 0.0, part.p99_ms or 0.0]

    def _errors(self, sample: MetricsSample) -> Sequence[float]:
        part = self._part(sample)
        return [_rate(part.errors.get(kind, 0), sample) for kind in ERROR_OUTCOMES]

    @Slot(object)
    def add_sample(self, sample: MetricsSample) -> None:
        for chart in (self.rate_chart, self.latency_chart, self.error_chart):
            chart.add(sample)
        self._show_summary()

    def set_resource(self, name: str) -> None:
        self.resource = name
        self.setTitle(f"Reads of {name}" if name else "Reads")
        for chart in (self.rate_chart, self.latency_chart, self.error_chart):
            chart.update()
        self._show_summary()

    def _show_summary(self) -> None:
        samples = self.rate_chart.samples
        if not samples:
            return
        last = samples[-1]
        part = self._part(last)
        reads = sum(self._part(s).reads for s in samples)
        errors = sum(sum(self._part(s).errors.values()) for s in samples)
        p99 = f"{part.p99_ms:.1f} ms" if part.p99_ms is not None else "-"
        self.summary.setText(
            f"{_rate(part.reads, last):.0f} reads/s now, p99 {p99}; {reads:,} reads and {errors:,} errors "
            f"in the last {len(samples)} s"
        )
