"""MetricsFeed: the engine's read counters sampled once a second off the GUI thread, as one typed batch."""

from __future__ import annotations

import concurrent.futures
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Slot

if TYPE_CHECKING:  # the window's first paint must not wait for prometheus_client
    from resources_qt.qt.engine_parts import EngineParts
    from resources_qt.server.metrics import MetricsTotals

__all__ = ["ERROR_OUTCOMES", "INTERVAL_MS", "MetricsFeed", "MetricsSample", "ResourceSample", "quantile_ms"]

logger = logging.getLogger(__name__)

INTERVAL_MS = 1000
ERROR_OUTCOMES = ("not_found", "error", "timeout", "busy")
"""The outcomes a chart shows as errors, by kind (resources_qt.server.metrics_labels.OUTCOMES)."""


@dataclass(frozen=True, slots=True)
class ResourceSample:
    """One resource's reads in one interval."""

    reads: int = 0
    errors: Mapping[str, int] = field(default_factory=dict)
    p50_ms: float | None = None
    p99_ms: float | None = None


@dataclass(frozen=True, slots=True)
class MetricsSample:
    """What the server answered since the previous sample (about a second), from its Prometheus counters.

    `reads` counts every outcome (cached included); `errors` maps each of `ERROR_OUTCOMES` that happened to
    its count; the latencies are estimated from the read histogram's buckets (None without reads).
    """

    time: float
    """Wall-clock seconds (time.time()) when it was taken: the traffic log's clock."""
    seconds: float
    reads: int
    errors: Mapping[str, int]
    p50_ms: float | None
    p99_ms: float | None
    by_resource: Mapping[str, ResourceSample]


def quantile_ms(buckets: Sequence[float], counts: Sequence[float], q: float) -> float | None:
    """The `q` quantile in milliseconds of a histogram interval: `counts` cumulative per upper bound in
    `buckets` (seconds), +Inf last, interpolated within a bucket as Prometheus' histogram_quantile does."""
    total = counts[-1] if counts else 0.0
    if total <= 0:
        return None
    rank = q * total
    lower, below = 0.0, 0.0
    for bound, count in zip((*buckets, float("inf")), counts, strict=True):
        if count >= rank:
            if bound == float("inf"):
                return lower * 1000.0  # beyond the last bound: its bound is the best estimate
            inside = count - below
            share = (rank - below) / inside if inside > 0 else 1.0
            return (lower + (bound - lower) * share) * 1000.0
        lower, below = bound, count
    return lower * 1000.0


class MetricsFeed(QObject):
    """Each second while the engine serves, its counters are read on a worker thread and the difference
    from the previous reading goes to `emit` as one `MetricsSample` (from that thread: a Qt signal queues it
    to the GUI). The GUI thread only starts the timer's tick; a tick still sampling skips the next one.

    `parts()` is the built engine or None; the feed switches the engine's metrics on when it first sees it.
    """

    def __init__(
        self,
        parent: QObject,
        *,
        parts: Callable[[], EngineParts | None],
        emit: Callable[[MetricsSample], None],
        interval_ms: int = INTERVAL_MS,
    ) -> None:
        super().__init__(parent)
        self._parts = parts
        self._emit = emit
        self._worker = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="metrics-feed")
        self._pending: concurrent.futures.Future[None] | None = None
        self._previous: tuple[float, MetricsTotals] | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._on_tick)
        self._timer.start()
        worker = self._worker
        self.destroyed.connect(lambda *_: worker.shutdown(wait=False))  # nothing left to sample for

    @Slot()
    def _on_tick(self) -> None:
        if self._pending is not None and not self._pending.done():
            return
        self._pending = self._worker.submit(self._sample)

    def _sample(self) -> None:
        # Worker thread.
        try:
            parts = self._parts()
            engine = parts.server if parts is not None else None
            if engine is None or not engine.is_running:
                self._previous = None
                return
            totals = engine.enable_metrics().totals()
            now = time.time()
            previous, self._previous = self._previous, (now, totals)
            if previous is not None:
                self._emit(_difference(previous, (now, totals)))
        except Exception:  # one failed sample must not end the feed
            logger.exception("Sampling the server's metrics failed")


def _difference(before: tuple[float, MetricsTotals], after: tuple[float, MetricsTotals]) -> MetricsSample:
    from resources_qt.server.metrics_labels import LATENCY_BUCKETS

    (then, old), (now, new) = before, after
    per: dict[str, dict[str, int]] = {}
    for (resource, outcome), count in new.reads.items():
        delta = int(count - old.reads.get((resource, outcome), 0.0))
        if delta > 0:
            per.setdefault(resource, {})[outcome] = delta
    width = len(LATENCY_BUCKETS) + 1
    overall = [0.0] * width
    by_resource: dict[str, ResourceSample] = {}
    for resource, outcomes in per.items():
        counts = new.latency_buckets.get(resource, (0.0,) * width)
        earlier = old.latency_buckets.get(resource, (0.0,) * width)
        interval = [a - b for a, b in zip(counts, earlier, strict=True)]
        overall = [a + b for a, b in zip(overall, interval, strict=True)]
        by_resource[resource] = ResourceSample(
            reads=sum(outcomes.values()),
            errors={kind: outcomes[kind] for kind in ERROR_OUTCOMES if kind in outcomes},
            p50_ms=quantile_ms(LATENCY_BUCKETS, interval, 0.5),
            p99_ms=quantile_ms(LATENCY_BUCKETS, interval, 0.99),
        )
    errors: dict[str, int] = {}
    for sample in by_resource.values():
        for kind, count in sample.errors.items():
            errors[kind] = errors.get(kind, 0) + count
    return MetricsSample(
        time=now,
        seconds=now - then,
        reads=sum(s.reads for s in by_resource.values()),
        errors=errors,
        p50_ms=quantile_ms(LATENCY_BUCKETS, overall, 0.5),
        p99_ms=quantile_ms(LATENCY_BUCKETS, overall, 0.99),
        by_resource=by_resource,
    )
