"""Glob patterns of `watch.files`: checked when loaded, matched against project-relative paths in linear time."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from resources_qt.errors import ValidationError

__all__ = ["WATCH_PATTERN_MAX_CHARS", "WatchPattern", "pattern_problem"]

WATCH_PATTERN_MAX_CHARS = 256
"""The longest `watch.files` pattern; a longer one is refused when the project loads."""

_MAGIC = re.compile(r"[*?\[]")


@dataclass(frozen=True, slots=True)
class _Chunk:
    """A run of a segment between `*`s: fixed length, literal text or a regex without quantifiers."""

    size: int
    literal: str | None
    regex: re.Pattern[str] | None

    def at(self, text: str, pos: int) -> bool:
        if self.literal is not None:
            return text.startswith(self.literal, pos)
        assert self.regex is not None
        return self.regex.match(text, pos) is not None

    def find(self, text: str, pos: int) -> int:
        """Where the chunk first fits at or after `pos` (-1: nowhere)."""
        if self.literal is not None:
            return text.find(self.literal, pos)
        assert self.regex is not None
        found = self.regex.search(text, pos)
        return -1 if found is None else found.start()


@dataclass(frozen=True, slots=True)
class _Segment:
    """One path segment's pattern: the chunks between its `*`s (no star: a single chunk)."""

    chunks: tuple[_Chunk, ...]
    starred: bool

    def matches(self, text: str) -> bool:
        # Greedy and without backtracking: the first chunk is anchored at the start, the last at the
        # end, and each middle chunk taken at its leftmost fit, which leaves the most room for the
        # rest. Every chunk has a fixed length, so each step is a bounded scan.
        chunks = self.chunks
        if not self.starred:
            only = chunks[0]
            return len(text) == only.size and only.at(text, 0)
        first, middle, last = chunks[0], chunks[1:-1], chunks[-1]
        if len(text) < first.size + last.size or not first.at(text, 0):
            return False
        pos = first.size
        end = len(text) - last.size
        for chunk in middle:
            found = chunk.find(text, pos)
            if found < 0 or found + chunk.size > end:
                return False
            pos = found + chunk.size
        return last.at(text, end)


_ANY_PATH = "tail"
"""A last `**`: any rest, however many segments (at least one, possibly empty)."""
_ANY_SEGMENTS = "segments"
"""A `**` before another segment: zero or more non-empty segments."""

_Part = _Segment | str


class WatchPattern:
    """One pattern: `*` and `?` within a path segment, `**` across segments, `[...]` sets.

    A pattern naming a folder (`notes`) also matches everything below it, so
    watching a folder is just its name. Matching takes time linear in the
    path's length times the pattern's (at most WATCH_PATTERN_MAX_CHARS), never
    exponential: each segment is matched greedily, segments by a set of states.

    Raises:
        ValidationError: (field "watch") the pattern is over the size limit or
            holds a set the matcher cannot take (`pattern_problem` says why).
    """

    def __init__(self, pattern: str) -> None:
        problem = pattern_problem(pattern)
        if problem is not None:
            raise ValidationError(problem, field="watch")
        self.pattern = pattern.replace("\\", "/").strip("/")
        parts = self.pattern.split("/")
        self._parts: tuple[_Part, ...] = tuple(
            (_ANY_PATH if index == len(parts) - 1 else _ANY_SEGMENTS) if part == "**" else _compile(part)
            for index, part in enumerate(parts)
        )

    def matches(self, relative: str) -> bool:
        """Whether the project-relative path, or a folder above it, matches."""
        segments = relative.replace("\\", "/").split("/")
        states = self._closure({0})
        for index, segment in enumerate(segments):
            states = self._step(states, segment)
            if not states:
                return False
            # A change inside a watched folder (or the folder itself going away) counts too.
            if len(self._parts) in states and index < len(segments) - 1:
                return True
        return len(self._parts) in states

    def may_match_below(self, relative_dir: str) -> bool:
        """Whether the folder, or anything below it, can match (so the folder is worth watching)."""
        if relative_dir in ("", "."):
            return True
        states = self._closure({0})
        for segment in relative_dir.split("/"):
            if len(self._parts) in states:
                return True  # a folder above matched: everything below it does
            states = self._step(states, segment)
            if not states:
                return False
        return True

    def base(self) -> PurePosixPath:
        """The fixed folder part before the first wildcard (`data` for `data/*.csv`)."""
        fixed: list[str] = []
        for part in self.pattern.split("/"):
            if _MAGIC.search(part):
                break
            fixed.append(part)
        return PurePosixPath(*fixed) if fixed else PurePosixPath(".")

    def _tail_at_end(self) -> bool:
        return bool(self._parts) and self._parts[-1] == _ANY_PATH

    def _closure(self, states: set[int]) -> set[int]:
        # A `**` before another segment may take no segment at all.
        out = set(states)
        pending = list(states)
        while pending:
            state = pending.pop()
            if state < len(self._parts) and self._parts[state] == _ANY_SEGMENTS and state + 1 not in out:
                out.add(state + 1)
                pending.append(state + 1)
        return out

    def _step(self, states: set[int], segment: str) -> set[int]:
        parts = self._parts
        end = len(parts)
        following: set[int] = set()
        for state in states:
            if state == end:
                if self._tail_at_end():
                    following.add(end)  # a last `**` takes every further segment
                continue
            part = parts[state]
            if part == _ANY_PATH:
                following.add(end)
            elif part == _ANY_SEGMENTS:
                if segment:
                    following.add(state)
            elif isinstance(part, _Segment) and part.matches(segment):
                following.add(state + 1)
        return self._closure(following)

    def __repr__(self) -> str:
        return f"WatchPattern({self.pattern!r})"


def pattern_problem(pattern: str) -> str | None:
    """Why the matcher refuses a `watch.files` pattern (too long, a backwards range, an empty set), or None."""
    if len(pattern) > WATCH_PATTERN_MAX_CHARS:
        return (
            f"watch.files: a pattern may be at most {WATCH_PATTERN_MAX_CHARS} characters "
            f"(the watch pattern limit), this one has {len(pattern)}: {pattern[:40]!r}..."
        )
    for part in pattern.replace("\\", "/").strip("/").split("/"):
        for body in _sets(part):
            problem = _set_problem(body)
            if problem is not None:
                return f"watch.files: the pattern {pattern!r} has the set [{body}], {problem}"
    return None


def _sets(part: str) -> list[str]:
    """The bodies of the `[...]` sets of one segment, as the matcher reads them."""
    out: list[str] = []
    i = 0
    while i < len(part):
        if part[i] == "[":
            end = part.find("]", i + 2)
            if end >= 0:
                out.append(part[i + 1 : end])
                i = end
        i += 1
    return out


def _set_problem(body: str) -> str | None:
    items = body[1:] if body.startswith("!") else body
    if not items:
        return "which is empty"
    for low, high in _members(items):
        if low > high:
            return f"whose range {low}-{high} runs backwards"
    return None


def _members(items: str) -> list[tuple[str, str]]:
    """A set's members as (low, high) ranges; a `-` first, last or right after a range is itself."""
    out: list[tuple[str, str]] = []
    j = 0
    while j < len(items):
        if j + 2 < len(items) and items[j + 1] == "-":
            out.append((items[j], items[j + 2]))
            j += 3
        else:
            out.append((items[j], items[j]))
            j += 1
    return out


def _compile(part: str) -> _Segment:
    chunks: list[_Chunk] = []
    atoms: list[str] = []  # regex pieces of the chunk being read, each matching exactly one character
    literal: list[str] | None = []
    starred = False

    def close() -> None:
        nonlocal literal
        text = "".join(literal) if literal is not None else None
        regex = None if text is not None else re.compile("".join(atoms), re.DOTALL)
        chunks.append(_Chunk(len(atoms), text, regex))
        atoms.clear()
        literal = []

    i = 0
    while i < len(part):
        ch = part[i]
        end = part.find("]", i + 2) if ch == "[" else -1
        if ch == "*":
            starred = True
            close()
        elif ch == "?":
            atoms.append("[^/]")
            literal = None
        elif end >= 0:
            atoms.append(_set_regex(part[i + 1 : end]))
            literal = None
            i = end
        else:
            atoms.append(re.escape(ch))
            if literal is not None:
                literal.append(ch)
        i += 1
    close()
    return _Segment(tuple(chunks), starred)


def _set_regex(body: str) -> str:
    negate = body.startswith("!")
    members = _members(body[1:] if negate else body)
    inner = "".join(re.escape(low) if low == high else f"{re.escape(low)}-{re.escape(high)}" for low, high in members)
    return f"[{'^' if negate else ''}{inner}]"

