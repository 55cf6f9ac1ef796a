"""watch.files patterns: what they match, and which folders get watched."""

from __future__ import annotations

from pathlib import Path

import pytest

from resources_qt.live.patterns import WatchPattern, watch_roots


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("data/*.csv", "data/a.csv", True),
        ("data/*.csv", "data/sub/a.csv", False),
        ("data/**/*.csv", "data/sub/deep/a.csv", True),
        ("data/**/*.csv", "data/a.csv", True),
        ("notes", "notes/a.md", True),
        ("notes", "notes/sub/a.md", True),
        ("notes", "notes", True),
        ("notes", "notebook/a.md", False),
        ("index.txt", "index.txt", True),
        ("index.txt", ".index.txt.tmp", False),
        ("data/file?.json", "data/file1.json", True),
        ("data/[ab].txt", "data/b.txt", True),
        ("data/[!ab].txt", "data/b.txt", False),
        ("a.b", "aXb", False),
    ],
)
def test_pattern_matching(pattern: str, path: str, expected: bool) -> None:
    assert WatchPattern(pattern).matches(path) is expected


def test_watch_roots_are_the_existing_fixed_folders_none_inside_another(tmp_path: Path) -> None:
    (tmp_path / "data" / "sub").mkdir(parents=True)
    patterns = [WatchPattern(p) for p in ("data/*.csv", "data/sub/*.json", "later/*.txt", "index.txt")]
    roots = watch_roots(tmp_path, patterns)
    # "later" does not exist yet and "index.txt" is a file: the project folder covers both (and data).
    assert roots == [tmp_path]
    assert watch_roots(tmp_path, patterns[:2]) == [tmp_path / "data"]
