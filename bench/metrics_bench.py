"""Observability's cost: read throughput with metrics (scraped) and with tracing against neither, rounds alternated
in one run, and `serve`'s start-up with and without the OTEL_* variables."""

from __future__ import annotations

import asyncio
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from bench.common import PYTHON, REPO, Row, child_env, free_port, median, stop_process, wait_for_port
from bench.projects import small_project
from bench.read_http import Run, _load

CLIENTS = 16
METRICS_GOAL = 0.95
TRACING_GOAL = 0.85


class _Sink(BaseHTTPRequestHandler):
    """An OTLP/HTTP endpoint that takes the spans and keeps nothing: the exporter does its whole job."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def _otlp_sink() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _start(project: Path, log: Path, *extra: str, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [PYTHON, "-m", "studio", "serve", str(project), "--http", f"127.0.0.1:{port}", *extra],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=log.open("wb"),
    )  # fmt: skip
    wait_for_port(port, 60, proc)
    return proc, f"http://127.0.0.1:{port}/mcp"


@contextmanager
def _scraping(url: str) -> Iterator[None]:
    """Scrape /metrics once a second during a run, as Prometheus would."""
    stop = threading.Event()

    def scrape() -> None:
        with httpx.Client(timeout=10) as client:
            while not stop.wait(1.0):
                client.get(url)

    thread = threading.Thread(target=scrape, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(15)


def _startup_seconds(project: Path, env: dict[str, str]) -> float:
    """From spawning `serve` to its serving line on stderr."""
    started = time.perf_counter()
    proc = subprocess.Popen([PYTHON, "-m", "studio", "serve", str(project), "--http", "127.0.0.1:0"], cwd=REPO,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        elapsed = time.perf_counter() - started
        if b"Serving" not in line:
            raise RuntimeError(f"serve did not start: {line!r}")
        return elapsed
    finally:
        stop_process(proc)
        if proc.stderr is not None:
            proc.stderr.close()


def measure(quick: bool) -> dict[str, Any]:
    seconds = 2.0 if quick else 5.0
    rounds = 2 if quick else 5
    out: dict[str, Any] = {"plain": [], "metrics": [], "tracing": [], "start_plain": [], "start_otel": []}
    with tempfile.TemporaryDirectory(prefix="bench-observability-") as tmp, _otlp_sink() as sink:
        workdir = Path(tmp)
        project = small_project(workdir / "small.toml")
        metrics_port = free_port()
        otel = child_env(OTEL_EXPORTER_OTLP_ENDPOINT=sink)
        plain_env = {k: v for k, v in child_env().items() if not k.startswith("OTEL_")}
        servers: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
        try:
            servers["plain"] = _start(project, workdir / "plain.log", env=plain_env)
            servers["metrics"] = _start(project, workdir / "metrics.log", "--metrics", f"127.0.0.1:{metrics_port}",
                                        env=plain_env)  # fmt: skip
            servers["tracing"] = _start(project, workdir / "tracing.log", env=otel)
            for _, url in servers.values():  # warm: imports, worker spawn, first-call caches
                asyncio.run(_load(url, 2, 1.0))
            metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
            names = list(servers)
            for round_ in range(rounds):
                # The order turns each round, so no configuration always runs first (or after the same one).
                for name in names[round_ % 3:] + names[: round_ % 3]:
                    url = servers[name][1]
                    if name == "metrics":
                        with _scraping(metrics_url):
                            out[name].append(asyncio.run(_load(url, CLIENTS, seconds)))
                    else:
                        out[name].append(asyncio.run(_load(url, CLIENTS, seconds)))
        finally:
            for proc, _ in servers.values():
                stop_process(proc)
        for _ in range(3 if quick else 6):  # alternated: the machine's load moves both alike
            out["start_plain"].append(_startup_seconds(project, plain_env))
            out["start_otel"].append(_startup_seconds(project, otel))
    return out


def _ratio(runs: list[Run], base: list[Run], pick: Callable[[Run], float] = lambda r: r.rps) -> float:
    return median([pick(a) / pick(b) for a, b in zip(runs, base, strict=True)])


def run(quick: bool) -> list[Row]:
    found = measure(quick)
    plain, metrics, tracing = found["plain"], found["metrics"], found["tracing"]
    metrics_ratio, tracing_ratio = _ratio(metrics, plain), _ratio(tracing, plain)
    start_plain, start_otel = median(found["start_plain"]), median(found["start_otel"])
    extra = {
        "observability_rps_plain": round(median([r.rps for r in plain]), 1),
        "observability_rps_metrics": round(median([r.rps for r in metrics]), 1),
        "observability_rps_tracing": round(median([r.rps for r in tracing]), 1),
        "observability_p99_ms_plain": round(median([r.p99 for r in plain]), 2),
        "observability_p99_ms_metrics": round(median([r.p99 for r in metrics]), 2),
        "observability_p99_ms_tracing": round(median([r.p99 for r in tracing]), 2),
        "observability_errors": sum(r.errors for r in (*plain, *metrics, *tracing)),
        "serve_start_s_plain": round(start_plain, 3),
        "serve_start_s_otel": round(start_otel, 3),
    }
    detail = (
        f"{CLIENTS} clients, median of per-round ratios; plain {extra['observability_rps_plain']:.0f} rps, "
        f"metrics (scraped 1/s) {extra['observability_rps_metrics']:.0f} rps, tracing (OTLP/HTTP to a local sink) "
        f"{extra['observability_rps_tracing']:.0f} rps; errors {extra['observability_errors']}"
    )
    return [
        Row("metrics_read_rps_ratio", "reads/s with --metrics vs without", round(metrics_ratio, 3), "x",
            f">= {METRICS_GOAL}", metrics_ratio >= METRICS_GOAL, detail, extra),
        Row("tracing_read_rps_ratio", "reads/s with OTLP tracing vs without", round(tracing_ratio, 3), "x",
            f">= {TRACING_GOAL}", tracing_ratio >= TRACING_GOAL, detail),
        Row("serve_start_s_plain", "serve start-up to its URL line, no OTEL_* variables", round(start_plain, 3), "s",
            "", None, "median, alternated with the run below"),
        Row("serve_start_s_otel", "serve start-up to its URL line, with OTEL_EXPORTER_OTLP_ENDPOINT",
            round(start_otel, 3), "s", "", None, "the OpenTelemetry SDK and exporter import only here"),
    ]
