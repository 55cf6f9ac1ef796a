"""Pygments-driven syntax highlighting for Qt text documents: incremental Python, and precomputed spans."""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable

from pygments.lexer import Lexer
from pygments.lexers import (
    CssLexer,
    HtmlLexer,
    JavascriptLexer,
    JsonLexer,
    MarkdownLexer,
    PythonLexer,
    TextLexer,
    XmlLexer,
    YamlLexer,
)
from pygments.styles import get_style_by_name
from pygments.token import Token, _TokenType
from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument

logger = logging.getLogger(__name__)

__all__ = [
    "PythonHighlighter",
    "SpanHighlighter",
    "Spans",
    "lex_spans",
    "lexer_for_mime",
    "token_format",
]

STYLE = "default"

Spans = dict[int, list[tuple[int, int, _TokenType]]]
"""Per line number: (column, length, token type) runs, columns in code points."""

_MIME_LEXERS: dict[str, type[Lexer]] = {
    "application/json": JsonLexer,
    "text/markdown": MarkdownLexer,
    "text/x-markdown": MarkdownLexer,
    "application/xml": XmlLexer,
    "text/xml": XmlLexer,
    "image/svg+xml": XmlLexer,
    "text/html": HtmlLexer,
    "application/xhtml+xml": HtmlLexer,
    "application/yaml": YamlLexer,
    "application/x-yaml": YamlLexer,
    "text/yaml": YamlLexer,
    "text/x-yaml": YamlLexer,
    "text/x-python": PythonLexer,
    "application/x-python": PythonLexer,
    "text/css": CssLexer,
    "text/javascript": JavascriptLexer,
    "application/javascript": JavascriptLexer,
}


def lexer_for_mime(mime_type: str) -> Lexer:
    """A lexer for a MIME type (structured suffixes like `+json` count); plain text otherwise."""
    base = (mime_type or "").split(";", 1)[0].strip().lower()
    cls = _MIME_LEXERS.get(base)
    if cls is None:
        if base.endswith(("+json", "/json")):
            cls = JsonLexer
        elif base.endswith("+xml"):
            cls = XmlLexer
        elif base.endswith("+yaml"):
            cls = YamlLexer
        else:
            cls = TextLexer
    # stripnl would shift every offset after a leading newline.
    return cls(stripnl=False, ensurenl=False)


@functools.cache
def token_format(ttype: _TokenType) -> QTextCharFormat:
    """The character format of a token type in the studio's pygments style (cached)."""
    style = get_style_by_name(STYLE)
    fmt = QTextCharFormat()
    while ttype not in style.styles and ttype.parent is not None:
        ttype = ttype.parent
    info = style.style_for_token(ttype)
    if info["color"]:
        fmt.setForeground(QColor(f"#{info['color']}"))
    if info["bold"]:
        fmt.setFontWeight(QFont.Weight.Bold)
    if info["italic"]:
        fmt.setFontItalic(True)
    return fmt


def _utf16_offsets(text: str) -> list[int] | None:
    """Map code-point offsets to UTF-16 offsets, or None when they are the same (the usual case)."""
    if text.isascii() or all(ord(ch) <= 0xFFFF for ch in text):
        return None
    offsets = [0]
    for ch in text:
        offsets.append(offsets[-1] + (2 if ord(ch) > 0xFFFF else 1))
    return offsets


def _apply(highlighter: QSyntaxHighlighter, text: str, runs: Iterable[tuple[int, int, _TokenType]]) -> None:
    offsets = _utf16_offsets(text)
    for start, length, ttype in runs:
        if ttype is Token.Text or ttype is Token.Text.Whitespace or length <= 0:
            continue
        if offsets is not None:
            end = min(start + length, len(text))
            start, length = offsets[min(start, len(text))], offsets[end] - offsets[min(start, len(text))]
        highlighter.setFormat(start, length, token_format(ttype))


def lex_spans(text: str, lexer: Lexer) -> Spans:
    """Lex `text` once and split the tokens into per-line runs (safe to call off the GUI thread)."""
    spans: Spans = {}
    line = 0
    column = 0
    for _index, ttype, value in lexer.get_tokens_unprocessed(text):
        parts = value.split("\n")
        for number, part in enumerate(parts):
            if number:
                line += 1
                column = 0
            if part and ttype is not Token.Text and ttype is not Token.Text.Whitespace:
                spans.setdefault(line, []).append((column, len(part), ttype))
            column += len(part)
    return spans


class SpanHighlighter(QSyntaxHighlighter):
    """Applies runs lexed beforehand (by `lex_spans`, typically in a worker), so the GUI thread only paints."""

    def __init__(self, document: QTextDocument, spans: Spans | None = None) -> None:
        super().__init__(document)
        self._spans: Spans = spans or {}

    def set_spans(self, spans: Spans) -> None:
        self._spans = spans
        self.rehighlight()

    def use_spans(self, spans: Spans) -> None:
        """Use `spans` for text inserted from now on, without re-highlighting what is there.

        Set them before replacing the document's text, so each line is highlighted once.
        """
        self._spans = spans

    def highlightBlock(self, text: str) -> None:
        runs = self._spans.get(self.currentBlock().blockNumber())
        if runs:
            _apply(self, text, runs)


# Block states of the Python highlighter: inside which triple-quoted string a line ends.
_NORMAL, _IN_SINGLE_TRIPLE, _IN_DOUBLE_TRIPLE = 0, 1, 2
_TRIPLES = {_IN_SINGLE_TRIPLE: "'''", _IN_DOUBLE_TRIPLE: '"""'}


def _end_state(text: str, state: int) -> int:
    """Which triple-quoted string (if any) is still open at the end of the line."""
    i, n = 0, len(text)
    quote = _TRIPLES.get(state, "")
    while i < n:
        if quote:
            if text[i] == "\\":
                i += 2
                continue
            if text.startswith(quote, i):
                i += len(quote)
                quote = ""
                continue
            if len(quote) == 1 and text[i] == quote:
                quote = ""
            i += 1
            continue
        ch = text[i]
        if ch == "#":
            break
        if ch in "'\"":
            quote = ch * 3 if text.startswith(ch * 3, i) else ch
            i += len(quote)
            continue
        i += 1
    if quote == "'''":
        return _IN_SINGLE_TRIPLE
    if quote == '"""':
        return _IN_DOUBLE_TRIPLE
    return _NORMAL


class PythonHighlighter(QSyntaxHighlighter):
    """Python highlighting lexed per block with pygments.

    Each block is lexed alone, so typing re-lexes one line; the only state
    carried between lines is an open triple-quoted string, which is replayed
    as a prefix so the lexer sees the string continue.
    """

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self._lexer = PythonLexer(stripnl=False, ensurenl=False)

    def highlightBlock(self, text: str) -> None:
        previous = max(self.previousBlockState(), _NORMAL)
        prefix = _TRIPLES.get(previous, "")
        runs = []
        for index, ttype, value in self._lexer.get_tokens_unprocessed(prefix + text):
            start = index - len(prefix)
            length = len(value)
            if start < 0:
                length += start
                start = 0
            runs.append((start, length, ttype))
        _apply(self, text, runs)
        self.setCurrentBlockState(_end_state(text, previous))
