"""Plain and code text (JSON pretty-printed), highlighted by MIME type; the source page of every text kind."""

from __future__ import annotations

import json
import re

from resources_qt.content import ResourceContent
from studio.look.highlighter import lexer_for_mime
from studio.preview.renderers.base import (
    DISPLAY_LIMIT,
    HIGHLIGHT_LIMIT,
    Prepared,
    Renderer,
    base_mime,
    content_size,
    content_text,
    displayable,
    human_size,
    is_textual,
    mime_of,
)
from studio.preview.renderers.spans import CompactSpans

__all__ = [
    "FULL_JSON_LIMIT",
    "JSON_DEPTH_LIMIT",
    "JsonTooDeepError",
    "TextRenderer",
    "json_depth",
    "pretty_json_prefix",
    "text_prepared",
]

FULL_JSON_LIMIT = 1024 * 1024
"""JSON up to this size is parsed whole (validated, then pretty-printed); larger JSON is pretty-printed
by a streaming tokenizer only as far as it is shown: `json.loads` of 10 MB holds the GIL (and so the GUI
thread) for a quarter of a second, and builds an object graph the garbage collector then walks."""

_JSON_TOKEN = re.compile(r'[ \t\n\r]*(?:("(?:[^"\\\x00-\x1f]|\\.)*")|([{}\[\],:])|(-?\d[\d.eE+-]*|true|false|null))')
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_CLOSING = {"{": "}", "[": "]"}
JSON_DEPTH_LIMIT = 200
"""JSON nested deeper is shown as received: `json.loads` and `json.dumps` recurse once a level (30,000
levels raised RecursionError), and indentation past this is no help to a reader anyway."""
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_JSON_BRACKET = re.compile(r"[\[\]{}]")


class JsonTooDeepError(ValueError):
    """JSON nested deeper than a budget (`depth` is how deep it was counted, at least the budget + 1)."""

    def __init__(self, depth: int) -> None:
        super().__init__(f"JSON nested {depth:,} deep; the limit is {JSON_DEPTH_LIMIT}")
        self.depth = depth


def json_depth(text: str) -> int:
    """How deep the brackets of `text` nest, strings skipped; iterative, so any depth is safe to count."""
    if text.count("[") + text.count("{") <= JSON_DEPTH_LIMIT:
        return min(text.count("[") + text.count("{"), JSON_DEPTH_LIMIT)  # cannot be deeper than that
    depth = deepest = 0
    for match in _JSON_BRACKET.finditer(_JSON_STRING.sub('""', text)):
        if match.group() in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def _rest_is_space(text: str, pos: int) -> bool:
    match = _JSON_SPACE.match(text, pos)
    return match is not None and match.end() == len(text)


def pretty_json_prefix(text: str, limit: int) -> tuple[str, bool] | None:
    """The start of `text` pretty-printed like `json.dumps(indent=2)`, up to about `limit` characters.

    Returns (pretty text, whether all of `text` was formatted), or None when the part read is not
    JSON. Pure Python token by token, so a worker thread running it never holds the GIL for long.
    Strings are kept as received (escapes included). Raises JsonTooDeepError past JSON_DEPTH_LIMIT.
    """
    out: list[str] = []
    size = depth = pos = 0
    while size < limit:
        match = _JSON_TOKEN.match(text, pos)
        if match is None:
            return ("".join(out), True) if _rest_is_space(text, pos) else None
        pos = match.end()
        string, punct, scalar = match.groups()
        if punct in _CLOSING:
            after = _JSON_TOKEN.match(text, pos)
            if after is not None and after.group(2) == _CLOSING[punct]:
                piece, pos = punct + after.group(2), after.end()
            else:
                depth += 1
                if depth > JSON_DEPTH_LIMIT:
                    raise JsonTooDeepError(depth)
                piece = punct + "\n" + "  " * depth
        elif punct in ("}", "]"):
            depth = max(depth - 1, 0)
            piece = "\n" + "  " * depth + punct
        elif punct == ",":
            piece = ",\n" + "  " * depth
        elif punct == ":":
            piece = ": "
        else:
            piece = string or scalar or ""
        out.append(piece)
        size += len(piece)
    return "".join(out), _rest_is_space(text, pos)


def _json_shown(text: str, notes: list[str]) -> tuple[str, bool]:
    """JSON `text` pretty-printed (whole, or the prefix that is shown) and whether it is all of it."""
    if len(text) <= FULL_JSON_LIMIT:
        depth = json_depth(text)
        if depth > JSON_DEPTH_LIMIT:
            notes.append(f"Not pretty-printed: {JsonTooDeepError(depth)}; shown as received.")
            return text, True
        try:
            return json.dumps(json.loads(text), indent=2, ensure_ascii=False), True
        except ValueError:
            notes.append("Not valid JSON; shown as received.")
            return text, True
    try:
        pretty = pretty_json_prefix(text, DISPLAY_LIMIT)
    except JsonTooDeepError:
        notes.append(f"Not pretty-printed: JSON nested more than {JSON_DEPTH_LIMIT} deep; shown as received.")
        return text, True
    if pretty is None:
        notes.append("Not valid JSON; shown as received.")
        return text, True
    return pretty


def _surrogate_note(text: str) -> str:
    """A note for text Qt would show with characters silently missing (lone surrogates are not Unicode)."""
    if text.isascii():
        return ""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (f"The text holds a lone surrogate (U+{ord(text[exc.start]):04X} at character {exc.start:,}), which"
                " is not Unicode: a client cannot receive it as UTF-8. It is shown as \ufffd.")  # fmt: skip
    return ""


def text_prepared(text: str, mime: str, size: int, *, kind: str = "text") -> Prepared:
    """`text` cut to what is shown (JSON pretty-printed first) with its highlighting spans."""
    notes: list[str] = []
    whole = True  # `text` is all there is to show (not a pretty-printed prefix)
    if base_mime(mime).endswith("json"):
        text, whole = _json_shown(text, notes)
    shown = text
    if len(text) > DISPLAY_LIMIT or not whole:
        shown = text[:DISPLAY_LIMIT]
        of_what = (
            f"{human_size(len(text))} of text"
            if whole
            else f"{human_size(size)} of JSON, pretty-printed (and checked) as far as shown"
        )
        notes.append(
            f"Showing the first {human_size(DISPLAY_LIMIT)} of {of_what}; use Save content as... for all of it."
        )
    surrogates = _surrogate_note(shown)
    if surrogates:
        notes.insert(0, surrogates)
        shown = displayable(shown)
    head = shown[:HIGHLIGHT_LIMIT]
    if len(shown) > HIGHLIGHT_LIMIT:
        notes.append(f"Highlighting the first {human_size(HIGHLIGHT_LIMIT)}.")
    spans = CompactSpans.lex(head, lexer_for_mime(mime)) if head else CompactSpans()
    return Prepared(kind, mime, size, text=shown, spans=spans, notes=notes)


class TextRenderer(Renderer):
    """Any text, and blobs of a textual type that decode as UTF-8: shown as highlighted source."""

    kind = "text"
    mime_types = ("*",)

    def accepts(self, mime: str, *, is_blob: bool) -> bool:
        return not is_blob or is_textual(mime)

    def prepare(self, content: ResourceContent) -> Prepared | None:
        text = content_text(content)
        if text is None:
            return None
        return text_prepared(text, mime_of(content), content_size(content))
