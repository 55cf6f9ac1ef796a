"""resources/list with 10,000 template instances: a page, a walk of every page, and the page after an edit.

`python bench/instances_bench.py [--quick]`; `run(quick)` gives the rows in bench/run.py's format.
A real engine with live data and its snippet pool over HTTP; one real SDK client lists.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp import Client

from bench.common import Row, median
from resources_qt.live import LiveData
from resources_qt.project import load_project
from resources_qt.server.factory import build_server
from resources_qt.snippets import bind_project, create_pool

COUNT = 10_000
GOAL_MS = 20.0
GOAL = "< 20 ms"

PROJECT = """format = 1

[server]
name = "instances-bench"
page_size = 100
reader_timeout = 30.0

[[resources]]
name = "item"
uri_template = "items://{id}"
mime_type = "text/plain"
instances = '''
def instances():
    return [{"id": str(i), "title": "item %d" % i} for i in range(COUNT)]
'''
reader = "def read(uri, params):\\n    return params['id']\\n"
"""


async def _measure(url: str, repeats: int, edit: Callable[[], None]) -> tuple[list[float], float, int, float]:
    async with Client(url, mode="legacy", read_timeout_seconds=120) as client:
        await client.list_resources()  # the first run, at start
        pages = []
        for _ in range(repeats):
            started = time.perf_counter()
            await client.list_resources()
            pages.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        cursor: str | None = None
        walked = 0
        while True:
            page = await client.list_resources(cursor=cursor)
            walked += 1
            cursor = page.next_cursor
            if cursor is None:
                break
        walk_s = time.perf_counter() - started
        edit()
        started = time.perf_counter()
        await client.list_resources()
        edited_ms = (time.perf_counter() - started) * 1000
    return pages, walk_s, walked, edited_ms


def run(quick: bool) -> list[Row]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "instances.toml"
        path.write_text(PROJECT.replace("COUNT", str(COUNT)))
        project = load_project(path)
        pool = create_pool(project)
        pool.start()
        server = build_server(project, bind_project(project, pool))
        live = LiveData(server, project, pool)
        try:
            url = server.start_http("127.0.0.1", 0)
            live.start()
            spec = project.resources[0]
            edited = replace(project, resources=[replace(spec, instances=spec.instances + "\n# edited\n")])
            pages, walk_s, walked, edited_ms = asyncio.run(
                _measure(url, 10 if quick else 50, lambda: live.set_project(edited))
            )
        finally:
            live.close()
            server.close()
            pool.close()
    page_ms = median(pages)
    detail = (f"first page, the answer reused: median {page_ms:.1f} ms of {len(pages)}; walking all {walked} pages "
              f"{walk_s:.2f} s; the first page after the snippet is edited (runs and parses 10,000) "
              f"{edited_ms:.0f} ms. Times at the client, one SDK client in the same process")
    return [Row("instances_list_page_ms_10k", "resources/list page, 10k instances", round(page_ms, 1), "ms", GOAL,
                page_ms < GOAL_MS, detail,
                {"instances_walk_s_10k": round(walk_s, 2), "instances_edited_page_ms_10k": round(edited_ms)})]


if __name__ == "__main__":
    for row in run("--quick" in sys.argv):
        print(f"{row.label}: {row.value} {row.unit} (goal {row.goal}); {row.detail}; {row.extra}")
