"""The Redis bus: publish on replica A to the last of 1,000 subscribers over two replicas; read cost of --bus.

Usage: python -m bench.bus_bench [--quick]   (needs redis-server and the redis package)
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import PYTHON, REPO, Row, child_env, free_port, median, stop_process, wait_for_port
from bench.inproc import direct_collection
from bench.projects import small_project
from bench.read_http import Run, _load
from resources_qt.notifications import Updated

URI = "docs://library/doc000000"
CHANNEL = "resource-studio:bench"


def _start_redis(workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed (Debian: apt-get install redis-server)")
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir",
         str(workdir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    wait_for_port(port, 30, proc)  # type: ignore[arg-type]
    return proc, f"redis://127.0.0.1:{port}/0"


def _replica(redis_url: str) -> Any:
    from resources_qt.bus.redis_bus import RedisBus
    from resources_qt.server import ResourceServer

    server = ResourceServer(direct_collection(10), name="bench", version="1",
                            bus=RedisBus(redis_url, channel=CHANNEL))
    server.enable_resource_subscriptions = True
    server.enable_resource_notifications = True
    server.start_http("127.0.0.1", 0)
    deadline = time.monotonic() + 30
    while not server.bus.connected:
        if time.monotonic() > deadline:
            raise RuntimeError("the bus did not connect")
        time.sleep(0.01)
    return server


def fan_out(redis_url: str, per_replica: int, rounds: int) -> tuple[list[float], list[float], float]:
    """Per round: ms from send on A to the last receiver (over both replicas) and to the first one on B."""
    a, b = _replica(redis_url), _replica(redis_url)
    clients: list[subprocess.Popen[str]] = []
    try:
        opened = time.perf_counter()
        for server in (a, b):
            clients.append(subprocess.Popen(
                [PYTHON, "-m", "bench.fanout_client", server.url, str(per_replica), str(rounds), URI],
                cwd=REPO, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            ))
        for proc in clients:
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
            if line != "ready":
                raise RuntimeError(f"fan-out client failed: {line!r} {proc.stderr.read() if proc.stderr else ''}")
        setup_s = time.perf_counter() - opened
        last, first_remote = [], []
        for r in range(rounds):
            time.sleep(0.3)  # let the previous round's traffic settle
            sent_at = time.perf_counter()
            asyncio.run(a.notify(Updated(URI)))
            ends = []
            for proc in clients:
                assert proc.stdout is not None
                parts = proc.stdout.readline().split()
                if len(parts) != 4 or parts[:2] != ["round", str(r)]:
                    raise RuntimeError(f"unexpected fan-out client output {parts!r}")
                ends.append((float(parts[2]), float(parts[3])))
            last.append((max(e[0] for e in ends) - sent_at) * 1000)
            first_remote.append((ends[1][1] - sent_at) * 1000)
        for proc in clients:
            proc.wait(60)
    finally:
        for proc in clients:
            stop_process(proc)  # type: ignore[arg-type]
        a.close()
        b.close()
    return last, first_remote, setup_s


def _serve(workdir: Path, name: str, *extra: str) -> tuple[subprocess.Popen[bytes], str]:
    project = small_project(workdir / f"{name}.toml")
    port = free_port()
    proc = subprocess.Popen(
        [PYTHON, "-m", "studio", "serve", str(project), "--http", f"127.0.0.1:{port}", *extra],
        cwd=REPO, env=child_env(), stdout=subprocess.DEVNULL, stderr=(workdir / f"{name}.log").open("wb"),
    )
    wait_for_port(port, 30, proc)
    return proc, f"http://127.0.0.1:{port}/mcp"


def read_cost(workdir: Path, redis_url: str, *, clients: int, seconds: float, pairs: int) -> tuple[list[Run], ...]:
    """Reads/s of `serve` without and with --bus (A B A B), and with --bus while notify publishes 100/s."""
    plain, plain_url = _serve(workdir, "plain")
    bused, bused_url = _serve(workdir, "bused", "--bus", redis_url, "--bus-channel", CHANNEL)
    try:
        for url in (plain_url, bused_url):
            asyncio.run(_load(url, 2, 1.0))  # warm: imports, worker spawn, first-call caches
        without, with_bus, busy = [], [], []
        for _ in range(pairs):
            without.append(asyncio.run(_load(plain_url, clients, seconds)))
            with_bus.append(asyncio.run(_load(bused_url, clients, seconds)))
            busy.append(asyncio.run(_with_traffic(bused_url, redis_url, clients, seconds)))
    finally:
        stop_process(plain)
        stop_process(bused)
    return without, with_bus, busy


async def _with_traffic(url: str, redis_url: str, clients: int, seconds: float) -> Run:
    from resources_qt.bus.events import ListChanged, Updated
    from resources_qt.bus.publish import publish_once

    async def publish() -> None:
        while True:
            await publish_once(redis_url, channel=CHANNEL, events=[Updated(URI)] * 9 + [ListChanged()])
            await asyncio.sleep(0.1)

    publisher = asyncio.create_task(publish())
    try:
        return await _load(url, clients, seconds)
    finally:
        publisher.cancel()


def run(quick: bool) -> list[Row]:
    try:
        import redis  # noqa: F401

        import resources_qt.bus  # noqa: F401
    except ImportError as exc:
        return [Row.unavailable("bus_fanout_ms_1000", "bus fan-out to 1,000 over 2 replicas", "ms", str(exc))]
    per_replica = 100 if quick else 500
    with tempfile.TemporaryDirectory(prefix="bench-bus-") as tmp:
        workdir = Path(tmp)
        redis_proc, redis_url = _start_redis(workdir)
        try:
            last, first_remote, setup_s = fan_out(redis_url, per_replica, 3 if quick else 5)
            without, with_bus, busy = read_cost(workdir, redis_url, clients=16, seconds=1.5 if quick else 4.0,
                                                pairs=2 if quick else 4)
        finally:
            stop_process(redis_proc)  # type: ignore[arg-type]
    total = 2 * per_replica
    value = median(last)
    rps = [median([r.rps for r in runs]) for runs in (without, with_bus, busy)]
    ratio = rps[1] / rps[0]
    return [
        Row("bus_fanout_ms", f"bus fan-out to {total:,} subscribers over 2 replicas", value, "ms", "< 1000 (last)",
            value < 1000,
            f"publish on A to the last of {total} legacy sessions ({per_replica} per replica, opened in "
            f"{setup_s:.1f} s); rounds {', '.join(f'{v:.0f}' for v in last)} ms; first receiver on B "
            f"{median(first_remote):.1f} ms"),
        Row("bus_read_ratio", "read throughput with --bus / without", ratio, "x", ">= 0.95 (none measurable)",
            ratio >= 0.95,
            f"16 clients, median of {len(without)} A/B pairs: {rps[0]:.0f} reads/s without, {rps[1]:.0f} with an "
            f"idle bus, {rps[2]:.0f} while the bus carries 100 notifications/s "
            f"(runs without {', '.join(f'{r.rps:.0f}' for r in without)}; with "
            f"{', '.join(f'{r.rps:.0f}' for r in with_bus)})",
            {"rps_without": rps[0], "rps_with_bus": rps[1], "rps_with_traffic": rps[2]}),
    ]


if __name__ == "__main__":
    for row in run("--quick" in sys.argv[1:]):
        mark = {True: "met", False: "NOT met", None: "n/a"}[row.met]
        value = "-" if row.value is None else f"{row.value:.2f} {row.unit}"
        print(f"{row.label}: {value} (goal {row.goal}: {mark})\n    {row.detail}")
