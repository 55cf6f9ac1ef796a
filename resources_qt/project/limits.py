"""Size and shape limits checked before a project file reaches the TOML parser (key bombs, giant lines)."""

from __future__ import annotations

import re

from resources_qt.project.model import ProjectError

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_KEY_PARTS",
    "MAX_LINE_CHARS",
    "MAX_NESTING",
    "check_file_size",
    "check_text",
]

MAX_FILE_BYTES = 16 * 1024 * 1024
"""Largest project file read: far beyond any hand-written project, small enough to parse in a moment."""

MAX_LINE_CHARS = 1024 * 1024
"""Longest line: room for an embedded data line in a snippet, not for a single-line bomb."""

MAX_KEY_PARTS = 32
"""Most parts of one dotted key or table header; the format itself needs three."""

MAX_NESTING = 32
"""Most arrays / inline tables opened one inside the other."""

# tomllib keeps every prefix of a dotted key, so a 100,000-part key costs gigabytes: count the parts
# with a regex first. The lookbehind makes the scan start only at the beginning of a run, and the
# possessive quantifiers stop it backtracking, so the search stays linear in the file size. The
# nesting pattern repeats a fixed number of times, so it needs no lookbehind (which would cost the
# regex engine its fast scan for the first character).
_PART = r"""(?:[A-Za-z0-9_-]++|"(?:[^"\\\n]|\\.)*+"|'[^'\n]*+')"""
_DOTTED = re.compile(
    rf"""(?<![A-Za-z0-9_\-"'.]){_PART}(?:[ \t]*+\.[ \t]*+{_PART}){{{MAX_KEY_PARTS}}}"""
)
_NESTED = re.compile(
    rf"""[\[{{](?:[ \t\r\n]*+(?:{_PART}[ \t]*+=[ \t]*+)?[\[{{]){{{MAX_NESTING}}}"""
)
# What is not TOML structure: comments and strings, so a snippet's `a.b.c` never counts.
NOT_STRUCTURE = re.compile(
    r"""#[^\n]*+|'''.*?'''(?:'{0,2})|\"\"\"(?:[^\\]|\\.)*?\"\"\"(?:"{0,2})|'[^'\n]*+'|"(?:[^"\\\n]|\\.)*+\"""",
    re.DOTALL,
)


def check_file_size(size: int, *, source: str) -> None:
    """Refuse a file whose size (in bytes) is over `MAX_FILE_BYTES`, before it is read."""
    if size > MAX_FILE_BYTES:
        raise ProjectError(
            f"the file is {size:,} bytes; a project file may be at most {MAX_FILE_BYTES:,} bytes",
            source=source,
        )


def check_text(text: str, *, source: str) -> None:
    """Raise `ProjectError` (naming the line) for a file too big, a line too long, or keys nested too deeply."""
    check_file_size(len(text.encode("utf-8", "surrogatepass")), source=source)
    lines = text.split("\n")
    longest = max(map(len, lines))
    if longest > MAX_LINE_CHARS:
        offset = _long_line_offset(text)
        raise ProjectError(
            f"a line of {longest:,} characters; lines may be at most {MAX_LINE_CHARS:,} characters",
            source=source,
            line=text.count("\n", 0, offset) + 1,
        )
    # A key of that many parts needs that many dots on one line: most files skip the regex.
    many_dots = any(line.count(".") >= MAX_KEY_PARTS for line in lines)
    for pattern, what, limit in (
        (_DOTTED, "a dotted key or table header with more than {limit} parts", MAX_KEY_PARTS),
        (_NESTED, "arrays or inline tables nested more than {limit} deep", MAX_NESTING),
    ):
        if pattern is _DOTTED and not many_dots:
            continue
        found = _first_structural(pattern, text)
        if found is not None:
            raise ProjectError(
                f"{what.format(limit=limit)} (refused before parsing: keys nested that deep cost the "
                "parser unbounded memory)",
                source=source,
                line=text.count("\n", 0, found) + 1,
            )


def _long_line_offset(text: str) -> int:
    start = 0
    while True:
        end = text.find("\n", start)
        if end < 0 or end - start > MAX_LINE_CHARS:
            return start
        start = end + 1


_TRIPLES = ("'''", '"""')


def _first_structural(pattern: re.Pattern[str], text: str) -> int | None:
    """Offset of the first match of `pattern` that is TOML structure, not text inside a string or comment."""
    candidate = pattern.search(text)
    if candidate is None:
        return None
    # Rare: only a real bomb, or a string that looks like one, gets here; one linear pass sorts them out.
    spans = NOT_STRUCTURE.finditer(text)
    span = next(spans, None)
    while candidate is not None:
        pos = candidate.start()
        while span is not None and span.end() <= pos:
            span = next(spans, None)
        # Inside a comment or a string it is text; at a string's start it is a quoted key part.
        if span is None or pos < span.start():
            return pos
        if pos == span.start() and not text.startswith(_TRIPLES, pos) and text[pos] != "#":
            return pos
        candidate = pattern.search(text, span.end())
    return None
