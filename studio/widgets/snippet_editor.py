"""A Python code editor for reader snippets: highlighting, line numbers, 4-space indentation, error underline."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QRect, QSize, Qt, QTimer, Signal, Slot
from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QHelpEvent,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QToolTip, QWidget

from studio.widgets.highlighter import PythonHighlighter

__all__ = ["INDENT", "SnippetEditor"]

INDENT = "    "
EDIT_DEBOUNCE_MS = 300

_CURRENT_LINE = QColor("#f3f6fb")
_GUTTER_BG = QColor("#f2f2f2")
_GUTTER_FG = QColor("#9a9a9a")
_ERROR = QColor("#d32f2f")


def _code_part(line: str) -> str:
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


class _Gutter(QWidget):
    """Line numbers beside the editor; painted by the editor, which knows the block geometry."""

    def __init__(self, editor: SnippetEditor) -> None:
        super().__init__(editor)
        self._editor = editor

    def sizeHint(self) -> QSize:
        return QSize(self._editor.gutter_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:
        self._editor._paint_gutter(event)


class SnippetEditor(QPlainTextEdit):
    """Edits one Python snippet.

    Signals:
        source_edited(str source): the text changed, debounced so a burst of typing emits once.
    """

    source_edited = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("snippetEditor")
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSize(max(font.pointSize(), 10))
        self.setFont(font)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setTabStopDistance(self.fontMetrics().horizontalAdvance(" ") * len(INDENT))
        self.highlighter = PythonHighlighter(self.document())
        self._gutter = _Gutter(self)
        self._diagnostic: tuple[int, int, str] | None = None
        self._loading = False
        self._prelude = ""
        self._variables: tuple[str, ...] = ()
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(EDIT_DEBOUNCE_MS)
        self._debounce.timeout.connect(self._on_debounce_timeout)
        self.blockCountChanged.connect(self._on_block_count_changed)
        self.updateRequest.connect(self._on_update_request)
        self.cursorPositionChanged.connect(self._on_cursor_position_changed)
        self.textChanged.connect(self._on_text_changed)
        self._on_block_count_changed(1)
        self._refresh_selections()

    # -- public API ----------------------------------------------------------

    def set_source(self, source: str) -> None:
        """Replace the text without emitting `source_edited` (e.g. when another resource is shown)."""
        if source == self.toPlainText():
            return
        self._loading = True
        try:
            cursor_pos = self.textCursor().position()
            self.setPlainText(source)
            cursor = self.textCursor()
            cursor.setPosition(min(cursor_pos, len(source)))
            self.setTextCursor(cursor)
        finally:
            self._loading = False
        self._debounce.stop()

    def set_completion_context(self, *, prelude: str, variables: Sequence[str]) -> None:
        """The prelude prepended to what completion analyses, and the names offered inside `params[...]`."""
        self._prelude = prelude
        self._variables = tuple(variables)

    def set_word_wrap(self, on: bool) -> None:
        """Wrap long lines at the editor's width (on) or scroll horizontally (off)."""
        mode = QPlainTextEdit.LineWrapMode.WidgetWidth if on else QPlainTextEdit.LineWrapMode.NoWrap
        self.setLineWrapMode(mode)

    def source(self) -> str:
        return self.toPlainText()

    @property
    def has_pending_edit(self) -> bool:
        """True while an edit waits for the debounce before `source_edited` is emitted."""
        return self._debounce.isActive()

    def flush(self) -> None:
        """Emit a pending debounced `source_edited` now."""
        if self._debounce.isActive():
            self._debounce.stop()
            self._on_debounce_timeout()

    @property
    def diagnostic(self) -> tuple[int, int, str] | None:
        """The shown error as (line, column, message), 1-based, or None."""
        return self._diagnostic

    def set_diagnostic(self, line: int, column: int, message: str) -> None:
        """Underline `line` (1-based) from `column` (1-based; 0 for the whole line) with a red wave."""
        self._diagnostic = (max(1, line), max(0, column), message)
        self._refresh_selections()
        self._gutter.update()

    def clear_diagnostic(self) -> None:
        if self._diagnostic is not None:
            self._diagnostic = None
            self._refresh_selections()
            self._gutter.update()

    def gutter_width(self) -> int:
        digits = max(3, len(str(self.blockCount())))
        return 12 + self.fontMetrics().horizontalAdvance("9") * digits

    # -- indentation ---------------------------------------------------------

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        mods = event.modifiers()
        if key == Qt.Key.Key_Tab and not mods & Qt.KeyboardModifier.ControlModifier:
            self._indent()
        elif key == Qt.Key.Key_Backtab:
            self._dedent()
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not mods & Qt.KeyboardModifier.ShiftModifier:
            self._newline()
        elif key == Qt.Key.Key_Backspace and self._backspace_indent():
            pass
        else:
            super().keyPressEvent(event)

    def _selected_blocks(self) -> tuple[int, int]:
        cursor = self.textCursor()
        doc = self.document()
        first = doc.findBlock(cursor.selectionStart()).blockNumber()
        last_block = doc.findBlock(cursor.selectionEnd())
        last = last_block.blockNumber()
        # A selection ending at the start of a line does not include that line.
        if cursor.hasSelection() and last > first and cursor.selectionEnd() == last_block.position():
            last -= 1
        return first, last

    def _indent(self) -> None:
        cursor = self.textCursor()
        if cursor.hasSelection() and "\u2029" in cursor.selectedText():
            self._for_each_line(lambda c, text: c.insertText(INDENT))
            return
        column = cursor.positionInBlock()
        cursor.insertText(" " * (len(INDENT) - column % len(INDENT)))

    def _dedent(self) -> None:
        def remove(cursor: QTextCursor, text: str) -> None:
            count = len(text) - len(text.lstrip(" "))
            count = min(count, len(INDENT)) if text[:1] != "\t" else 1
            if count:
                cursor.movePosition(QTextCursor.MoveOperation.Right, QTextCursor.MoveMode.KeepAnchor, count)
                cursor.removeSelectedText()

        self._for_each_line(remove)

    def _for_each_line(self, action) -> None:
        first, last = self._selected_blocks()
        edit = QTextCursor(self.document())
        edit.beginEditBlock()
        for number in range(first, last + 1):
            block = self.document().findBlockByNumber(number)
            edit.setPosition(block.position())
            action(edit, block.text())
        edit.endEditBlock()

    def _newline(self) -> None:
        cursor = self.textCursor()
        line = cursor.block().text()[: cursor.positionInBlock()]
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        if _code_part(line).rstrip().endswith(":"):
            indent += INDENT
        cursor.beginEditBlock()
        cursor.insertText("\n" + indent)
        cursor.endEditBlock()
        self.ensureCursorVisible()

    def _backspace_indent(self) -> bool:
        cursor = self.textCursor()
        if cursor.hasSelection():
            return False
        before = cursor.block().text()[: cursor.positionInBlock()]
        if not before or before.strip(" "):
            return False
        count = (len(before) - 1) % len(INDENT) + 1
        cursor.movePosition(QTextCursor.MoveOperation.Left, QTextCursor.MoveMode.KeepAnchor, count)
        cursor.removeSelectedText()
        return True

    # -- painting and selections ---------------------------------------------

    def _refresh_selections(self) -> None:
        selections = []
        if not self.isReadOnly():
            current = QTextEdit.ExtraSelection()
            current.format.setBackground(_CURRENT_LINE)
            current.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            current.cursor = self.textCursor()
            current.cursor.clearSelection()
            selections.append(current)
        if self._diagnostic is not None:
            line, column, _message = self._diagnostic
            block = self.document().findBlockByNumber(min(line, self.blockCount()) - 1)
            error = QTextEdit.ExtraSelection()
            fmt = QTextCharFormat()
            fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
            fmt.setUnderlineColor(_ERROR)
            error.format = fmt
            cursor = QTextCursor(block)
            text = block.text()
            start = min(max(column - 1, 0), len(text))
            # Underline from the error to the end of the line; a column past the end marks the last character.
            if start >= len(text) and text:
                start = len(text) - 1
            if not text.strip():
                start = 0
            cursor.setPosition(block.position() + start)
            cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
            error.cursor = cursor
            selections.append(error)
        self.setExtraSelections(selections)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        rect = self.contentsRect()
        self._gutter.setGeometry(QRect(rect.left(), rect.top(), self.gutter_width(), rect.height()))

    def _paint_gutter(self, event: QPaintEvent) -> None:
        painter = QPainter(self._gutter)
        painter.fillRect(event.rect(), _GUTTER_BG)
        block = self.firstVisibleBlock()
        number = block.blockNumber()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        bottom = top + round(self.blockBoundingRect(block).height())
        height = self.fontMetrics().height()
        width = self._gutter.width() - 6
        error_line = self._diagnostic[0] if self._diagnostic else -1
        current = self.textCursor().blockNumber()
        while block.isValid() and top <= event.rect().bottom():
            if block.isVisible() and bottom >= event.rect().top():
                if number + 1 == error_line:
                    painter.fillRect(0, top, self._gutter.width(), height, QColor("#fbe3e3"))
                    painter.setPen(_ERROR)
                else:
                    painter.setPen(QColor("#444444") if number == current else _GUTTER_FG)
                painter.drawText(0, top, width, height, Qt.AlignmentFlag.AlignRight, str(number + 1))
            block = block.next()
            top = bottom
            bottom = top + round(self.blockBoundingRect(block).height())
            number += 1
        painter.end()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and self._diagnostic is not None:
            assert isinstance(event, QHelpEvent)
            cursor = self.cursorForPosition(event.pos() - self.viewport().pos())
            if cursor.blockNumber() + 1 == self._diagnostic[0]:
                QToolTip.showText(event.globalPos(), self._diagnostic[2], self)
            else:
                QToolTip.hideText()
            return True
        return super().event(event)

    # -- slots ---------------------------------------------------------------

    @Slot(int)
    def _on_block_count_changed(self, _count: int) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    @Slot(QRect, int)
    def _on_update_request(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())

    @Slot()
    def _on_cursor_position_changed(self) -> None:
        self._refresh_selections()
        self._gutter.update()

    @Slot()
    def _on_text_changed(self) -> None:
        if not self._loading:
            self._debounce.start()
        if self._diagnostic is not None:
            self._refresh_selections()

    @Slot()
    def _on_debounce_timeout(self) -> None:
        self.source_edited.emit(self.toPlainText())
