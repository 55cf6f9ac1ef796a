"""Metrics and tracing pieces in one process: own registries, outcome words, origins, the OTEL_* switch."""

from __future__ import annotations

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from resources_qt import Resources
from resources_qt.errors import ReaderFailedError, ResourceNotFoundError, ValidationError
from resources_qt.server import ResourceServer
from resources_qt.server.metrics_http import MAX_SCRAPES, MetricsListener, check_metrics_bind
from resources_qt.server.metrics_notify import caller_origin
from resources_qt.server.metrics_read import outcome_of, resource_name
from resources_qt.server.tracing import TracingSetupError, traces_requested


def _server(name: str) -> ResourceServer:
    resources = Resources()
    resources.register_direct_resource("settings", "config://settings", "Settings", "text/plain", lambda uri: "x")
    resources.register_template_resource("ticket", "tickets://{id}", "Ticket", "text/plain", lambda u, p: "t")
    return ResourceServer(resources, name=name, version="1")


def test_each_server_has_its_own_registry_and_the_default_one_is_untouched() -> None:
    first, second = _server("a"), _server("b")
    try:
        one, two = first.enable_metrics(), second.enable_metrics()
        assert first.enable_metrics() is one  # idempotent
        one.read_started()
        one.read_done("settings", "ok", 0.002)
        two.read_started()
        two.read_done("settings", "error", 0.5)
        assert one.totals().reads == {("settings", "ok"): 1.0}
        assert two.totals().reads == {("settings", "error"): 1.0}
        assert one.registry is not two.registry
        assert not [m for m in REGISTRY.collect() if m.name.startswith("resource_studio")]
        buckets = one.totals().latency_buckets["settings"]
        assert buckets[0] == 0 and buckets[-1] == 1  # 2 ms: not within 0.5 ms, within +Inf
    finally:
        first.close()
        second.close()


def test_read_outcomes_from_the_errors_a_read_raises() -> None:
    busy = ReaderFailedError("busy", data={"reason": "busy", "snippet": "x"})
    timeout = ReaderFailedError("slow", data={"reason": "timeout", "snippet": "x"})
    masked = MCPError(-32000, "The resource reader failed")
    masked.__cause__ = timeout
    assert outcome_of(busy) == "busy"
    assert outcome_of(timeout) == "timeout"
    assert outcome_of(masked) == "timeout"
    assert outcome_of(ReaderFailedError("raised", data={"reason": "raised"})) == "error"
    assert outcome_of(ResourceNotFoundError("x://y")) == "not_found"
    assert outcome_of(ValidationError("bad")) == "error"
    assert outcome_of(MCPError(-32602, "URI too long")) == "error"


def test_resource_labels_are_project_names_never_client_uris() -> None:
    server = _server("names")
    try:
        assert resource_name(server.resources, "config://settings") == "settings"
        assert resource_name(server.resources, "tickets://42") == "ticket"
        assert resource_name(server.resources, "attacker://" + "x" * 50) == ""
        assert resource_name(server.resources, "") == ""
    finally:
        server.close()


def test_notification_origins_default_to_edit_and_follow_what_is_given() -> None:
    # The live data passes "watch" or "poll" itself (tests/integration/test_serve_metrics.py and
    # test_serve_traces.py see them through real serve processes).
    assert caller_origin() == "edit"
    assert caller_origin("button") == "button"
    assert caller_origin("poll") == "poll"


def test_traces_are_asked_for_only_by_the_otel_variables() -> None:
    assert not traces_requested({})
    assert traces_requested({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert traces_requested({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"})
    assert traces_requested({"OTEL_TRACES_EXPORTER": "otlp"})
    assert not traces_requested({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"})
    assert not traces_requested({"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"})
    with pytest.raises(TracingSetupError, match="OTEL_TRACES_EXPORTER"):
        traces_requested({"OTEL_TRACES_EXPORTER": "zipkin"})
    with pytest.raises(TracingSetupError, match="OTEL_EXPORTER_OTLP_PROTOCOL"):
        traces_requested({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})


def test_the_metrics_listener_serves_only_metrics_and_refuses_public_addresses() -> None:
    with pytest.raises(ValueError, match="--metrics-public"):
        check_metrics_bind("0.0.0.0", public=False)
    check_metrics_bind("0.0.0.0", public=True)
    check_metrics_bind("::1", public=False)
    server = _server("listener")
    listener = MetricsListener(server.enable_metrics().registry, "127.0.0.1", 0)
    try:
        page = httpx.get(listener.url, timeout=10)
        other = httpx.get(listener.url.replace("/metrics", "/other"), timeout=10)
        names = {family.name for family in text_string_to_metric_families(page.text)}
        assert page.status_code == 200 and "resource_studio_sessions" in names
        assert other.status_code == 404
        assert MAX_SCRAPES >= 1
    finally:
        listener.close()
        server.close()
