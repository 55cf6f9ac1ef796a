"""The benchmarks' own parts work: the GUI bench finds what it drives, the slow-reader bench serves its readers."""

from __future__ import annotations

import asyncio
from pathlib import Path

from helpers.pools import MEMORY_MB

from bench.gui_bench import missing_parts
from bench.sdk_server import SMALL_TEXT
from bench.slow_readers import API_URI, ASYNC_URI, SYNC_URI, api_read, async_read, sync_read
from bench.slow_wrk import _project
from resources_qt.project import load_project
from resources_qt.snippets import SnippetPool


def test_gui_bench_finds_the_window_facade_and_workers() -> None:
    # A move of the window made every GUI benchmark "not available".
    assert missing_parts() is None


def test_the_slow_readers_answer_alike_in_our_project_and_in_the_peers(tmp_path: Path) -> None:
    project = load_project(_project(tmp_path / "slow.toml"))
    readers = {spec.uri: spec.reader for spec in project.resources}
    assert set(readers) == {SYNC_URI, ASYNC_URI, API_URI}
    with SnippetPool(workers=1, timeout=10, memory_limit_mb=MEMORY_MB) as pool:
        for uri, source in readers.items():
            assert pool.submit_read(key=uri, source=source, uri=uri, params={}).result(30)[0].text == SMALL_TEXT
    assert sync_read() == asyncio.run(async_read()) == asyncio.run(api_read()) == SMALL_TEXT
