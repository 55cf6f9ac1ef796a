"""A Python code editor for reader snippets: highlighting, gutter, indentation, comments, brackets, completion."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QEvent, QRect, QSize, Qt, QTimer, Signal, Slot
from PySide6.QtGui import (
    QColor,
    QFocusEvent,
    QFontDatabase,
    QHelpEvent,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QTextBlock,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextDocumentLayout, QPlainTextEdit, QTextEdit, QToolTip, QWidget

from studio.analysis.source_warnings import SourceWarning
from studio.code.code_completion import CodeCompletion
from studio.code.code_text import CLOSERS, OPENERS, code_brackets, code_part, toggle_comment
from studio.code.diagnostic_marks import hover_text, underline, warning_colour
from studio.code.line_actions import LineActions
from studio.code.line_edits import ends_block
from studio.look.editor_theme import EditorTheme, theme_for_palette
from studio.look.highlighter import PythonHighlighter, open_string_at_end

__all__ = ["INDENT", "SnippetEditor"]

INDENT = "    "
EDIT_DEBOUNCE_MS = 300
BRACKET_SCAN_LINES = 500
"""How far bracket matching looks for the partner, so a cursor move stays cheap in a long snippet."""
MAX_FIND_HIGHLIGHTS = 2000

_CONTROL = Qt.KeyboardModifier.ControlModifier
_EDITOR_SHORTCUTS = {Qt.Key.Key_F, Qt.Key.Key_H, Qt.Key.Key_G, Qt.Key.Key_Slash, Qt.Key.Key_Space}


class _Gutter(QWidget):
    """Line numbers beside the editor; painted by the editor, which knows the block geometry. No signals."""

    def __init__(self, editor: SnippetEditor) -> None:
        super().__init__(editor)
        self._editor = editor

    def sizeHint(self) -> QSize:
        return QSize(self._editor.gutter_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:
        self._editor._paint_gutter(event)


class SnippetEditor(QPlainTextEdit):
    """Edits one Python snippet.

    Ctrl+F / Ctrl+H / Ctrl+G ask the host for find, replace and go to line
    (the signals below); Ctrl+/ toggles comments, Tab / Shift+Tab indent and
    dedent, Ctrl+Space completes. Alt+Up / Alt+Down move the line or the
    selected lines, Shift+Alt+Up / Down copy them, Ctrl+D duplicates them and
    Ctrl+Shift+K deletes them (`line_actions.LINE_KEYS`); brackets and quotes
    close themselves and are typed over; Enter after `return`, `raise`, `pass`,
    `break` or `continue` dedents. The compile error (`set_diagnostic`) and the
    warnings (`set_warnings`) are wavy underlines in the error and warning colours,
    their messages shown on hover. Colours follow the widget's palette.

    Signals:
        source_edited(str source): the text changed, debounced so a burst of typing emits once.
        find_requested(bool replace): Ctrl+F (False) or Ctrl+H (True) was pressed.
        go_to_line_requested(): Ctrl+G was pressed.
        escape_pressed(): Escape was pressed in the editor (the host closes its bars).
    """

    source_edited = Signal(str)
    find_requested = Signal(bool)
    go_to_line_requested = Signal()
    escape_pressed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("snippetEditor")
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSize(max(font.pointSize(), 10))
        self.setFont(font)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self._theme: EditorTheme = theme_for_palette(self.palette())
        self._gutter = _Gutter(self)
        self._diagnostic: tuple[int, int, str] | None = None
        self._warnings: tuple[SourceWarning, ...] = ()
        self._warning_colour = warning_colour(self.palette(), self._theme)
        self._brackets: tuple[int, ...] = ()
        self._find_matches: list[tuple[int, int]] = []
        self._gutter_line = -1
        self._completion_prepared = False
        self._loading = False
        self.completion = CodeCompletion(self)
        self.lines = LineActions(self)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(EDIT_DEBOUNCE_MS)
        self._debounce.timeout.connect(self._on_debounce_timeout)
        self.blockCountChanged.connect(self._on_block_count_changed)
        self.updateRequest.connect(self._on_update_request)
        self.cursorPositionChanged.connect(self._on_cursor_position_changed)
        self.textChanged.connect(self._on_text_changed)
        # The editor owns its documents (the default one belongs to Qt and dies on the first swap).
        self.swap_document(self.create_document(""))

    # -- documents -----------------------------------------------------------

    def create_document(self, source: str) -> QTextDocument:
        """A new document for this editor holding `source`, highlighted, with an empty undo stack."""
        document = QTextDocument(self)
        document.setDocumentLayout(QPlainTextDocumentLayout(document))
        document.setDefaultFont(self.font())
        PythonHighlighter(document)
        document.setPlainText(source)
        document.clearUndoRedoStacks()
        return document

    def swap_document(self, document: QTextDocument, *, cursor_position: int | None = None) -> None:
        """Show `document` (one from `create_document`), with its own text and undo history."""
        self._loading = True
        try:
            self.setDocument(document)
            document.setDefaultFont(self.font())
            self.setTabStopDistance(self.fontMetrics().horizontalAdvance(" ") * len(INDENT))
            if cursor_position is not None:
                cursor = self.textCursor()
                cursor.setPosition(min(cursor_position, document.characterCount() - 1))
                self.setTextCursor(cursor)
        finally:
            self._loading = False
        self._debounce.stop()
        self._find_matches = []
        self._on_block_count_changed(self.blockCount())
        self._refresh_selections()
        self._gutter.update()

    @property
    def highlighter(self) -> PythonHighlighter:
        found = self.document().findChild(PythonHighlighter)
        assert found is not None, "documents come from create_document"
        return found

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
        self.completion.set_context(prelude=prelude, variables=variables)

    def set_word_wrap(self, on: bool) -> None:
        """Wrap long lines at the editor's width (on) or scroll horizontally (off)."""
        mode = QPlainTextEdit.LineWrapMode.WidgetWidth if on else QPlainTextEdit.LineWrapMode.NoWrap
        self.setLineWrapMode(mode)

    def source(self) -> str:
        return self.toPlainText()

    @property
    def theme(self) -> EditorTheme:
        """The colours in use (from the palette)."""
        return self._theme

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
        """Underline `line` (1-based) from `column` (1-based; 0 for the whole line) with a wave."""
        self._diagnostic = (max(1, line), max(0, column), message)
        self._refresh_selections()
        self._gutter.update()

    def clear_diagnostic(self) -> None:
        if self._diagnostic is not None:
            self._diagnostic = None
            self._refresh_selections()
            self._gutter.update()

    @property
    def warnings(self) -> tuple[SourceWarning, ...]:
        """The warnings underlined (pyflakes': undefined names, unused imports, …)."""
        return self._warnings

    @property
    def warning_colour(self) -> QColor:
        """The warnings' underline colour (from the palette's warning hue)."""
        return self._warning_colour

    def set_warnings(self, warnings: Sequence[SourceWarning]) -> None:
        """Underline each warning's place in the warning colour, its message on hover ([] to clear)."""
        if tuple(warnings) != self._warnings:
            self._warnings = tuple(warnings)
            self._refresh_selections()

    def hover_text(self, line: int) -> str:
        """What hovering `line` (1-based) shows: its error and warnings, one a line ("" for none)."""
        return hover_text(line, error=self._diagnostic, warnings=self._warnings)

    @property
    def bracket_match(self) -> tuple[int, ...]:
        """Document positions of the highlighted bracket pair at the cursor (empty when none)."""
        return self._brackets

    def set_find_matches(self, matches: list[tuple[int, int]]) -> None:
        """Highlight these (start, end) ranges, the find bar's matches ([] to clear)."""
        self._find_matches = matches[:MAX_FIND_HIGHLIGHTS]
        self._refresh_selections()

    def gutter_width(self) -> int:
        digits = max(3, len(str(self.blockCount())))
        return 12 + self.fontMetrics().horizontalAdvance("9") * digits

    def toggle_comment(self) -> None:
        """Comment out the current or selected lines with `# `, or restore them (one undo step)."""
        first, last = self._selected_blocks()
        document = self.document()
        lines = [document.findBlockByNumber(n).text() for n in range(first, last + 1)]
        toggled = toggle_comment(lines)
        if toggled == lines:
            return
        had_selection = self.textCursor().hasSelection()
        column = self.textCursor().positionInBlock()
        edit = QTextCursor(document.findBlockByNumber(first))
        end_block = document.findBlockByNumber(last)
        edit.beginEditBlock()
        edit.setPosition(end_block.position() + end_block.length() - 1, QTextCursor.MoveMode.KeepAnchor)
        edit.insertText("\n".join(toggled))
        edit.endEditBlock()
        cursor = QTextCursor(document.findBlockByNumber(first))
        if had_selection:
            end_block = document.findBlockByNumber(last)
            cursor.setPosition(end_block.position() + end_block.length() - 1, QTextCursor.MoveMode.KeepAnchor)
        else:
            shift = len(toggled[0]) - len(lines[0])
            cursor.setPosition(cursor.position() + max(0, min(column + shift, len(toggled[0]))))
        self.setTextCursor(cursor)

    # -- keys ----------------------------------------------------------------

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride:
            assert isinstance(event, QKeyEvent)
            # Claim the editor's own shortcuts before a window action with the same keys takes them.
            if (event.modifiers() == _CONTROL and event.key() in _EDITOR_SHORTCUTS) or self.lines.command_for(event):
                event.accept()
                return True
        if event.type() == QEvent.Type.ToolTip and (self._diagnostic is not None or self._warnings):
            assert isinstance(event, QHelpEvent)
            cursor = self.cursorForPosition(event.pos() - self.viewport().pos())
            said = self.hover_text(cursor.blockNumber() + 1)
            if said:
                QToolTip.showText(event.globalPos(), said, self)
            else:
                QToolTip.hideText()
            return True
        return super().event(event)

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        if not self._completion_prepared:
            self._completion_prepared = True
            self.completion.prepare()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        mods = event.modifiers()
        if self.completion.popup_visible and key in (
            Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Tab, Qt.Key.Key_Backtab, Qt.Key.Key_Escape,
        ):  # fmt: skip
            event.ignore()  # the completer acts on these itself
            return
        if mods == _CONTROL and key in _EDITOR_SHORTCUTS:
            self._editor_shortcut(key)
            return
        command = self.lines.command_for(event)
        if command is not None:
            self.lines.run(command)
            self.completion.cursor_left()
            return
        if key == Qt.Key.Key_Escape:
            self.escape_pressed.emit()
        if key == Qt.Key.Key_Tab and not mods & _CONTROL:
            self._indent()
        elif key == Qt.Key.Key_Backtab:
            self._dedent()
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not mods & Qt.KeyboardModifier.ShiftModifier:
            self._newline()
        elif key == Qt.Key.Key_Backspace and (self.lines.backspace_pair() or self._backspace_indent()):
            pass
        elif not mods & (_CONTROL | Qt.KeyboardModifier.AltModifier) and self.lines.typed(event.text()):
            self.completion.text_typed(event.text())
            return
        else:
            super().keyPressEvent(event)
            typed = event.text()
            if typed and typed.isprintable() and not mods & (_CONTROL | Qt.KeyboardModifier.AltModifier):
                self.completion.text_typed(typed)
                return
        self.completion.cursor_left()

    def _editor_shortcut(self, key: int) -> None:
        if key == Qt.Key.Key_F:
            self.find_requested.emit(False)
        elif key == Qt.Key.Key_H:
            self.find_requested.emit(True)
        elif key == Qt.Key.Key_G:
            self.go_to_line_requested.emit()
        elif key == Qt.Key.Key_Slash:
            self.toggle_comment()
        elif key == Qt.Key.Key_Space and self.completion.enabled:
            self.completion.request_now()

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

    def _for_each_line(self, action: Callable[[QTextCursor, str], None]) -> None:
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
        if code_part(line).rstrip().endswith(":"):
            indent += INDENT
        elif ends_block(line):
            indent = indent[: max(0, len(indent) - len(INDENT))]
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

    # -- brackets ------------------------------------------------------------

    @staticmethod
    def _line_brackets(block: QTextBlock) -> list[tuple[int, str]]:
        previous = block.previous()
        start_state = open_string_at_end(previous.userState()) if previous.isValid() else ""
        return code_brackets(block.text(), start_state)

    def _find_bracket_pair(self) -> tuple[int, ...]:
        cursor = self.textCursor()
        if cursor.hasSelection():
            return ()
        block = cursor.block()
        text = block.text()
        column = cursor.positionInBlock()
        if not any(ch in text for ch in "()[]{}"):
            return ()
        brackets = self._line_brackets(block)
        at = dict(brackets)
        # The bracket after the cursor wins, then the one before it (as in most editors).
        for col in (column, column - 1):
            if col in at:
                break
        else:
            return ()
        bracket = at[col]
        forward = bracket in OPENERS
        partner = OPENERS.get(bracket) or CLOSERS[bracket]
        depth = 0
        current, runs = block, [b for b in brackets if (b[0] > col if forward else b[0] < col)]
        for _ in range(BRACKET_SCAN_LINES):
            for c, ch in runs if forward else reversed(runs):
                if ch == bracket:
                    depth += 1
                elif ch == partner:
                    if depth == 0:
                        return (block.position() + col, current.position() + c)
                    depth -= 1
            current = current.next() if forward else current.previous()
            if not current.isValid():
                return ()
            runs = self._line_brackets(current)
        return ()

    # -- painting and selections ---------------------------------------------

    def _refresh_selections(self) -> None:
        theme = self._theme
        selections = []
        # An empty editor shows its placeholder instead: the current line's band would paint over its first line.
        if not self.isReadOnly() and not (self.document().isEmpty() and self.placeholderText()):
            current = QTextEdit.ExtraSelection()
            current.format.setBackground(theme.current_line)
            current.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            current.cursor = self.textCursor()
            current.cursor.clearSelection()
            selections.append(current)
        for start, end in self._find_matches:
            found = QTextEdit.ExtraSelection()
            found.format.setBackground(theme.find_match)
            found.cursor = QTextCursor(self.document())
            found.cursor.setPosition(start)
            found.cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            selections.append(found)
        for position in self._brackets:
            mark = QTextEdit.ExtraSelection()
            mark.format.setBackground(theme.bracket_match)
            mark.cursor = QTextCursor(self.document())
            mark.cursor.setPosition(position)
            mark.cursor.setPosition(position + 1, QTextCursor.MoveMode.KeepAnchor)
            selections.append(mark)
        document = self.document()
        for warning in self._warnings:
            wave = underline(document, line=warning.line, column=warning.column, end=warning.end,
                             colour=self._warning_colour)  # fmt: skip
            if wave is not None:
                selections.append(wave)
        if self._diagnostic is not None:  # last: drawn over a warning on the same text
            line, column, _message = self._diagnostic
            error = underline(document, line=min(line, self.blockCount()), column=column, colour=theme.error)
            if error is not None:
                selections.append(error)
        self.setExtraSelections(selections)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            theme = theme_for_palette(self.palette())
            if theme != self._theme:
                self._theme = theme
                self._warning_colour = warning_colour(self.palette(), theme)
                self.highlighter.set_palette(self.palette())
                self._refresh_selections()
                self._gutter.update()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        rect = self.contentsRect()
        self._gutter.setGeometry(QRect(rect.left(), rect.top(), self.gutter_width(), rect.height()))

    def _paint_gutter(self, event: QPaintEvent) -> None:
        theme = self._theme
        painter = QPainter(self._gutter)
        painter.fillRect(event.rect(), theme.gutter_background)
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
                    painter.fillRect(0, top, self._gutter.width(), height, theme.error_background)
                    painter.setPen(theme.error)
                else:
                    painter.setPen(theme.gutter_current if number == current else theme.gutter_text)
                painter.drawText(0, top, width, height, Qt.AlignmentFlag.AlignRight, str(number + 1))
            block = block.next()
            top = bottom
            bottom = top + round(self.blockBoundingRect(block).height())
            number += 1
        painter.end()

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
        self._brackets = self._find_bracket_pair()
        self._refresh_selections()
        line = self.textCursor().blockNumber()
        if line != self._gutter_line:  # the gutter marks the current line's number: repaint only when it moves
            self._gutter_line = line
            self._gutter.update()

    @Slot()
    def _on_text_changed(self) -> None:
        if not self._loading:
            self._debounce.start()
        if self._diagnostic is not None or self._warnings:
            self._refresh_selections()

    @Slot()
    def _on_debounce_timeout(self) -> None:
        self.source_edited.emit(self.toPlainText())
