"""The code editor's inline "go to line" prompt: type a number, Enter jumps there, Escape goes back."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QIntValidator, QKeyEvent, QTextCursor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QWidget

__all__ = ["GoToLineBar"]


class GoToLineBar(QWidget):
    """A one-field prompt under the editor (object name `goToLineBar`, field `goToLineField`).

    Signals:
        closed(): the prompt was closed (after a jump or by Escape).
    """

    closed = Signal()

    def __init__(self, editor: QPlainTextEdit, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("goToLineBar")
        self._editor = editor
        self.label = QLabel(self)
        self.field = QLineEdit(self)
        self.field.setObjectName("goToLineField")
        self.field.setValidator(QIntValidator(1, 1_000_000_000, self.field))
        self.field.installEventFilter(self)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        layout.addWidget(self.label)
        layout.addWidget(self.field, 1)
        self.hide()

    def open(self) -> None:
        count = self._editor.blockCount()
        self.label.setText(f"Go to line (1 to {count}):")
        self.field.setText(str(self._editor.textCursor().blockNumber() + 1))
        self.show()
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()

    def go(self, line: int) -> None:
        """Put the cursor at the start of `line` (1-based, clamped to the document) and close."""
        document = self._editor.document()
        block = document.findBlockByNumber(min(max(line, 1), document.blockCount()) - 1)
        cursor = QTextCursor(block)
        self._editor.setTextCursor(cursor)
        self._editor.centerCursor()
        self.close_bar()

    def close_bar(self) -> None:
        self.hide()
        self._editor.setFocus(Qt.FocusReason.OtherFocusReason)
        self.closed.emit()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.field and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            if event.key() == Qt.Key.Key_Escape:
                self.close_bar()
                return True
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                text = self.field.text()
                if text.isdigit():
                    self.go(int(text))
                return True
        return False
