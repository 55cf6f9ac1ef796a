"""The newest change of a resource's watched files, bounded, and lastModified dates read as a client would."""

from __future__ import annotations

import datetime
import os
from pathlib import Path

from resources_qt.lint.watched import check_last_modified, newest_change, parse_last_modified
from resources_qt.project import ResourceSpec
from resources_qt.project.model import WatchSpec


def _touch(path: Path, stamp: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x")
    os.utime(path, (stamp, stamp))


def test_the_newest_matching_file_wins_and_others_are_ignored(tmp_path: Path) -> None:
    _touch(tmp_path / "data" / "old.csv", 1_000_000)
    _touch(tmp_path / "data" / "new.csv", 2_000_000)
    _touch(tmp_path / "data" / "newest.txt", 3_000_000)  # does not match *.csv
    _touch(tmp_path / "other" / "x.csv", 4_000_000)  # outside the pattern's folder
    change = newest_change(tmp_path, ["data/*.csv"])
    assert change is not None and change.path == "data/new.csv"
    assert change.when == datetime.datetime.fromtimestamp(2_000_000, tz=datetime.UTC)
    assert newest_change(tmp_path, ["nothing/**"]) is None


def test_the_walk_stops_at_its_bound(tmp_path: Path) -> None:
    for number in range(30):
        _touch(tmp_path / "many" / f"{number:02d}.txt", 1_000_000 + number)
    bounded = newest_change(tmp_path, ["many"], limit=10)
    assert bounded is not None and bounded.path == "many/09.txt"  # sorted walk: the first ten only
    full = newest_change(tmp_path, ["many"])
    assert full is not None and full.path == "many/29.txt"


def test_dates_are_iso_8601_with_utc_when_no_zone_is_given() -> None:
    assert parse_last_modified("2024-05-01T12:00:00Z") == datetime.datetime(2024, 5, 1, 12, tzinfo=datetime.UTC)
    assert parse_last_modified("2024-05-01") == datetime.datetime(2024, 5, 1, tzinfo=datetime.UTC)
    assert parse_last_modified("2024-05-01T14:00:00+02:00") == parse_last_modified("2024-05-01T12:00:00Z")
    assert parse_last_modified("yesterday") is None


def test_a_date_no_client_can_read_is_a_finding(tmp_path: Path) -> None:
    _touch(tmp_path / "notes" / "a.md", 1_000_000)
    spec = ResourceSpec(name="n", uri="n://x", watch=WatchSpec(files=["notes"]))
    (finding,) = check_last_modified(spec, [("resource 'n'", "last tuesday")], root=tmp_path)
    assert finding.rule == "last-modified-stale" and "not an ISO 8601 date-time" in finding.message
    # Within a second of the change is not stale (a declaration given to the second).
    stamp = datetime.datetime.fromtimestamp(1_000_000, tz=datetime.UTC).replace(microsecond=0)
    assert check_last_modified(spec, [("resource 'n'", stamp.isoformat())], root=tmp_path) == []
    # Nothing declared, or nothing watched: no files are looked at.
    assert check_last_modified(spec, [("resource 'n'", "")], root=tmp_path) == []
    assert check_last_modified(ResourceSpec(name="n", uri="n://x"), [("r", "2000-01-01")], root=tmp_path) == []
