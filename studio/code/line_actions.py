"""The code editor's line commands and bracket pairs applied to a QPlainTextEdit, each one undo step."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from studio.code.code_text import OPENERS
from studio.code.line_edits import QUOTES, LineEdit, copy_lines, delete_lines, move_lines, pair_for, types_over

__all__ = ["LINE_KEYS", "LineActions"]

_ALT = Qt.KeyboardModifier.AltModifier
_SHIFT = Qt.KeyboardModifier.ShiftModifier
_CONTROL = Qt.KeyboardModifier.ControlModifier

LINE_KEYS: dict[tuple[Qt.KeyboardModifier, Qt.Key], str] = {
    (_ALT, Qt.Key.Key_Up): "move_up",
    (_ALT, Qt.Key.Key_Down): "move_down",
    (_SHIFT | _ALT, Qt.Key.Key_Up): "copy_up",
    (_SHIFT | _ALT, Qt.Key.Key_Down): "copy_down",
    (_CONTROL, Qt.Key.Key_D): "duplicate",
    (_CONTROL | _SHIFT, Qt.Key.Key_K): "delete",
}
"""The line commands' keys (the editor claims them before a window action or the platform's own binding:
under X11 Ctrl+D would otherwise delete the next character)."""


def _modifiers(event: QKeyEvent) -> Qt.KeyboardModifier:
    # The keypad flag comes with arrow keys on some keyboards; it is not part of the binding.
    return event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier


class LineActions:
    """Move, copy, duplicate and delete the current line or selected lines; close and step over pairs."""

    def __init__(self, editor: QPlainTextEdit) -> None:
        self._editor = editor

    @staticmethod
    def command_for(event: QKeyEvent) -> str | None:
        """The line command `event`'s keys stand for, or None."""
        return LINE_KEYS.get((_modifiers(event), Qt.Key(event.key())))

    def run(self, command: str) -> None:
        lines, first, last = self._selected_lines()
        if command in ("move_up", "move_down"):
            edit = move_lines(lines, first, last, down=command == "move_down")
        elif command in ("copy_up", "copy_down", "duplicate"):
            edit = copy_lines(lines, first, last, down=command != "copy_up")
        else:
            edit = delete_lines(lines, first, last)
        if edit is not None:
            self._apply(edit, keep_selection=command != "delete", count=last - first + 1)

    def typed(self, text: str) -> bool:
        """Handle a typed bracket or quote (pair, wrap the selection, or step over); False: type it as usual."""
        if len(text) != 1:
            return False
        cursor = self._editor.textCursor()
        block = cursor.block().text()
        column = cursor.positionInBlock()
        if cursor.hasSelection() and (text in OPENERS or text in QUOTES):
            if "\u2029" in cursor.selectedText():
                return False  # a multi-line selection is replaced as in any editor
            closer = OPENERS.get(text, text)
            start, end = cursor.selectionStart(), cursor.selectionEnd()
            cursor.beginEditBlock()
            cursor.insertText(f"{text}{cursor.selectedText()}{closer}")
            cursor.endEditBlock()
            cursor.setPosition(start + 1)
            cursor.setPosition(end + 1, QTextCursor.MoveMode.KeepAnchor)
            self._editor.setTextCursor(cursor)
            return True
        if cursor.hasSelection():
            return False
        after, before = block[column:], block[:column]
        if types_over(text, after=after):
            cursor.movePosition(QTextCursor.MoveOperation.Right)
            self._editor.setTextCursor(cursor)
            return True
        pair = pair_for(text, before=before, after=after)
        if pair is None:
            return False
        cursor.beginEditBlock()
        cursor.insertText(text + pair)
        cursor.endEditBlock()
        cursor.movePosition(QTextCursor.MoveOperation.Left)
        self._editor.setTextCursor(cursor)
        return True

    def backspace_pair(self) -> bool:
        """Backspace between an empty pair (`(|)`, `"|"`) removes both; False when not between one."""
        cursor = self._editor.textCursor()
        if cursor.hasSelection():
            return False
        block, column = cursor.block().text(), cursor.positionInBlock()
        if column == 0 or column >= len(block):
            return False
        opener, closer = block[column - 1], block[column]
        if OPENERS.get(opener) != closer and not (opener in QUOTES and opener == closer):
            return False
        cursor.movePosition(QTextCursor.MoveOperation.Left)
        cursor.movePosition(QTextCursor.MoveOperation.Right, QTextCursor.MoveMode.KeepAnchor, 2)
        cursor.removeSelectedText()
        return True

    # -- lines -------------------------------------------------------------------

    def _selected_lines(self) -> tuple[list[str], int, int]:
        cursor = self._editor.textCursor()
        document = self._editor.document()
        first = document.findBlock(cursor.selectionStart()).blockNumber()
        end_block = document.findBlock(cursor.selectionEnd())
        last = end_block.blockNumber()
        # A selection ending at the start of a line does not include that line.
        if cursor.hasSelection() and last > first and cursor.selectionEnd() == end_block.position():
            last -= 1
        return document.toPlainText().split("\n"), first, last

    def _apply(self, edit: LineEdit, *, keep_selection: bool, count: int) -> None:
        document = self._editor.document()
        cursor = self._editor.textCursor()
        column = cursor.positionInBlock()
        had_selection = cursor.hasSelection()
        first_block = document.findBlockByNumber(edit.first)
        last_block = document.findBlockByNumber(edit.last)
        replace = QTextCursor(document)
        replace.beginEditBlock()
        replace.setPosition(first_block.position())
        replace.setPosition(last_block.position() + last_block.length() - 1, QTextCursor.MoveMode.KeepAnchor)
        if edit.lines:
            replace.insertText("\n".join(edit.lines))
        else:
            # Deleting lines removes their line breaks too: the one after them, or before them at the end.
            if last_block.next().isValid():
                replace.setPosition(last_block.next().position(), QTextCursor.MoveMode.KeepAnchor)
            elif first_block.previous().isValid():
                replace.setPosition(first_block.position() - 1)
                replace.setPosition(last_block.position() + last_block.length() - 1, QTextCursor.MoveMode.KeepAnchor)
            replace.removeSelectedText()
        replace.endEditBlock()
        start = document.findBlockByNumber(edit.start)
        placed = QTextCursor(document)
        if keep_selection and had_selection:
            end = document.findBlockByNumber(edit.start + count - 1)
            placed.setPosition(start.position())
            placed.setPosition(end.position() + end.length() - 1, QTextCursor.MoveMode.KeepAnchor)
        else:
            placed.setPosition(start.position() + min(column, start.length() - 1))
        self._editor.setTextCursor(placed)
