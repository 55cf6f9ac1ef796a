"""Highlighting runs of a shown text in two flat integer arrays, and the highlighter that paints from them."""

from __future__ import annotations

from array import array

from pygments.lexer import Lexer
from pygments.token import Token, _TokenType
from PySide6.QtGui import QTextDocument

from studio.look.highlighter import ThemedHighlighter, token_format, utf16_offsets

__all__ = ["CompactSpanHighlighter", "CompactSpans"]

_PLAIN = (Token.Text, Token.Text.Whitespace)


class CompactSpans:
    """Per line: (column, length, token type) runs, columns in code points; immutable once built.

    A 256 KB JSON preview has about 50,000 coloured runs on 20,000 lines. As tuples in per-line
    lists (`highlighter.Spans`) they are 70,000 objects the garbage collector tracks; making them
    on the render thread set off a full collection of the whole studio process there, which held
    the GIL, and so the window, for 70 to 220 ms. Arrays of ints are not tracked at all, and the
    highlighter decodes one line's runs when Qt highlights that line.

    `_runs` holds three ints per run (column, length, index into `_types`);
    the runs of line n are those from `_starts[n]` to `_starts[n + 1]`.
    """

    __slots__ = ("_runs", "_starts", "_types")

    def __init__(self, runs: array[int] | None = None, starts: array[int] | None = None,
                 types: tuple[_TokenType, ...] = ()) -> None:
        self._runs = runs if runs is not None else array("i")
        self._starts = starts if starts is not None else array("i", [0])
        self._types = types

    @classmethod
    def lex(cls, text: str, lexer: Lexer) -> CompactSpans:
        """Lex `text` once (safe off the GUI thread); whitespace and plain text get no run."""
        runs: array[int] = array("i")
        starts: array[int] = array("i", [0])
        type_ids: dict[_TokenType, int] = {}
        column = 0
        for _index, ttype, value in lexer.get_tokens_unprocessed(text):
            first = True
            for part in value.split("\n"):
                if not first:
                    starts.append(len(runs) // 3)  # the line just ended
                    column = 0
                first = False
                if part and ttype not in _PLAIN:
                    runs.extend((column, len(part), type_ids.setdefault(ttype, len(type_ids))))
                column += len(part)
        starts.append(len(runs) // 3)
        return cls(runs, starts, tuple(type_ids))

    @property
    def line_count(self) -> int:
        """Lines the lexed text had (a text without a newline has one)."""
        return len(self._starts) - 1

    @property
    def run_count(self) -> int:
        return len(self._runs) // 3

    def line_runs(self, line: int) -> list[tuple[int, int, _TokenType]]:
        """The runs of line `line` (0-based); [] past the lexed text."""
        if not 0 <= line < len(self._starts) - 1:
            return []
        runs, types = self._runs, self._types
        return [(runs[i], runs[i + 1], types[runs[i + 2]])
                for i in range(3 * self._starts[line], 3 * self._starts[line + 1], 3)]


class CompactSpanHighlighter(ThemedHighlighter):
    """Applies `CompactSpans` lexed beforehand, so the GUI thread only looks up and paints each line."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self._spans = CompactSpans()

    def use_spans(self, spans: CompactSpans) -> None:
        """Use `spans` for text inserted from now on, without re-highlighting what is there.

        Set them before replacing the document's text, so each line is highlighted once.
        """
        self._spans = spans

    def highlightBlock(self, text: str) -> None:
        runs = self._spans.line_runs(self.currentBlock().blockNumber())
        if not runs:
            return
        offsets = utf16_offsets(text)
        theme = self.theme
        for column, count, ttype in runs:
            start, length = column, count
            if offsets is not None:
                first, end = min(column, len(text)), min(column + count, len(text))
                start, length = offsets[first], offsets[end] - offsets[first]
            self.setFormat(start, length, token_format(ttype, theme))
