"""OpenTelemetry traces over OTLP/HTTP when the standard OTEL_* variables ask for them (the `[otel]` extra)."""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Iterator, Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Tracer

__all__ = ["OTEL_EXTRA", "Tracing", "TracingDependencyError", "TracingSetupError", "start_tracing", "traces_requested"]

logger = logging.getLogger(__name__)

OTEL_EXTRA = "pip install 'mcp-resource-studio[otel]'"
_PROTOCOL = "http/protobuf"


class TracingSetupError(ValueError):
    """The OTEL_* variables ask for something this server cannot export; the message names the variable."""


class TracingDependencyError(RuntimeError):
    """The variables ask for traces but the OpenTelemetry SDK or its OTLP/HTTP exporter is not installed."""


def traces_requested(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the OTEL_* variables ask for traces: an OTLP endpoint, or `OTEL_TRACES_EXPORTER=otlp`.

    `OTEL_SDK_DISABLED=true` and `OTEL_TRACES_EXPORTER=none` turn them off. Nothing of the SDK is imported.

    Raises:
        TracingSetupError: an exporter or protocol other than OTLP over HTTP/protobuf is asked for.
    """
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = [e.strip().lower() for e in env.get("OTEL_TRACES_EXPORTER", "").split(",") if e.strip()]
    if exporters == ["none"]:
        return False
    unknown = [e for e in exporters if e != "otlp"]
    if unknown:
        raise TracingSetupError(f"OTEL_TRACES_EXPORTER: only 'otlp' (over HTTP) is supported, not {unknown[0]!r}")
    wanted = bool(exporters) or any(
        env.get(name, "").strip() for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )
    if wanted:
        for name in ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
            protocol = env.get(name, "").strip()
            if protocol:
                if protocol != _PROTOCOL:
                    raise TracingSetupError(f"{name}: only {_PROTOCOL!r} is supported, not {protocol!r}")
                break
    return wanted


class Tracing:
    """The server's spans: the SDK's request span enriched, a child per reader call, one per notification."""

    def __init__(self, tracer: Tracer, *, shutdown: Any = None) -> None:
        self._tracer = tracer
        self._shutdown = shutdown

    def enrich_read(self, *, uri: str, resource: str, outcome: str) -> None:
        """Name what the current span (the SDK's `resources/read` span) read; the URI is the client's, in a span
        only (never a metric label)."""
        span = trace.get_current_span()
        if span.is_recording():
            span.set_attributes({
                "mcp.resource.uri": uri,
                "resource_studio.resource.name": resource,
                "resource_studio.read.outcome": outcome,
            })  # fmt: skip

    @contextlib.contextmanager
    def reader_span(self, *, resource: str, waiting: int) -> Iterator[Span]:
        """The reader call of a read (waiting for a snippet worker, then running on it), as a child span."""
        started = time.perf_counter()
        attributes: dict[str, str | int] = {
            "resource_studio.resource.name": resource,
            "resource_studio.pool.waiting": waiting,
        }
        with self._tracer.start_as_current_span(
            f"reader {resource}", kind=SpanKind.INTERNAL, attributes=attributes
        ) as span:
            try:
                yield span
            finally:
                span.set_attribute("resource_studio.reader.seconds", time.perf_counter() - started)

    @contextlib.contextmanager
    def notification_span(self, *, kind: str, uri: str, origin: str) -> Iterator[Span]:
        """One notification announced to this server's subscribers."""
        attributes: dict[str, str] = {
            "mcp.method.name": f"notifications/resources/{kind}",
            "resource_studio.notification.origin": origin,
        }
        if uri:
            attributes["mcp.resource.uri"] = uri
        with self._tracer.start_as_current_span(
            f"notifications/resources/{kind}", kind=SpanKind.PRODUCER, attributes=attributes
        ) as span:
            yield span

    def shutdown(self) -> None:
        """Export what is still queued and stop (at exit; bounded by the exporter's own timeout)."""
        if self._shutdown is not None:
            self._shutdown()


def start_tracing(*, service_name: str, service_version: str = "") -> Tracing:
    """Install a tracer provider exporting over OTLP/HTTP as the OTEL_* variables configure it.

    The provider is the process's global one: the SDK makes its request spans through the global API.
    Spans are exported in batches on the exporter's own thread (a bounded queue), never on the server loop.

    Raises:
        TracingDependencyError: the `[otel]` extra is not installed (the message names it).
    """
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise TracingDependencyError(
            f"OTEL_* variables ask for traces, but the OpenTelemetry SDK is not installed ({exc.name}): {OTEL_EXTRA}"
        ) from None
    attributes: dict[str, str] = {}
    if not os.environ.get("OTEL_SERVICE_NAME"):  # the variables win over the project's name
        attributes["service.name"] = service_name
    if service_version:
        attributes["service.version"] = service_version
    provider = TracerProvider(resource=Resource.create(attributes))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    logger.info("Exporting traces over OTLP/HTTP as %r", service_name)
    return Tracing(provider.get_tracer("resource-studio"), shutdown=provider.shutdown)
