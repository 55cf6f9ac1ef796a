"""Glob patterns of `watch.files`: matching project-relative paths, and the folders to watch for them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

__all__ = ["WatchPattern", "watch_roots"]

_MAGIC = re.compile(r"[*?\[]")


class WatchPattern:
    """One pattern: `*` and `?` within a path segment, `**` across segments, `[...]` sets.

    A pattern naming a folder (`notes`) also matches everything below it, so
    watching a folder is just its name.
    """

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern.replace("\\", "/").strip("/")
        self._regex = re.compile(_translate(self.pattern))

    def matches(self, relative: str) -> bool:
        path = relative.replace("\\", "/")
        if self._regex.fullmatch(path):
            return True
        # A change inside a watched folder (or the folder itself going away) counts too.
        parts = path.split("/")
        return any(self._regex.fullmatch("/".join(parts[:n])) for n in range(1, len(parts)))

    def base(self) -> PurePosixPath:
        """The fixed folder part before the first wildcard (`data` for `data/*.csv`)."""
        fixed: list[str] = []
        for part in self.pattern.split("/"):
            if _MAGIC.search(part):
                break
            fixed.append(part)
        return PurePosixPath(*fixed) if fixed else PurePosixPath(".")

    def __repr__(self) -> str:
        return f"WatchPattern({self.pattern!r})"


def _translate(pattern: str) -> str:
    out: list[str] = []
    parts = pattern.split("/")
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        out.append(_segment(part))
        if not last:
            out.append("/")
    return "".join(out)


def _segment(part: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(part):
        ch = part[i]
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = part.find("]", i + 2)
            if end < 0:
                out.append(re.escape(ch))
            else:
                body = part[i + 1 : end]
                negate = body.startswith("!")
                body = re.escape(body[1:] if negate else body).replace("\\-", "-")
                out.append(f"[{'^' if negate else ''}{body}]")
                i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def watch_roots(root: Path, patterns: Iterable[WatchPattern]) -> list[Path]:
    """The existing folders to watch so every pattern is covered, none inside another.

    A pattern's folder that does not exist yet is covered by its nearest
    existing parent inside the project (a file may appear later).
    """
    found: set[Path] = set()
    for pattern in patterns:
        folder = root / pattern.base()
        while folder != root and not folder.is_dir():
            folder = folder.parent
        found.add(folder)
    ordered = sorted(found, key=lambda p: len(p.parts))
    kept: list[Path] = []
    for folder in ordered:
        if not any(folder == k or k in folder.parents for k in kept):
            kept.append(folder)
    return kept
