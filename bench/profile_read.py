"""Where a resources/read spends its time: cProfile of the engine's loop thread under a read loop.

`python bench/profile_read.py [READS] [--clients N]` serves the benchmark project in-process (snippet
reader in a worker, as `serve` does) and prints the loop thread's top entries by own and cumulative time.
"""

from __future__ import annotations

import argparse
import asyncio
import pstats
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from bench.profiling import server_thread_profile
from bench.projects import small_project
from bench.rpc_client import RpcError, RpcSession
from bench.sdk_server import SMALL_URI


async def _reads(url: str, count: int, clients: int) -> float:
    async with httpx.AsyncClient(timeout=30.0) as http:
        sessions = [RpcSession(http, url) for _ in range(clients)]
        await asyncio.gather(*(s.initialize() for s in sessions))
        started = time.perf_counter()

        async def loop(session: RpcSession) -> None:
            for _ in range(count // clients):
                await session.read(SMALL_URI)

        await asyncio.gather(*(loop(s) for s in sessions))
        return time.perf_counter() - started


def _warm_up(url: str) -> None:
    # Workers replaced by the project's settings may take seconds to come up on a loaded machine,
    # longer than the reader timeout: wait for them before measuring.
    deadline = time.monotonic() + 120
    while True:
        try:
            asyncio.run(_reads(url, 50, 1))
            return
        except RpcError:
            if time.monotonic() > deadline:
                raise


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("reads", nargs="?", type=int, default=400)
    parser.add_argument("--clients", type=int, default=1)
    parser.add_argument("--sort", default="tottime", choices=["tottime", "cumulative"])
    args = parser.parse_args()
    from resources_qt.project import load_project
    from resources_qt.server import ResourceServer
    from resources_qt.snippets import SnippetPool, bind_project

    with tempfile.TemporaryDirectory() as tmp:
        project = load_project(small_project(Path(tmp) / "small.toml"))
    pool = SnippetPool(workers=project.server.workers, timeout=project.server.reader_timeout)
    pool.start()
    server = ResourceServer(bind_project(project, pool), name="profile", version="1")
    url = server.start_http("127.0.0.1", 0)
    out: list[str] = []
    stats: list[pstats.Stats] = []
    try:
        _warm_up(url)
        with server_thread_profile(server, out, limit=30, sort=args.sort, keep=stats):
            seconds = asyncio.run(_reads(url, args.reads, args.clients))
    finally:
        server.close()
        pool.close()
    print(f"{args.reads} reads with {args.clients} client(s) in {seconds:.2f} s "
          f"({args.reads / seconds:.0f}/s, {seconds / args.reads * 1000:.2f} ms each)")
    print(out[0])
    print("Per read, cumulative, for the engine's own functions and the SDK's request entry points:")
    rows = []
    for (path, line, name), (_cc, calls, _tt, cumulative, _callers) in stats[0].stats.items():  # type: ignore[attr-defined]
        if "resources_qt" in path or name in ("_handle_post_request", "run_asgi", "_on_request"):
            rows.append((cumulative, path.split("site-packages/")[-1].split("resources_qt/")[-1], line, name, calls))
    for cumulative, path, line, name, calls in sorted(rows, reverse=True)[:20]:
        print(f"{cumulative / args.reads * 1000:8.3f} ms  {path}:{line} {name} (x{calls})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
