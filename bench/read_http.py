"""resources/read over Streamable HTTP: `resource-studio serve` versus the SDK MCPServer, A B A B."""

from __future__ import annotations

import asyncio
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.common import (
    PYTHON,
    REPO,
    Row,
    child_env,
    free_port,
    median,
    percentile,
    stop_process,
    wait_for_port,
)
from bench.projects import small_project
from bench.rpc_client import RpcSession
from bench.sdk_server import SMALL_TEXT, SMALL_URI

LEVELS = (1, 16)


@dataclass
class Run:
    reads: int
    errors: int
    seconds: float
    latencies_ms: list[float]

    @property
    def rps(self) -> float:
        return self.reads / self.seconds

    @property
    def p99(self) -> float:
        return percentile(self.latencies_ms, 99)


async def _load(url: str, clients: int, seconds: float) -> Run:
    limits = httpx.Limits(max_connections=clients + 4, max_keepalive_connections=clients + 4)
    async with httpx.AsyncClient(limits=limits, timeout=30.0) as http:
        sessions = [RpcSession(http, url) for _ in range(clients)]
        await asyncio.gather(*(s.initialize() for s in sessions))
        latencies: list[float] = []
        errors = 0
        deadline = time.perf_counter() + seconds

        async def worker(session: RpcSession) -> None:
            nonlocal errors
            while time.perf_counter() < deadline:
                start = time.perf_counter()
                try:
                    result = await session.read(SMALL_URI)
                    if result["contents"][0]["text"] != SMALL_TEXT:
                        errors += 1
                except Exception:
                    errors += 1
                latencies.append((time.perf_counter() - start) * 1000)

        began = time.perf_counter()
        await asyncio.gather(*(worker(s) for s in sessions))
        elapsed = time.perf_counter() - began
        await asyncio.gather(*(s.close() for s in sessions))
    return Run(len(latencies) - errors, errors, elapsed, latencies)


NODELAY_EXPERIMENT = False
"""Serve ours through bench/serve_nodelay.py (TCP_NODELAY on accepted sockets) instead of the real command."""


def start_ours(workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    project = small_project(workdir / "small.toml")
    port = free_port()
    command = [str(REPO / "bench" / "serve_nodelay.py")] if NODELAY_EXPERIMENT else ["-m", "studio"]
    proc = subprocess.Popen(
        [PYTHON, *command, "serve", str(project), "--http", f"127.0.0.1:{port}"],
        cwd=REPO, env=child_env(), stdout=subprocess.DEVNULL, stderr=(workdir / "ours.log").open("wb"),
    )
    wait_for_port(port, 30, proc)
    return proc, f"http://127.0.0.1:{port}/mcp"


def start_sdk(workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [PYTHON, str(REPO / "bench" / "sdk_server.py"), str(port)],
        cwd=REPO, env=child_env(), stdout=subprocess.DEVNULL, stderr=(workdir / "sdk.log").open("wb"),
    )
    wait_for_port(port, 30, proc)
    return proc, f"http://127.0.0.1:{port}/mcp"


def engine_available() -> str | None:
    """None when `resource-studio serve` can run, else why not."""
    if not (REPO / "resources_qt" / "server" / "cli.py").exists():
        return "resources_qt/server/cli.py (serve command) is not in the tree yet"
    return None


def measure(quick: bool) -> dict[int, tuple[list[Run], list[Run]]]:
    seconds = 1.5 if quick else 5.0  # --quick must stay under 4 minutes; wrk carries the read goals
    pairs = 2 if quick else 6
    out: dict[int, tuple[list[Run], list[Run]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-read-") as tmp:
        workdir = Path(tmp)
        ours, ours_url = start_ours(workdir)
        sdk, sdk_url = start_sdk(workdir)
        try:
            for url in (ours_url, sdk_url):  # warm both: imports, worker spawn, first-call caches
                asyncio.run(_load(url, 2, 1.0))
            for clients in LEVELS:
                a_runs, b_runs = [], []
                for _ in range(pairs):
                    a_runs.append(asyncio.run(_load(ours_url, clients, seconds)))
                    b_runs.append(asyncio.run(_load(sdk_url, clients, seconds)))
                out[clients] = (a_runs, b_runs)
        finally:
            stop_process(ours)
            stop_process(sdk)
    return out


def run(quick: bool) -> list[Row]:
    why = engine_available()
    if why:
        return [
            Row.unavailable("read_rps_ratio_vs_sdk", "read throughput ratio vs SDK", "x", why, ">= 1.0"),
            Row.unavailable("read_p99_ratio_vs_sdk", "read p99 latency ratio vs SDK", "x", why, "<= 1.0"),
        ]
    results = measure(quick)
    extra: dict[str, float] = {}
    details, rps_ratios, p99_ratios = [], [], []
    for clients, (a_runs, b_runs) in results.items():
        rps = median([a.rps / b.rps for a, b in zip(a_runs, b_runs, strict=True)])
        p99 = median([a.p99 / b.p99 for a, b in zip(a_runs, b_runs, strict=True)])
        rps_ratios.append(rps)
        p99_ratios.append(p99)
        errors = sum(r.errors for r in a_runs), sum(r.errors for r in b_runs)
        extra.update({
            f"read_rps_ratio_vs_sdk_c{clients}": round(rps, 3),
            f"read_p99_ratio_vs_sdk_c{clients}": round(p99, 3),
            f"read_rps_ours_c{clients}": round(median([r.rps for r in a_runs]), 1),
            f"read_rps_sdk_c{clients}": round(median([r.rps for r in b_runs]), 1),
            f"read_p99_ms_ours_c{clients}": round(median([r.p99 for r in a_runs]), 2),
            f"read_p99_ms_sdk_c{clients}": round(median([r.p99 for r in b_runs]), 2),
            f"read_errors_ours_c{clients}": errors[0],
            f"read_errors_sdk_c{clients}": errors[1],
        })
        details.append(
            f"{clients} client(s): ours {extra[f'read_rps_ours_c{clients}']:.0f} rps p99 "
            f"{extra[f'read_p99_ms_ours_c{clients}']:.1f} ms, SDK {extra[f'read_rps_sdk_c{clients}']:.0f} rps p99 "
            f"{extra[f'read_p99_ms_sdk_c{clients}']:.1f} ms, ratios x{rps:.2f} / x{p99:.2f}, "
            f"errors {errors[0]}/{errors[1]}"
        )
    # The headline is the worse of the two concurrency levels: the goal must hold at both.
    rps_worst, p99_worst = min(rps_ratios), max(p99_ratios)
    detail = "; ".join(details) + " (headline: worse level; median of per-pair ratios)"
    return [
        Row("read_rps_ratio_vs_sdk", "read throughput ratio vs SDK", round(rps_worst, 3), "x", ">= 1.0",
            rps_worst >= 1.0, detail, extra),
        Row("read_p99_ratio_vs_sdk", "read p99 latency ratio vs SDK", round(p99_worst, 3), "x", "<= 1.0",
            p99_worst <= 1.0, "ours p99 / SDK p99, worse level"),
    ]
