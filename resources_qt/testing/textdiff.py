"""Readable, bounded text for failure messages: unified diffs and excerpts, truncated sensibly."""

from __future__ import annotations

import difflib

__all__ = ["MAX_DIFF_LINES", "MAX_LINE", "excerpt", "unified_diff"]

MAX_DIFF_LINES = 40
MAX_LINE = 200
MAX_EXCERPT = 400
MAX_DIFF_INPUT_LINES = 2000
"""Lines of each side given to difflib: its matching is quadratic in the worst case, and a
reader may return megabytes; a diff of the first 2,000 lines still shows where things went wrong."""


def _clip_line(line: str) -> str:
    return line if len(line) <= MAX_LINE else f"{line[:MAX_LINE]}… ({len(line) - MAX_LINE} more characters)"


def unified_diff(expected: str, got: str, *, expected_label: str = "expected", got_label: str = "got") -> str:
    """A unified diff of two texts, at most `MAX_DIFF_LINES` lines of at most `MAX_LINE` characters."""
    expected_lines, got_lines = expected.splitlines(), got.splitlines()
    cut = max(len(expected_lines), len(got_lines)) > MAX_DIFF_INPUT_LINES
    lines = list(
        difflib.unified_diff(
            expected_lines[:MAX_DIFF_INPUT_LINES],
            got_lines[:MAX_DIFF_INPUT_LINES],
            fromfile=expected_label,
            tofile=got_label,
            lineterm="",
        )
    )
    if not lines and expected != got:
        if cut:
            return (f"--- {expected_label}\n+++ {got_label}\n(the first {MAX_DIFF_INPUT_LINES} lines are equal; "
                    f"the texts differ further on: {len(expected_lines)} lines against {len(got_lines)})")
        # Only the line ends differ (a trailing newline): say so rather than print an empty diff.
        return f"--- {expected_label}\n+++ {got_label}\n(the texts differ only in line endings or a final newline)"
    shown = [_clip_line(line) for line in lines[:MAX_DIFF_LINES]]
    if len(lines) > MAX_DIFF_LINES:
        shown.append(f"… ({len(lines) - MAX_DIFF_LINES} more diff lines)")
    if cut:
        shown.append(f"… (only the first {MAX_DIFF_INPUT_LINES} lines of each side were compared)")
    return "\n".join(shown)


def excerpt(text: str, limit: int = MAX_EXCERPT) -> str:
    """`text` as a quoted excerpt, cut at `limit` characters with a note of what was left out."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text) - limit} more characters)"
