"""Live data: file write -> `updated` at a subscriber (goal median < 300 ms), and polling 1,000 subscribed URIs.

`python bench/live_bench.py [--quick]`; `run(quick)` gives the rows for bench/run.py ("live").
"""

from __future__ import annotations

import asyncio
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mcp_types as types
from mcp import Client

from bench.common import Row, median, percentile
from resources_qt.live import LiveData
from resources_qt.project import load_project
from resources_qt.server.factory import build_server
from resources_qt.snippets import bind_project, create_pool

GOAL_MS = 300.0
POLLED_URIS = 1000
INTERVAL_S = 1.0

PROJECT = """format = 1

prelude = '''
VALUES = {str(i): i for i in range(2000)}
'''

[server]
name = "live-bench"
notifications = true
subscriptions = true
workers = 2
max_subscriptions = 1000

[[resources]]
name = "note"
uri_template = "notes://{name}"
mime_type = "text/markdown"
watch = { files = ["notes/*.md"] }
reader = '''
def read(uri, params):
    return (PROJECT_DIR / "notes" / params["name"]).read_text()
'''

[[resources]]
name = "counter"
uri_template = "poll://{id}"
mime_type = "application/json"
watch = { interval = %(interval)s }
reader = '''
def read(uri, params):
    return {"id": params["id"], "value": VALUES.get(params["id"], 0)}
'''
"""


class _Served:
    def __init__(self, root: Path) -> None:
        path = root / "live.toml"
        (root / "notes").mkdir()
        (root / "notes" / "a.md").write_text("0")
        path.write_text(PROJECT % {"interval": INTERVAL_S})
        self.project = load_project(path)
        self.pool = create_pool(self.project)
        self.pool.start()
        self.server = build_server(self.project, bind_project(self.project, self.pool))
        self.live = LiveData(self.server, self.project, self.pool)
        self.url = self.server.start_http(port=0)
        self.live.start()
        if not self.live.wait_ready(10):
            raise RuntimeError("the watcher did not start")

    def close(self) -> None:
        self.live.close()
        self.server.close()
        self.pool.close()


async def _write_latency(served: _Served, root: Path, samples: int) -> list[float]:
    arrived: asyncio.Queue[float] = asyncio.Queue()

    async def handler(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification) and message.params.uri == "notes://a.md":
            arrived.put_nowait(time.perf_counter())

    out: list[float] = []
    client = Client(served.url, mode="2026-07-28", message_handler=handler, read_timeout_seconds=15)
    async with client, client.listen(resource_subscriptions=["notes://a.md"]):
        while not served.server.sessions():
            await asyncio.sleep(0.01)
        for i in range(samples):
            written = time.perf_counter()
            (root / "notes" / "a.md").write_text(str(i + 1))
            got = await asyncio.wait_for(arrived.get(), 10)
            out.append((got - written) * 1000)
            await asyncio.sleep(0.4)  # past the burst window: the next write is a new change
    return out


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


async def _polling_cost(served: _Served, rounds: int) -> tuple[list[float], float, int]:
    """(seconds each polling round of 1,000 URIs took, CPU seconds per round, reads measured)."""
    uris = [f"poll://{i}" for i in range(POLLED_URIS)]
    client = Client(served.url, mode="2026-07-28", read_timeout_seconds=30)
    async with client, client.listen(resource_subscriptions=uris):
        # The first full round sets the baselines; measure whole rounds after it.
        while len(served.live.poll_rounds("counter")) < 1:
            await asyncio.sleep(0.05)
        reads, cpu = served.live.poll_reads("counter"), _cpu()
        while len(served.live.poll_rounds("counter")) < 1 + rounds:
            await asyncio.sleep(0.05)
        spent = _cpu() - cpu
        made = served.live.poll_reads("counter") - reads
        times = served.live.poll_rounds("counter")[1 : 1 + rounds]
    return times, spent / rounds, made


def run(quick: bool) -> list[Row]:
    samples = 5 if quick else 20
    rounds = 2 if quick else 5
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        try:
            served = _Served(root)
        except RuntimeError as exc:
            return [Row.unavailable("live_write_to_updated_ms", "file write -> updated", "ms", str(exc))]
        try:
            latencies = asyncio.run(_write_latency(served, root, samples))
            times, cpu, reads = asyncio.run(_polling_cost(served, rounds))
        finally:
            served.close()
    value = median(latencies)
    latency = Row(
        "live_write_to_updated_ms", "file write -> updated at a subscriber", round(value, 1), "ms",
        f"< {GOAL_MS:g} ms", value < GOAL_MS,
        f"{samples} writes, p95 {percentile(latencies, 95):.0f} ms, max {max(latencies):.0f} ms "
        f"(watchfiles, 150 ms quiet window); load average {os.getloadavg()[0]:.1f}",
        {"live_write_to_updated_p95_ms": round(percentile(latencies, 95), 1)},
    )
    polling = Row(
        "live_poll_round_s_1000", f"polling {POLLED_URIS} subscribed URIs (one round)", round(median(times), 3),
        "s", "", None,
        f"one round = {POLLED_URIS} reads through the snippet pool + digests, every {INTERVAL_S:g} s; rounds "
        + ", ".join(f"{t:.2f}" for t in times)
        + f" s; CPU (server + snippet workers) {cpu:.2f} s per round ({reads} reads measured)",
        {"live_poll_cpu_s_per_round_1000": round(cpu, 3)},
    )
    return [latency, polling]


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        print(f"{row.label}: {row.value} {row.unit} (goal {row.goal or '-'}, met: {row.met}) - {row.detail}")
