"""Traces over OTLP/HTTP: a real serve process, real SDK clients, and a real receiver decoding the protobuf."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from engine_support import connect, wait_for
from helpers.otlp_receiver import ReceivedSpan, otlp_receiver
from helpers.serve_process import ROOT, ServeProcess, serve_env

from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project
from resources_qt.project.model import WatchSpec

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]


def _project() -> Project:
    resources = [
        ResourceSpec(name="greeting", uri="demo://greeting", mime_type="text/plain",
                     reader="def read(uri, params):\n    return 'hello'\n"),
        ResourceSpec(name="clock", uri="demo://clock", mime_type="text/plain", watch=WatchSpec(interval=0.3),
                     reader="import time\n\ndef read(uri, params):\n    return repr(time.time())\n"),
    ]
    return Project(server=ServerSettings(name="traced", version="4.2", notifications=True, subscriptions=True,
                                         workers=1), resources=resources)  # fmt: skip


def _reads_of(spans: list[ReceivedSpan], uri: str) -> list[ReceivedSpan]:
    return [s for s in spans if s.name == "resources/read" and s.attributes.get("mcp.resource.uri") == uri]


async def test_reads_and_notifications_are_traced_over_otlp_http(tmp_path: Path) -> None:
    path = save_project(_project(), tmp_path / "p.toml")
    updates: list[Any] = []

    async def handler(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(message)

    with otlp_receiver() as receiver:
        env = serve_env({"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100"})
        with ServeProcess(path, "--http", "127.0.0.1:0", env=env) as serve:
            url = serve.mcp_url
            for mode in ("legacy", "2026-07-28"):
                async with connect(url, mode) as client:
                    assert (await client.read_resource("demo://greeting", cache_mode="bypass")).contents[0].text
            async with connect(url, "legacy", message_handler=handler) as client:
                await client.subscribe_resource("demo://clock")
                await wait_for(lambda: bool(updates), timeout=30)
            await wait_for(lambda: len(_reads_of(receiver.spans(), "demo://greeting")) == 2, timeout=30)
            await wait_for(
                lambda: any(s.name == "notifications/resources/updated" for s in receiver.spans()), timeout=30
            )
        spans = receiver.spans()
    reads = _reads_of(spans, "demo://greeting")
    for read in reads:  # the SDK's own request span, enriched
        assert read.kind == 2  # SERVER
        assert read.attributes["resource_studio.resource.name"] == "greeting"
        assert read.attributes["resource_studio.read.outcome"] == "ok"
        assert read.resource["service.name"] == "traced" and read.resource["service.version"] == "4.2"
        children = [s for s in spans if s.parent_span_id == read.span_id]
        assert [c.name for c in children] == ["reader greeting"]
        (child,) = children
        assert child.trace_id == read.trace_id
        assert child.attributes["resource_studio.pool.waiting"] >= 0
        assert 0 < child.attributes["resource_studio.reader.seconds"] * 1e9 <= read.duration_ns
    assert {r.attributes["mcp.protocol.version"] for r in reads} >= {"2026-07-28"}
    sent = [s for s in spans if s.name == "notifications/resources/updated"]
    assert sent[0].attributes["mcp.resource.uri"] == "demo://clock"
    assert sent[0].attributes["resource_studio.notification.origin"] == "poll"
    assert sent[0].kind == 4  # PRODUCER


_HIDE_OTEL_SDK = """
import sys
from importlib.abc import MetaPathFinder

class Missing(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry.sdk" or name.startswith(("opentelemetry.sdk.", "opentelemetry.exporter")):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Missing())
from studio.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_traces_asked_for_without_the_extra_is_a_one_line_error_naming_it(tmp_path: Path) -> None:
    path = save_project(_project(), tmp_path / "p.toml")
    env = serve_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"})
    result = subprocess.run([sys.executable, "-c", _HIDE_OTEL_SDK, "serve", str(path), "--http", "0"],
                            capture_output=True, text=True, env=env, cwd=ROOT, timeout=60, check=False)  # fmt: skip
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert lines[0].startswith("resource-studio serve: error: ") and "mcp-resource-studio[otel]" in lines[0]
    wrong = subprocess.run([sys.executable, "-m", "studio", "serve", str(path), "--http", "0"], capture_output=True,
                           text=True, env=serve_env({"OTEL_TRACES_EXPORTER": "jaeger"}), cwd=ROOT, timeout=60,
                           check=False)  # fmt: skip
    assert wrong.returncode == 2 and "OTEL_TRACES_EXPORTER" in wrong.stderr


def test_without_the_variables_nothing_of_the_otel_sdk_is_loaded(tmp_path: Path) -> None:
    path = save_project(_project(), tmp_path / "p.toml")

    def loaded(*args: str) -> list[str]:
        probe = (
            "import sys\n"
            "import resources_qt.server.cli as cli\n"
            "cli._wait_until_stopped = lambda *waiting: print(sorted(m for m in sys.modules if m.startswith("
            "('opentelemetry.sdk', 'opentelemetry.exporter', 'prometheus_client.'))), file=sys.stderr)\n"
            f"sys.exit(cli.serve_main([{str(path)!r}, '--http', '127.0.0.1:0', *{list(args)!r}]))\n"
        )
        result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=serve_env(),
                                cwd=ROOT, timeout=60, check=False)  # fmt: skip
        assert result.returncode == 0, result.stderr
        return list(ast.literal_eval(result.stderr.strip().splitlines()[-1]))

    assert loaded() == []
    with_metrics = loaded("--metrics", "127.0.0.1:0")
    assert "prometheus_client.registry" in with_metrics
    assert not [m for m in with_metrics if m.startswith("opentelemetry")]
