"""What HTML or Markdown costs Qt to lay out, counted from the source before any widget sees it.

Qt parses and lays out a rich-text document on the GUI thread when it is shown, and cannot be
interrupted, so the only defence against a document that takes minutes is to refuse it first.
Measured on the studio's 2-CPU test machine (QTextBrowser, 600 px wide):

- every table level past the first doubles the layout of all it holds: 20 tables nested one in
  another (301 bytes) took 14 s, 8 levels holding 1,000 paragraphs 3 s;
- list items cost quadratically in Qt's list numbering: 8,000 `<li>` 6.3 s, 30,000 Markdown
  items (128 KB) 68 s;
- otherwise about 30 microseconds an element or 16 characters of text (8,000 paragraphs 0.22 s).

Markdown reaches Qt's HTML importer for the HTML it embeds, so both are counted for Markdown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "DEPTH_LIMIT",
    "LIST_ITEM_LIMIT",
    "TABLE_DEPTH_LIMIT",
    "WEIGHT_LIMIT",
    "LayoutCount",
    "count_html",
    "count_markdown",
    "layout_problem",
]

TABLE_DEPTH_LIMIT = 8
DEPTH_LIMIT = 100
"""Elements (or Markdown quotes and list levels) nested deeper are refused."""
LIST_ITEM_LIMIT = 2_000
WEIGHT_LIMIT = 20_000
"""Elements to lay out, each counted twice per enclosing table past the first, and text by 16 characters:
20,000 is 0.3 to 0.7 s of layout on the test machine, whatever the nesting."""
TEXT_PER_UNIT = 16

# `[^<>]*`, not `[^>]*`: a tag never spans a "<", so each try stops at the next one and the scan is
# linear (`<a<a<a...` with `[^>]*` tried to the end of the text from every "<").
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:-]*)([^<>]*)>|<!--")
_VOID = frozenset(("area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
                   "track", "wbr"))  # fmt: skip
# A start tag of these closes an open one of the same name up to the element that holds them
# (HTML's implied end tags), so `<li>a<li>b` is two items, not one inside the other.
_IMPLIED = {
    "li": ("ul", "ol", "menu"),
    "dt": ("dl",),
    "dd": ("dl",),
    "td": ("tr", "table"),
    "th": ("tr", "table"),
    "tr": ("table", "tbody", "thead", "tfoot"),
    "option": ("select",),
    "p": ("body", "div", "td", "th", "li", "blockquote"),
}
_SIBLINGS = {"dt": ("dt", "dd"), "dd": ("dt", "dd"), "td": ("td", "th"), "th": ("td", "th")}
_BLOCKS_CLOSING_P = frozenset(("div", "table", "ul", "ol", "dl", "blockquote", "pre", "h1", "h2", "h3", "h4", "h5",
                               "h6", "hr"))  # fmt: skip
_MD_LINE = re.compile(r"^((?:[ \t]*>)*)([ \t]*)(?:([-*+]|\d{1,9}[.)])(?:[ \t]|$))?", re.MULTILINE)


@dataclass
class LayoutCount:
    """What a document holds that costs layout time (each field compared to its limit)."""

    table_depth: int = 0
    depth: int = 0
    list_items: int = 0
    weight: int = 0


class _Scan:
    """The open elements while reading tags, with the counts so far (approximate, never low by much)."""

    def __init__(self) -> None:
        self.count = LayoutCount()
        self.stack: list[str] = []
        self.tables = 0

    def unit(self) -> int:
        return 1 << max(0, self.tables - 1)

    def text(self, length: int) -> None:
        self.count.weight += -(-length // TEXT_PER_UNIT) * self.unit()

    def start(self, name: str) -> None:
        if name in _IMPLIED:
            self._close_implied(name)
        elif name in _BLOCKS_CLOSING_P and self.stack and self.stack[-1] == "p":
            self._pop()
        self.count.weight += self.unit()
        if name == "li":
            self.count.list_items += 1
        if name in _VOID:
            return
        self.stack.append(name)
        if name == "table":
            self.tables += 1
            self.count.table_depth = max(self.count.table_depth, self.tables)
        self.count.depth = max(self.count.depth, len(self.stack))

    def end(self, name: str) -> None:
        if name not in self.stack:
            return  # a stray end tag: Qt ignores it too
        while self.stack and self._pop() != name:
            pass

    def _pop(self) -> str:
        name = self.stack.pop()
        if name == "table":
            self.tables -= 1
        return name

    def _close_implied(self, name: str) -> None:
        siblings = _SIBLINGS.get(name, (name,))
        holders = _IMPLIED[name]
        for position in range(len(self.stack) - 1, -1, -1):
            open_name = self.stack[position]
            if open_name in holders:
                return
            if open_name in siblings:
                while len(self.stack) > position:
                    self._pop()
                return


def _scan(text: str, on_text: _TextCounter | None) -> LayoutCount:
    scan = _Scan()
    count_text = on_text or _plain_text
    pos = 0
    while True:
        match = _TAG.search(text, pos)
        if match is None:
            break
        if match.start() > pos:
            count_text(scan, text, pos, match.start())
        name = match.group(2)
        if name is None:  # a comment: skipped whole (found with find, so an unclosed one costs one pass)
            close = text.find("-->", match.end())
            pos = len(text) if close < 0 else close + 3
            continue
        pos = match.end()
        name = name.lower()
        if match.group(1):
            scan.end(name)
        elif not match.group(3).rstrip().endswith("/"):
            scan.start(name)
        else:
            scan.count.weight += scan.unit()  # <x/>: an empty element
    if pos < len(text):
        count_text(scan, text, pos, len(text))
    return scan.count


class _TextCounter:
    """Counts a run of Markdown between tags: a unit a line, list items, quote and list nesting."""

    def __call__(self, scan: _Scan, text: str, start: int, end: int) -> None:
        scan.text(end - start)
        run = text[start:end]
        lines = run.count("\n") + 1
        scan.count.weight += lines * scan.unit()
        for match in _MD_LINE.finditer(run):
            quotes = match.group(1).count(">")
            indent = len(match.group(2).expandtabs(4))
            nesting = quotes + (indent // 2 + 1 if match.group(3) else 0)
            scan.count.depth = max(scan.count.depth, len(scan.stack) + nesting)
            if match.group(3):
                scan.count.list_items += 1


def _plain_text(scan: _Scan, text: str, start: int, end: int) -> None:
    scan.text(end - start)


def count_html(text: str) -> LayoutCount:
    """The layout cost of an HTML document (tags read with HTML's implied end tags; comments skipped)."""
    return _scan(text, None)


def count_markdown(text: str) -> LayoutCount:
    """The layout cost of a Markdown document, the HTML it embeds included."""
    return _scan(text, _TextCounter())


def layout_problem(count: LayoutCount) -> str:
    """Which budget `count` is over, as a phrase for the note ("tables nested 20 deep; the limit is 8"); "" if none."""
    if count.table_depth > TABLE_DEPTH_LIMIT:
        return f"tables nested {count.table_depth} deep; the limit is {TABLE_DEPTH_LIMIT}"
    if count.depth > DEPTH_LIMIT:
        return f"elements nested {count.depth:,} deep; the limit is {DEPTH_LIMIT}"
    if count.list_items > LIST_ITEM_LIMIT:
        return f"{count.list_items:,} list items; the limit is {LIST_ITEM_LIMIT:,}"
    if count.weight > WEIGHT_LIMIT:
        return (f"about {count.weight:,} elements to lay out (each counted twice for every table around it past"
                f" the first, text by {TEXT_PER_UNIT} characters); the limit is {WEIGHT_LIMIT:,}")  # fmt: skip
    return ""
