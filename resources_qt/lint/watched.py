"""`lastModified` against the files a resource watches: the newest change of a `watch.files` match, bounded."""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from resources_qt.lint.findings import Finding
from resources_qt.live.patterns import WatchPattern
from resources_qt.project import ResourceSpec

__all__ = ["MAX_FILES", "Change", "check_last_modified", "newest_change", "parse_last_modified"]

MAX_FILES = 20_000
"""Files looked at per resource: a pattern over a huge folder must not stall a lint."""

_SLACK_S = 1.0
"""A declaration given to the second is not stale against a change within the same second."""


@dataclass(frozen=True)
class Change:
    """The newest change among a resource's watched files: the path (project-relative) and when."""

    path: str
    when: datetime.datetime


def newest_change(root: Path, patterns: Iterable[str], *, limit: int = MAX_FILES) -> Change | None:
    """The most recently modified file under `root` matching any pattern; None when none matches.

    At most `limit` files are looked at (the walk stops there), and links are not followed out.
    """
    compiled = [WatchPattern(pattern) for pattern in patterns]
    if not compiled:
        return None
    newest: tuple[float, str] | None = None
    seen = 0
    # From the project folder down, into the folders some pattern may match below (links are not followed).
    for current, dirs, files in os.walk(root):
        here = Path(current).relative_to(root).as_posix()
        dirs[:] = sorted(
            d for d in dirs if any(p.may_match_below(d if here == "." else f"{here}/{d}") for p in compiled)
        )
        for name in sorted(files):
            seen += 1
            if seen > limit:
                return _change(newest)
            path = Path(current) / name
            relative = path.relative_to(root).as_posix()
            if not any(pattern.matches(relative) for pattern in compiled):
                continue
            try:
                mtime = path.stat().st_mtime
            except OSError:
                continue  # removed meanwhile
            if newest is None or mtime > newest[0]:
                newest = (mtime, relative)
    return _change(newest)


def _change(newest: tuple[float, str] | None) -> Change | None:
    if newest is None:
        return None
    return Change(newest[1], datetime.datetime.fromtimestamp(newest[0], tz=datetime.UTC))


def parse_last_modified(text: str) -> datetime.datetime | None:
    """An ISO 8601 date or date-time as an aware datetime (UTC when it names no zone); None if it is not one."""
    try:
        when = datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=datetime.UTC)


def check_last_modified(spec: ResourceSpec, declared: Iterable[tuple[str, str]], *, root: Path | None,
                        limit: int = MAX_FILES) -> list[Finding]:
    """`last-modified-stale` findings of `spec`: each (label, lastModified) declared for it against its files.

    `declared` holds what the listing says for the resource or its instances; the watched files are
    looked at once, and only when something declares a date.
    """
    wanted = [(label, value) for label, value in declared if value]
    if not wanted or spec.watch is None or not spec.watch.files or root is None:
        return []
    change = newest_change(root, spec.watch.files, limit=limit)
    findings: list[Finding] = []
    for label, value in wanted:
        when = parse_last_modified(value)
        if when is None:
            findings.append(Finding(
                rule="last-modified-stale", level="warning", resource=spec.name, field="annotations",
                message=f"{label} declares lastModified {value!r}, which is not an ISO 8601 date-time: no client "
                "can tell whether its copy is current",
            ))
        elif change is not None and (change.when - when).total_seconds() > _SLACK_S:
            findings.append(Finding(
                rule="last-modified-stale", level="warning", resource=spec.name, field="annotations",
                message=f"{label} declares lastModified {value} but its watched file {change.path} changed at "
                f"{change.when.isoformat(timespec='seconds')}",
            ))
    return findings
