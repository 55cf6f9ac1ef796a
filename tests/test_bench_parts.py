"""The GUI benchmarks find the parts of the tree they drive (a move of the window made them all "not available")."""

from __future__ import annotations

from bench.gui_bench import missing_parts


def test_gui_bench_finds_the_window_facade_and_workers() -> None:
    assert missing_parts() is None
