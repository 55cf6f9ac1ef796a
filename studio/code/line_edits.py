"""Pure text rules of the code editor's line commands, bracket pairs and dedenting Enter (Qt-free)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from studio.code.code_text import CLOSERS, OPENERS, code_part

__all__ = [
    "QUOTES",
    "LineEdit",
    "copy_lines",
    "delete_lines",
    "ends_block",
    "move_lines",
    "pair_for",
    "types_over",
]

QUOTES = frozenset({'"', "'"})

_ENDS_BLOCK = re.compile(r"^\s*(return|raise|pass|break|continue)\b")


@dataclass(frozen=True)
class LineEdit:
    """Lines `first..last` (inclusive) become `lines`; the moved or copied block now starts at line `start`."""

    first: int
    last: int
    lines: tuple[str, ...]
    start: int


def move_lines(lines: Sequence[str], first: int, last: int, *, down: bool) -> LineEdit | None:
    """Alt+Up / Alt+Down: swap lines `first..last` with the line above or below (None at the edge)."""
    block = list(lines[first : last + 1])
    if down:
        if last + 1 >= len(lines):
            return None
        return LineEdit(first, last + 1, (lines[last + 1], *block), first + 1)
    if first == 0:
        return None
    return LineEdit(first - 1, last, (*block, lines[first - 1]), first - 1)


def copy_lines(lines: Sequence[str], first: int, last: int, *, down: bool) -> LineEdit:
    """Shift+Alt+Down / Up (and Ctrl+D, duplicate): lines `first..last` twice; the cursor goes to the copy."""
    block = tuple(lines[first : last + 1])
    return LineEdit(first, last, block + block, first + len(block) if down else first)


def delete_lines(lines: Sequence[str], first: int, last: int) -> LineEdit:
    """Ctrl+Shift+K: remove lines `first..last` (a document keeps one, empty, line)."""
    remaining = len(lines) - (last - first + 1)
    return LineEdit(first, last, () if remaining else ("",), min(first, max(remaining - 1, 0)))


def ends_block(line: str) -> bool:
    """A line whose statement ends its block (`return`, `raise`, `pass`, `break`, `continue`): Enter dedents."""
    return bool(_ENDS_BLOCK.match(code_part(line)))


def pair_for(typed: str, *, before: str, after: str) -> str | None:
    """The closing character to insert after `typed`, or None: brackets and quotes close themselves.

    A bracket closes when what follows is the end of the line, a space or a closing bracket; a quote also
    needs no word character or the same quote right before it (`don't`, the end of `''`), and is never
    doubled inside what is already a string on the line.
    """
    if typed not in OPENERS and typed not in QUOTES:
        return None
    following = after[:1]
    if following and not following.isspace() and following not in CLOSERS and following not in ",:;":
        return None
    if typed in OPENERS:
        return OPENERS[typed]
    previous = before[-1:]
    if previous.isalnum() or previous == "_" or previous == typed:
        return None
    if before.count('"') % 2 or before.count("'") % 2:  # inside an open string on this line
        return None
    return typed


def types_over(typed: str, *, after: str) -> bool:
    """Typing a closing bracket or quote that is already the next character steps over it instead."""
    return bool(after) and after[0] == typed and (typed in CLOSERS or typed in QUOTES)
