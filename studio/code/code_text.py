"""Pure text operations of the code editor: toggling `# ` comments, and finding the brackets of a line."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["CLOSERS", "COMMENT", "OPENERS", "code_brackets", "code_part", "toggle_comment"]

COMMENT = "# "
OPENERS = {"(": ")", "[": "]", "{": "}"}
CLOSERS = {v: k for k, v in OPENERS.items()}


def code_part(line: str) -> str:
    """The line without its trailing comment (a '#' inside a string literal does not start one)."""
    quote = ""
    for index, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            return line[:index]
    return line


def _indent_width(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def toggle_comment(lines: Sequence[str]) -> list[str]:
    """Comment the lines out, or back in when every non-blank one is already a comment.

    Commenting inserts `# ` at the smallest indentation of the non-blank lines
    (blank lines stay as they are), so uncommenting — which removes `#` and one
    space after the indentation — gives back exactly the lines commented.
    """
    filled = [line for line in lines if line.strip()]
    if not filled:
        return list(lines)
    if all(line.lstrip(" \t").startswith("#") for line in filled):
        result = []
        for line in lines:
            if not line.strip():
                result.append(line)
                continue
            at = _indent_width(line)
            rest = line[at + 1 :]
            result.append(line[:at] + (rest[1:] if rest.startswith(" ") else rest))
        return result
    column = min(_indent_width(line) for line in filled)
    return [line[:column] + COMMENT + line[column:] if line.strip() else line for line in lines]


def code_brackets(line: str, in_string: str = "") -> list[tuple[int, str]]:
    """The (column, bracket) pairs of a line's code: brackets in strings and comments do not count.

    `in_string` is the triple quote the line starts inside ("" for none).
    """
    found: list[tuple[int, str]] = []
    quote = in_string
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if line.startswith(quote, i):
                i += len(quote)
                quote = ""
                continue
            i += 1
            continue
        if ch == "#":
            break
        if ch in "'\"":
            quote = ch * 3 if line.startswith(ch * 3, i) else ch
            i += len(quote)
            continue
        if ch in OPENERS or ch in CLOSERS:
            found.append((i, ch))
        i += 1
    return found
