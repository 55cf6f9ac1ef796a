"""The editor's diagnostic marks: wavy underlines for the compile error and the warnings, and their hover text."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtGui import QColor, QPalette, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import QTextEdit

from studio.analysis.source_warnings import SourceWarning
from studio.look.colours import ensure_contrast
from studio.look.editor_theme import EditorTheme
from studio.look.marks import mark_colors

__all__ = ["hover_text", "underline", "warning_colour"]

_UNDERLINE_CONTRAST = 3.0
"""WCAG 1.4.11 for a graphical mark: the underline against the editor's base and current line."""


def warning_colour(palette: QPalette, theme: EditorTheme) -> QColor:
    """The warnings' underline: the palette's warning hue, readable on the editor's base and current line."""
    return ensure_contrast(mark_colors(palette).warning, (theme.base, theme.current_line), toward=theme.text,
                           ratio=_UNDERLINE_CONTRAST)  # fmt: skip


def underline(
    document: QTextDocument, *, line: int, column: int, end: int = 0, colour: QColor
) -> QTextEdit.ExtraSelection | None:
    """A wave under `line` (1-based) from `column` (1-based; 0 for the whole line) to `end` (the column
    past the mark; 0: to the line's end). None for a line the document no longer has."""
    if line > document.blockCount():
        return None
    block = document.findBlockByNumber(max(1, line) - 1)
    mark = QTextEdit.ExtraSelection()
    fmt = QTextCharFormat()
    fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
    fmt.setUnderlineColor(colour)
    mark.format = fmt
    cursor = QTextCursor(block)
    text = block.text()
    start = min(max(column - 1, 0), len(text))
    # A column past the end marks the last character; an empty or blank line is marked whole.
    if start >= len(text) and text:
        start = len(text) - 1
    if not text.strip():
        start = 0
    cursor.setPosition(block.position() + start)
    if end > column > 0 and end - 1 <= len(text) and end - 1 > start:
        cursor.setPosition(block.position() + end - 1, QTextCursor.MoveMode.KeepAnchor)
    else:
        cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
    mark.cursor = cursor
    return mark


def hover_text(line: int, *, error: tuple[int, int, str] | None, warnings: Sequence[SourceWarning]) -> str:
    """What hovering `line` (1-based) says: its compile error, then its warnings, one a line ("" for none)."""
    said = [error[2]] if error is not None and error[0] == line else []
    said += [warning.message for warning in warnings if warning.line == line]
    return "\n".join(said)
