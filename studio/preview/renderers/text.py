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
    human_size,
    is_textual,
    mime_of,
)
from studio.preview.renderers.spans import CompactSpans

__all__ = ["FULL_JSON_LIMIT", "TextRenderer", "pretty_json_prefix", "text_prepared"]

FULL_JSON_LIMIT = 1024 * 1024
"""JSON up to this size is parsed whole (validated, then pretty-printed); larger JSON is pretty-printed
by a streaming tokenizer only as far as it is shown: `json.loads` of 10 MB holds the GIL (and so the GUI
thread) for a quarter of a second, and builds an object graph the garbage collector then walks."""

_JSON_TOKEN = re.compile(r'[ \t\n\r]*(?:("(?:[^"\\\x00-\x1f]|\\.)*")|([{}\[\],:])|(-?\d[\d.eE+-]*|true|false|null))')
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_CLOSING = {"{": "}", "[": "]"}


def _rest_is_space(text: str, pos: int) -> bool:
    match = _JSON_SPACE.match(text, pos)
    return match is not None and match.end() == len(text)


def pretty_json_prefix(text: str, limit: int) -> tuple[str, bool] | None:
    """The start of `text` pretty-printed like `json.dumps(indent=2)`, up to about `limit` characters.

    Returns (pretty text, whether all of `text` was formatted), or None when the part read is not
    JSON. Pure Python token by token, so a worker thread running it never holds the GIL for long.
    Strings are kept as received (escapes included).
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


def text_prepared(text: str, mime: str, size: int, *, kind: str = "text") -> Prepared:
    """`text` cut to what is shown (JSON pretty-printed first) with its highlighting spans."""
    base = base_mime(mime)
    notes: list[str] = []
    whole = True  # `text` is all there is to show (not a pretty-printed prefix)
    if base.endswith("json") and len(text) <= FULL_JSON_LIMIT:
        try:
            text = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        except ValueError:
            notes.append("Not valid JSON; shown as received.")
    elif base.endswith("json"):
        pretty = pretty_json_prefix(text, DISPLAY_LIMIT)
        if pretty is None:
            notes.append("Not valid JSON; shown as received.")
        elif not pretty[1]:
            text, whole = pretty[0], False
        else:
            text = pretty[0]
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
