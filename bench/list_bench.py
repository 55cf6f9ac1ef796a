"""First page of resources/list with 100,000 direct resources, through the real engine and a real client."""

from __future__ import annotations

import asyncio
import time

import httpx

from bench.common import Row, median
from bench.inproc import direct_collection, serving
from bench.rpc_client import RpcSession

COUNT = 100_000
GOAL_MS = 20.0
GOAL = "< 20 ms"


async def _first_pages(url: str, repeats: int) -> tuple[float, list[float], int]:
    async with httpx.AsyncClient(timeout=60.0) as http:
        session = RpcSession(http, url)
        await session.initialize()
        times = []
        size = 0
        for _ in range(repeats + 1):
            start = time.perf_counter()
            result = await session.call("resources/list")
            times.append((time.perf_counter() - start) * 1000)
            size = len(result["resources"])
            assert result.get("nextCursor"), "a 100,000-resource listing must have a next page"
        await session.close()
    return times[0], times[1:], size


def run(quick: bool) -> list[Row]:
    try:
        import resources_qt.server  # noqa: F401
    except ImportError as exc:
        return [Row.unavailable("list_first_page_ms_100k", "resources/list first page, 100k", "ms", str(exc), GOAL)]
    build_start = time.perf_counter()
    resources = direct_collection(COUNT)
    build_s = time.perf_counter() - build_start
    with serving(resources) as server:
        cold, warm, size = asyncio.run(_first_pages(server.url, 5 if quick else 20))
    warm_ms = median(warm)
    detail = (f"first request after start {cold:.1f} ms (the split is read lazily, as far as the page needs); "
              f"later first pages {warm_ms:.1f} ms; page size {size}; registering 100k resources took {build_s:.1f} s")
    return [Row("list_first_page_ms_100k", "resources/list first page, 100k", round(cold, 1), "ms", GOAL,
                cold < GOAL_MS,
                detail, {"list_first_page_ms_100k_warm": round(warm_ms, 2),
                         "register_100k_direct_s": round(build_s, 2)})]
