"""Pygments syntax highlighting for Qt text documents (incremental Python, precomputed spans), palette-themed."""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable

import pygments.lexers
from pygments.lexer import Lexer
from pygments.styles import get_style_by_name
from pygments.token import Token, _TokenType
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPalette, QSyntaxHighlighter, QTextCharFormat, QTextDocument
from PySide6.QtWidgets import QWidget

from studio.look.editor_theme import MIN_CONTRAST, EditorTheme, ensure_contrast, theme_for_palette

logger = logging.getLogger(__name__)

__all__ = [
    "PythonHighlighter",
    "SpanHighlighter",
    "Spans",
    "ThemedHighlighter",
    "lex_spans",
    "lexer_for_mime",
    "open_string_at_end",
    "token_format",
    "utf16_offsets",
]

STYLE = "default"

Spans = dict[int, list[tuple[int, int, _TokenType]]]
"""Per line number: (column, length, token type) runs, columns in code points."""

# Lexer class names, looked up when first used: importing HtmlLexer and MarkdownLexer up front pulls in
# pygments' JVM, Lisp and LilyPond lexers (about 180 ms of the window's start-up).
_MIME_LEXERS: dict[str, str] = {
    "application/json": "JsonLexer",
    "text/markdown": "MarkdownLexer",
    "text/x-markdown": "MarkdownLexer",
    "application/xml": "XmlLexer",
    "text/xml": "XmlLexer",
    "image/svg+xml": "XmlLexer",
    "text/html": "HtmlLexer",
    "application/xhtml+xml": "HtmlLexer",
    "application/yaml": "YamlLexer",
    "application/x-yaml": "YamlLexer",
    "text/yaml": "YamlLexer",
    "text/x-yaml": "YamlLexer",
    "text/x-python": "PythonLexer",
    "application/x-python": "PythonLexer",
    "text/css": "CssLexer",
    "text/javascript": "JavascriptLexer",
    "application/javascript": "JavascriptLexer",
}


def lexer_for_mime(mime_type: str) -> Lexer:
    """A lexer for a MIME type (structured suffixes like `+json` count); plain text otherwise."""
    base = (mime_type or "").split(";", 1)[0].strip().lower()
    name = _MIME_LEXERS.get(base)
    if name is None:
        if base.endswith(("+json", "/json")):
            name = "JsonLexer"
        elif base.endswith("+xml"):
            name = "XmlLexer"
        elif base.endswith("+yaml"):
            name = "YamlLexer"
        else:
            name = "TextLexer"
    cls: type[Lexer] = getattr(pygments.lexers, name)
    # stripnl would shift every offset after a leading newline.
    return cls(stripnl=False, ensurenl=False)


def token_format(ttype: _TokenType, theme: EditorTheme | None = None) -> QTextCharFormat:
    """The character format of a token type in a theme's pygments style (the light default without one).

    Colours are pulled toward the theme's text colour until they reach WCAG AA
    contrast on the editor's background and on its current line.
    """
    if theme is None:
        return _token_format(ttype, STYLE, None)
    return _token_format(ttype, theme.style, theme.key[1:])


@functools.lru_cache(maxsize=4096)
def _token_format(ttype: _TokenType, style_name: str, colors: tuple[int, int, int] | None) -> QTextCharFormat:
    """`colors` are the theme's (base, current line, text) as RGB ints; None keeps the style's colours."""
    style = get_style_by_name(style_name)
    fmt = QTextCharFormat()
    while ttype not in style.styles and ttype.parent is not None:
        ttype = ttype.parent
    info = style.style_for_token(ttype)
    if info["color"]:
        color = QColor(f"#{info['color']}")
        if colors is not None:
            base, line, text = (QColor.fromRgb(value) for value in colors)
            color = ensure_contrast(color, (base, line), toward=text, ratio=MIN_CONTRAST)
        fmt.setForeground(color)
    if info["bold"]:
        fmt.setFontWeight(QFont.Weight.Bold)
    if info["italic"]:
        fmt.setFontItalic(True)
    return fmt


def utf16_offsets(text: str) -> list[int] | None:
    """Map code-point offsets to UTF-16 offsets, or None when they are the same (the usual case)."""
    if text.isascii() or all(ord(ch) <= 0xFFFF for ch in text):
        return None
    offsets = [0]
    for ch in text:
        offsets.append(offsets[-1] + (2 if ord(ch) > 0xFFFF else 1))
    return offsets


def _apply(
    highlighter: QSyntaxHighlighter,
    text: str,
    runs: Iterable[tuple[int, int, _TokenType]],
    *,
    theme: EditorTheme | None,
) -> None:
    offsets = utf16_offsets(text)
    for column, count, ttype in runs:
        if ttype is Token.Text or ttype is Token.Text.Whitespace or count <= 0:
            continue
        start, length = column, count
        if offsets is not None:
            end = min(column + count, len(text))
            start, length = offsets[min(column, len(text))], offsets[end] - offsets[min(column, len(text))]
        highlighter.setFormat(start, length, token_format(ttype, theme))


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


class ThemedHighlighter(QSyntaxHighlighter):
    """A highlighter whose pygments style follows a palette (dark style on a dark palette).

    It follows the palette of the widget that owns its document (when the
    document's parent is a widget) and re-highlights when that palette changes;
    `set_palette` sets one explicitly.
    """

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        # The widget showing the document: a QPlainTextEdit's own document hangs off its text control.
        owner = document.parent()
        while owner is not None and not isinstance(owner, QWidget):
            owner = owner.parent()
        self._owner: QWidget | None = owner
        palette = self._owner.palette() if self._owner is not None else QGuiApplication.palette()
        self._theme: EditorTheme = theme_for_palette(palette)
        if self._owner is not None:
            self._owner.installEventFilter(self)

    @property
    def theme(self) -> EditorTheme:
        return self._theme

    def set_palette(self, palette: QPalette) -> None:
        """Use the colours of `palette`; re-highlights only when they change."""
        theme = theme_for_palette(palette)
        if theme.key != self._theme.key:
            self._theme = theme
            self.rehighlight()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # A swapped-out document's highlighter can be asked while PySide tears its Python side down (its
        # attributes already gone, the filter still installed): it has nothing to do then.
        owner: QWidget | None = getattr(self, "_owner", None)
        if owner is not None and watched is owner and event.type() == QEvent.Type.PaletteChange:
            self.set_palette(owner.palette())
        return False


class SpanHighlighter(ThemedHighlighter):
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
            _apply(self, text, runs, theme=self._theme)


# Block states of the Python highlighter: inside which triple-quoted string a line ends.
_NORMAL, _IN_SINGLE_TRIPLE, _IN_DOUBLE_TRIPLE = 0, 1, 2
_TRIPLES = {_IN_SINGLE_TRIPLE: "'''", _IN_DOUBLE_TRIPLE: '"""'}


def open_string_at_end(state: int) -> str:
    """The triple quote a line with this block state ends inside ("" for none, or an unhighlighted line)."""
    return _TRIPLES.get(state, "")


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


class PythonHighlighter(ThemedHighlighter):
    """Python highlighting lexed per block with pygments.

    Each block is lexed alone, so typing re-lexes one line; the only state
    carried between lines is an open triple-quoted string, which is replayed
    as a prefix so the lexer sees the string continue.
    """

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self._lexer = pygments.lexers.PythonLexer(stripnl=False, ensurenl=False)

    def highlightBlock(self, text: str) -> None:
        previous = max(self.previousBlockState(), _NORMAL)
        prefix = _TRIPLES.get(previous, "")
        runs: list[tuple[int, int, _TokenType]] = []
        for index, ttype, value in self._lexer.get_tokens_unprocessed(prefix + text):
            start = index - len(prefix)
            length = len(value)
            if start < 0:
                length += start
                start = 0
            runs.append((start, length, ttype))
        _apply(self, text, runs, theme=self._theme)
        self.setCurrentBlockState(_end_state(text, previous))
