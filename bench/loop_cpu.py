"""CPU per resources/read of the server's loop thread, from /proc/<pid>/task/<tid>/schedstat, under wrk.

`python bench/loop_cpu.py [--seconds S] [--connections N] [--rounds R]` serves the wrk bench's project
(plain and hinted resources, the reader in a worker process) in this process, finds the loop thread's
id, and runs wrk against each resource in turn. Per read it reports the loop thread's CPU time, the
pool's threads (every other thread of this process) and the worker processes'. CPU time per read does
not depend on how busy the machine is the way reads/s does: other processes take CPU away from the
server, not add to what one read costs it (cache and frequency effects aside). Plain minus hinted is
what the worker call costs the loop. `--pool-only` measures `SnippetPool.read` awaited in a row on
this thread's own loop instead (no HTTP): the worker call alone, as its loop thread pays for it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.read_wrk import (
    _LUA_LEGACY,
    _LUA_MODERN,
    HINTED_URI,
    MODERN,
    _bench_project,
    _session,
    _session_line,
    _wrk,
)
from bench.rpc_client import ACCEPT, PROTOCOL
from bench.sdk_server import SMALL_URI


def _thread_ns(pid: int, tid: int) -> int:
    try:
        with open(f"/proc/{pid}/task/{tid}/schedstat", encoding="ascii") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def _process_ns(pid: int) -> int:
    total = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for tid in tids:
        total += _thread_ns(pid, int(tid))
    return total


class Sample:
    """CPU ns of the loop thread, the other threads of this process, and the workers, at one moment."""

    def __init__(self, loop_tid: int, workers: list[int]) -> None:
        me = os.getpid()
        self.loop = _thread_ns(me, loop_tid)
        self.others = _process_ns(me) - self.loop
        self.workers = sum(_process_ns(pid) for pid in workers)


async def _native_id() -> int:
    return threading.get_native_id()


_SOURCE = "def read(uri, params):\n    return 'hello from the benchmark resource\\n'\n"


async def _pool_reads(count: int, rounds: int) -> list[float]:
    from resources_qt.snippets import SnippetPool

    pool = SnippetPool(workers=2, timeout=5.0)
    pool.start()
    pool.wait_ready(60)
    try:
        for _ in range(200):  # warm: the workers hold the snippet, the loop holds a worker
            await pool.read(key="k", source=_SOURCE, uri=SMALL_URI, params={})
        per_call = []
        for _ in range(rounds):
            started = time.thread_time_ns()
            for _ in range(count):
                await pool.read(key="k", source=_SOURCE, uri=SMALL_URI, params={})
            per_call.append((time.thread_time_ns() - started) / count / 1000)
        return per_call
    finally:
        pool.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--connections", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--era", choices=["legacy", MODERN], default="legacy")
    parser.add_argument("--pool-only", action="store_true")
    args = parser.parse_args()
    if args.pool_only:
        rounds = asyncio.run(_pool_reads(2000, max(args.rounds, 5)))
        print(f"SnippetPool.read on this thread's loop: {statistics.median(rounds):.0f} us CPU per call "
              "(median; rounds: " + ", ".join(f"{v:.0f}" for v in rounds) + ")")
        return 0
    from resources_qt.project import load_project
    from resources_qt.server import ResourceServer
    from resources_qt.snippets import SnippetPool, bind_project

    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        project = load_project(_bench_project(workdir / "small.toml"))
        pool = SnippetPool(workers=2, timeout=project.server.reader_timeout)
        pool.start()
        pool.wait_ready(60)
        server = ResourceServer(bind_project(project, pool), name="loop-cpu", version="1")
        url = server.start_http("127.0.0.1", 0)
        try:
            future = server.submit(_native_id())
            assert future is not None
            loop_tid = future.result(10)
            scripts = {}
            for label, uri in (("plain", SMALL_URI), ("hinted", HINTED_URI)):
                session = asyncio.run(_session(url, uri))
                template, protocol = (_LUA_LEGACY, PROTOCOL) if args.era == "legacy" else (_LUA_MODERN, MODERN)
                script = workdir / f"{label}.lua"
                script.write_text(template.format(uri=uri, accept=ACCEPT, protocol=protocol,
                                                  session=_session_line(session)))
                scripts[label] = script
                _wrk(url, script, 2, 1.0)  # warm-up
            per: dict[str, dict[str, list[float]]] = {k: {"loop": [], "others": [], "workers": []} for k in scripts}
            rps: dict[str, list[float]] = {k: [] for k in scripts}
            for _ in range(args.rounds):
                for label, script in scripts.items():
                    workers = pool.worker_pids()
                    before = Sample(loop_tid, workers)
                    run = _wrk(url, script, args.connections, args.seconds)
                    after = Sample(loop_tid, workers)
                    reads = run.rps * max(1, round(args.seconds))
                    per[label]["loop"].append((after.loop - before.loop) / reads / 1000)
                    per[label]["others"].append((after.others - before.others) / reads / 1000)
                    per[label]["workers"].append((after.workers - before.workers) / reads / 1000)
                    rps[label].append(run.rps)
        finally:
            server.close()
            pool.close()
    print(f"{args.era}, {args.connections} connection(s), {args.rounds} rounds of {args.seconds:g} s; "
          "CPU us per read (median of rounds):")
    for label in scripts:
        loop, others, in_workers = (statistics.median(per[label][k]) for k in ("loop", "others", "workers"))
        print(f"  {label:7s} loop thread {loop:6.0f}  other threads {others:5.0f}  workers {in_workers:5.0f}  "
              f"({statistics.median(rps[label]):.0f} reads/s, rounds: "
              + ", ".join(f"{v:.0f}" for v in per[label]["loop"]) + ")")
    plain, hinted = (statistics.median(per[k]["loop"]) for k in ("plain", "hinted"))
    print(f"  the worker call's loop CPU (plain - hinted): {plain - hinted:.0f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
