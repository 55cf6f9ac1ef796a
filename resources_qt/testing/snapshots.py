"""Snapshots: a read's contents recorded as readable text beside the project, one file per test."""

from __future__ import annotations

import hashlib
import logging
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from resources_qt.testing.observed import ObservedRead
from resources_qt.testing.spec import TestSpec

__all__ = ["MAX_SCANNED", "SnapshotStore", "render_snapshot", "safe_file_name", "snapshot_dir_for"]

logger = logging.getLogger(__name__)

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_STEM = 80
_HEADER = b"=== "
"""How every snapshot file starts (`render_snapshot`): a file that does not is not ours to report or delete."""
MAX_SCANNED = 10_000
"""Entries of the snapshot directory looked at when looking for orphans (the rest are not reported)."""


def snapshot_dir_for(project_path: Path) -> Path:
    """`<project>.snapshots/` beside the project file (`desk.toml` -> `desk.snapshots/`)."""
    return project_path.with_name(f"{project_path.stem}.snapshots")


def safe_file_name(test_name: str) -> str:
    """A portable file name for a test: its name when that is safe, else a slug plus a short hash of the name.

    The hash keeps two names that slug alike ("a b" and "a/b") in different files.
    """
    slug = _UNSAFE.sub("_", test_name).strip("._-")[:_MAX_STEM]
    if slug == test_name and slug:
        return f"{slug}.txt"
    digest = hashlib.sha256(test_name.encode("utf-8")).hexdigest()[:10]
    return f"{slug or 'test'}-{digest}.txt"


def render_snapshot(observed: ObservedRead) -> str:
    """The contents as diff-friendly text: a header line per content, then its text or, for a blob, hash and size."""
    parts: list[str] = []
    count = len(observed.contents)
    for number, content in enumerate(observed.contents, start=1):
        parts.append(f"=== content {number} of {count}: {content.uri} ({content.mime_type or 'no MIME type'})\n")
        if content.blob is not None:
            parts.append(f"blob sha256={content.sha256} size={len(content.blob)} bytes\n")
        else:
            # Always one newline more, so "x" and "x\n" snapshot differently.
            parts.append(f"{content.text or ''}\n")
    if not observed.contents:
        parts.append("=== no contents\n")
    return "".join(parts)


class SnapshotStore:
    """Snapshot files of one project in `directory` (created on the first write)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path_for(self, test_name: str) -> Path:
        return self.directory / safe_file_name(test_name)

    def read(self, test_name: str) -> str | None:
        """The recorded snapshot, or None when none is recorded."""
        try:
            return self.path_for(test_name).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def write(self, test_name: str, text: str) -> Path:
        """Record `text` atomically (a reader never sees half a snapshot); returns the file."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.path_for(test_name)
        handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
                stream.write(text)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return path

    def orphans(self, tests: Sequence[TestSpec]) -> list[Path]:
        """Snapshot files no test of `tests` records (its test is gone, renamed, or no longer snapshots).

        Only regular files named `*.txt` that start as `render_snapshot` writes
        are counted, so a README or a link placed there is never reported (nor
        deleted); at most MAX_SCANNED entries are looked at.
        """
        owned = {safe_file_name(spec.name) for spec in tests if spec.expect.wants_snapshot}
        found: list[Path] = []
        try:
            with os.scandir(self.directory) as entries:
                for count, entry in enumerate(entries):
                    if count >= MAX_SCANNED:
                        logger.info("Looked for orphan snapshots in the first %d entries of %s only",
                                    MAX_SCANNED, self.directory)
                        break
                    if entry.name in owned or not entry.name.endswith(".txt") or entry.name.startswith("."):
                        continue
                    if _is_snapshot(Path(entry.path)):
                        found.append(Path(entry.path))
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:
            logger.warning("Cannot look for orphan snapshots in %s: %s", self.directory, exc.strerror or exc)
            return []
        return sorted(found)

    def delete(self, paths: Iterable[Path]) -> list[str]:
        """Delete snapshot files of this store; returns one message per file that could not be deleted."""
        problems: list[str] = []
        for path in paths:
            if path.parent != self.directory:
                problems.append(f"{path}: not a file of {self.directory}")
                continue
            try:
                path.unlink()
            except FileNotFoundError:
                continue  # gone already: what was asked
            except OSError as exc:
                problems.append(f"{path}: {exc.strerror or exc}")
        return problems


def _is_snapshot(path: Path) -> bool:
    """A regular file (not a link) that starts as a snapshot does; reads a few bytes only."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
        with path.open("rb") as stream:
            return stream.read(len(_HEADER)) == _HEADER
    except OSError:
        return False
