"""ServerMetrics: one server's Prometheus counters, histograms and state gauges, in a registry of its own."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from resources_qt.server.metrics_labels import (
    LATENCY_BUCKETS,
    NOTIFICATION_ORIGINS,
    OUTCOMES,
    UNMATCHED,
    NotificationOrigin,
    Outcome,
)

if TYPE_CHECKING:
    from resources_qt.server.engine import ResourceServer
    from resources_qt.snippets.readers import SnippetReaders

__all__ = [
    "LATENCY_BUCKETS",
    "NOTIFICATION_ORIGINS",
    "OUTCOMES",
    "UNMATCHED",
    "MetricsTotals",
    "NotificationOrigin",
    "Outcome",
    "ServerMetrics",
]

_ERAS: Final = {"session": "handshake", "listen": "2026-07-28"}
_TRANSPORTS: Final = ("http", "stdio")


@dataclass(frozen=True, slots=True)
class MetricsTotals:
    """What the counters say at one moment (cumulative since the metrics were enabled): the studio's charts
    take the difference of two of these."""

    reads: dict[tuple[str, str], float]
    """(resource, outcome) -> reads."""
    latency_buckets: dict[str, tuple[float, ...]]
    """resource -> cumulative counts of reads at or under each of `LATENCY_BUCKETS` (and +Inf, last)."""
    latency_sum: dict[str, float]
    """resource -> seconds spent in all its reads."""
    notifications: dict[tuple[str, str], float]
    """(kind, origin) -> notifications announced."""


class ServerMetrics:
    """The counters a server's read path and notifications feed, and gauges read from the server at scrape time.

    Each instance has its own `CollectorRegistry` (never the process-wide default one), so two servers in
    one process, or one test after another, never share or clash. Label values are the project's resource
    names, fixed outcome/kind/origin words and the server's own transport names: nothing a client sends.
    Recording is called on the server loop; scraping and `totals()` from any thread (prometheus_client's
    values are lock-protected).
    """

    def __init__(self, engine: ResourceServer, *, readers: SnippetReaders | None = None) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self._reads = Counter(
            "resource_studio_reads", "resources/read requests answered, by resource and outcome",
            ["resource", "outcome"], registry=self.registry,
        )  # fmt: skip
        self._read_seconds = Histogram(
            "resource_studio_read_seconds", "Seconds from a resources/read request reaching its handler to its answer",
            ["resource"], buckets=LATENCY_BUCKETS, registry=self.registry,
        )  # fmt: skip
        self._reader_seconds = Histogram(
            "resource_studio_reader_seconds",
            "The reader's share of a read: seconds in the reader call (snippet pool queue and worker run)",
            ["resource"], buckets=LATENCY_BUCKETS, registry=self.registry,
        )  # fmt: skip
        self._notifications = Counter(
            "resource_studio_notifications", "Notifications announced to this server's subscribers, by kind and origin",
            ["kind", "origin"], registry=self.registry,
        )  # fmt: skip
        self.registry.register(_StateCollector(engine, self))
        self._readers = readers
        # Children of the labelled metrics, looked up once: `.labels()` costs a lock and a tuple per call.
        self._read_children: dict[tuple[str, str], tuple[Counter, Histogram]] = {}
        self._reader_children: dict[str, Histogram] = {}
        self._in_flight = 0
        self._reader_calls = 0
        self._lock = threading.Lock()

    @property
    def readers(self) -> SnippetReaders | None:
        """The snippet runner whose queue and workers the gauges report (None: reads in flight stand in)."""
        return self._readers

    # -- recording (server loop) ------------------------------------------------------

    def read_started(self) -> None:
        self._in_flight += 1

    def read_done(self, resource: str, outcome: Outcome, seconds: float) -> None:
        self._in_flight -= 1
        key = (resource, outcome)
        children = self._read_children.get(key)
        if children is None:
            with self._lock:
                children = self._read_children.setdefault(
                    key, (self._reads.labels(resource, outcome), self._read_seconds.labels(resource))
                )
        counter, histogram = children
        counter.inc()
        histogram.observe(seconds)

    def read_cancelled(self) -> None:
        self._in_flight -= 1

    def reader_started(self) -> None:
        self._reader_calls += 1

    def reader_done(self, resource: str, seconds: float) -> None:
        self._reader_calls -= 1
        histogram = self._reader_children.get(resource)
        if histogram is None:
            with self._lock:
                histogram = self._reader_children.setdefault(resource, self._reader_seconds.labels(resource))
        histogram.observe(seconds)

    def notification_sent(self, kind: str, origin: NotificationOrigin) -> None:
        self._notifications.labels(kind, origin).inc()

    # -- reading (any thread) ---------------------------------------------------------

    @property
    def reads_in_flight(self) -> int:
        """resources/read requests being handled now (queued for a worker or running)."""
        return max(0, self._in_flight)

    @property
    def reader_calls(self) -> int:
        """Reader calls of client reads in the snippet pool now (waiting for a worker or running on one)."""
        return max(0, self._reader_calls)

    def totals(self) -> MetricsTotals:
        """The counters now, as plain numbers (for the studio's charts)."""
        reads: dict[tuple[str, str], float] = {}
        for family in self._reads.collect():
            for sample in family.samples:
                if sample.name.endswith("_total"):
                    reads[(sample.labels["resource"], sample.labels["outcome"])] = sample.value
        buckets: dict[str, list[float]] = {}
        sums: dict[str, float] = {}
        for family in self._read_seconds.collect():
            for sample in family.samples:
                resource = sample.labels.get("resource", UNMATCHED)
                if sample.name.endswith("_bucket"):
                    buckets.setdefault(resource, []).append(sample.value)
                elif sample.name.endswith("_sum"):
                    sums[resource] = sample.value
        notifications: dict[tuple[str, str], float] = {}
        for family in self._notifications.collect():
            for sample in family.samples:
                if sample.name.endswith("_total"):
                    notifications[(sample.labels["kind"], sample.labels["origin"])] = sample.value
        return MetricsTotals(
            reads=reads,
            latency_buckets={name: tuple(counts) for name, counts in buckets.items()},
            latency_sum=sums,
            notifications=notifications,
        )


class _StateCollector(Collector):
    """Gauges read from the server when scraped: nothing is updated on the read path for them."""

    def __init__(self, engine: ResourceServer, metrics: ServerMetrics) -> None:
        self._engine = engine
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        engine = self._engine
        sessions = GaugeMetricFamily(
            "resource_studio_sessions",
            "Handshake-era sessions and 2026-07-28 listen streams open now",
            labels=["transport", "era"],
        )
        counts = {(transport, era): 0 for transport in _TRANSPORTS for era in _ERAS.values()}
        subscriptions = 0
        for session in engine.registry.all():
            key = (session.transport, _ERAS.get(session.kind, "handshake"))
            counts[key] = counts.get(key, 0) + 1
            subscriptions += len(session.subscriptions)
        for (transport, era), count in counts.items():
            sessions.add_metric([transport, era], count)
        yield sessions
        yield GaugeMetricFamily(
            "resource_studio_subscriptions", "Resource subscriptions held by open sessions", value=subscriptions
        )
        metrics = self._metrics
        readers = metrics.readers
        queued = readers.queued() if readers is not None else metrics.reads_in_flight
        yield GaugeMetricFamily(
            "resource_studio_read_queue",
            "Reader calls waiting for a snippet worker (without a known pool: resources/read requests in flight)",
            value=queued,
        )
        workers = GaugeMetricFamily("resource_studio_workers", "Snippet workers by state", labels=["state"])
        if readers is not None:
            workers.add_metric(["configured"], readers.workers)
            workers.add_metric(["running"], len(readers.worker_pids()))
            workers.add_metric(["shared"], len(readers.shared_worker_pids()))  # of the running: async entries'
            workers.add_metric(["busy"], min(readers.workers, max(0, metrics.reader_calls - readers.queued())))
        yield workers
        cache = engine.read_cache
        hits = CounterMetricFamily("resource_studio_read_cache_hits", "Reads answered from the read cache")
        hits.add_metric([], cache.hits)
        yield hits
        misses = CounterMetricFamily("resource_studio_read_cache_misses", "Cache-hinted reads the cache did not hold")
        misses.add_metric([], cache.misses)
        yield misses
        yield GaugeMetricFamily("resource_studio_read_cache_entries", "Answers in the read cache", value=len(cache))
        yield GaugeMetricFamily("resource_studio_read_cache_bytes", "Bytes of the read cache", value=cache.size_bytes)
        bus = engine.bus
        state = "none" if bus is None else ("connected" if bus.connected else "disconnected")
        family = GaugeMetricFamily("resource_studio_bus", "The notification bus: 1 for its state now", labels=["state"])
        for name in ("none", "connected", "disconnected"):
            family.add_metric([name], 1 if name == state else 0)
        yield family
