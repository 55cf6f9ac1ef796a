"""FileWatch on its own: a pattern the loader would refuse, carried by a project built in memory."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from resources_qt.live.watch_files import FileWatch


async def _ignore(hit: Mapping[str, tuple[str, ...]]) -> None:
    del hit


def test_a_pattern_the_matcher_refuses_is_skipped_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    watch = FileWatch(tmp_path, {"r": ["data/[z-a].csv", "index.txt"], "s": ["[!]"]}, _ignore)
    assert watch.affected(["index.txt", "data/b.csv"]) == {"r": ("index.txt",)}
    assert not watch.empty
    assert FileWatch(tmp_path, {"s": ["[!]"]}, _ignore).empty
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("Resource r: not watching 'data/[z-a].csv'" in m and "runs backwards" in m for m in warned)
