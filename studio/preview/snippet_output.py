"""The snippet output view: one block per read (time, URI), stdout and stderr in the order they were written."""

from __future__ import annotations

import time
from dataclasses import dataclass

from PySide6.QtCore import Slot
from PySide6.QtGui import QFontDatabase, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from studio.look.theme import status_colors

__all__ = ["OUTPUT_MAX_LINES", "OutputBlock", "SnippetOutputView"]

OUTPUT_MAX_LINES = 2000


@dataclass(frozen=True, slots=True)
class OutputBlock:
    """What one snippet call printed: the facade's `SnippetOutput` has these fields."""

    key: str
    uri: str
    started: float
    chunks: tuple[tuple[str, str], ...]


class SnippetOutputView(QWidget):
    """A bounded log of snippet output blocks; stderr is shown in the palette's error colour.

    No signals: the owner feeds it with `add_block` (or `append_text` for output with no read attached).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("snippetOutputPane")
        self.text_view = QPlainTextEdit(self)
        self.text_view.setObjectName("snippetOutput")
        self.text_view.setAccessibleName("Snippet output")
        self.text_view.setAccessibleDescription("What the snippet printed, one block per read")
        self.text_view.setReadOnly(True)
        self.text_view.setMaximumBlockCount(OUTPUT_MAX_LINES)
        self.text_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text_view.setPlaceholderText("What the snippet prints appears here, one block per read")
        self.clear_button = QPushButton("Clear", self)
        self.clear_button.setObjectName("clearOutputButton")
        self.clear_button.setToolTip("Clear the snippet output")
        self.clear_button.clicked.connect(self.clear)
        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        header.addWidget(QLabel("<b>Snippet output</b>", self))
        header.addStretch(1)
        header.addWidget(self.clear_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(header)
        layout.addWidget(self.text_view, 1)
        self._blocks = 0

    @property
    def block_count(self) -> int:
        """Read blocks shown since the last clear."""
        return self._blocks

    def text(self) -> str:
        return self.text_view.toPlainText()

    @Slot()
    def clear(self) -> None:
        self.text_view.clear()
        self._blocks = 0

    def add_block(self, block: OutputBlock) -> None:
        """Append one read's output under a header with its time and URI."""
        colors = status_colors(self.palette())
        stamp = time.strftime("%H:%M:%S", time.localtime(block.started))
        millis = int((block.started % 1) * 1000)
        header = f"── {stamp}.{millis:03d}  {block.uri or '(completion)'}"
        header_format = QTextCharFormat()
        header_format.setForeground(colors.muted_text)
        self._append(header, header_format)
        error_format = QTextCharFormat()
        error_format.setForeground(colors.error_text)
        for stream, text in block.chunks:
            self._append(text.rstrip("\n"), error_format if stream == "stderr" else QTextCharFormat())
        self._blocks += 1

    def append_text(self, text: str) -> None:
        """Append output that came without a read attached (the pool's plain output stream)."""
        self._append(text.rstrip("\n"), QTextCharFormat())

    def _append(self, text: str, char_format: QTextCharFormat) -> None:
        view = self.text_view
        cursor = QTextCursor(view.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        if not view.document().isEmpty():
            cursor.insertBlock()
        cursor.insertText(text, char_format)
        view.verticalScrollBar().setValue(view.verticalScrollBar().maximum())
