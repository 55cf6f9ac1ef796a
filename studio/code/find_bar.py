"""The code editor's inline find / replace bar: next and previous match, match case, whole word, replace all."""

from __future__ import annotations

import logging

from PySide6.QtCore import QEvent, QObject, Qt, Signal, Slot
from PySide6.QtGui import QKeyEvent, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QCheckBox,
    QGridLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QWidget,
)

logger = logging.getLogger(__name__)

__all__ = ["MAX_COUNTED", "FindBar"]

MAX_COUNTED = 10_000
"""Matches counted (and highlighted) at most, so a one-letter search in a huge snippet stays cheap."""


def _is_word_char(ch: str) -> bool:
    # Qt's FindWholeWords splits at "_"; in code `alpha_x` is one word.
    return bool(ch) and (ch.isalnum() or ch == "_")


class FindBar(QWidget):
    """Find and replace in one `QPlainTextEdit`; hidden until `open_find` / `open_replace`.

    Enter finds the next match and selects it in the editor, Shift+Enter the
    previous one, Escape closes the bar and gives the focus back to the editor.
    Replace all is one undo step in the editor.

    Signals:
        matches_changed(list positions): `list[tuple[int, int]]`, (start, end) of every match, for the editor
            to highlight.
        closed(): the bar was closed.
    """

    matches_changed = Signal(list)
    closed = Signal()

    def __init__(self, editor: QPlainTextEdit, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("findBar")
        self._editor = editor
        self._cache: tuple[tuple[object, ...], list[tuple[int, int]]] | None = None
        self.find_field = QLineEdit(self)
        self.find_field.setObjectName("findField")
        self.find_field.setPlaceholderText("Find")
        self.find_field.setClearButtonEnabled(True)
        self.replace_field = QLineEdit(self)
        self.replace_field.setObjectName("replaceField")
        self.replace_field.setPlaceholderText("Replace with")
        self.match_case = QCheckBox("Match case", self)
        self.match_case.setObjectName("findMatchCase")
        self.whole_word = QCheckBox("Whole word", self)
        self.whole_word.setObjectName("findWholeWord")
        self.status = QLabel(self)
        self.status.setObjectName("findStatus")
        self.status.setMinimumWidth(self.status.fontMetrics().horizontalAdvance("10000+ matches") + 8)
        previous = QPushButton("Previous", self)
        previous.setObjectName("findPreviousButton")
        previous.setToolTip("Previous match (Shift+Enter)")
        following = QPushButton("Next", self)
        following.setObjectName("findNextButton")
        following.setToolTip("Next match (Enter)")
        self.replace_button = QPushButton("Replace", self)
        self.replace_button.setObjectName("replaceButton")
        self.replace_all_button = QPushButton("Replace all", self)
        self.replace_all_button.setObjectName("replaceAllButton")
        close = QToolButton(self)
        close.setObjectName("findCloseButton")
        close.setText("✕")
        close.setToolTip("Close (Escape)")
        close.setAutoRaise(True)
        layout = QGridLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        layout.setHorizontalSpacing(4)
        layout.setVerticalSpacing(2)
        layout.addWidget(self.find_field, 0, 0)
        layout.addWidget(previous, 0, 1)
        layout.addWidget(following, 0, 2)
        layout.addWidget(self.match_case, 0, 3)
        layout.addWidget(self.whole_word, 0, 4)
        layout.addWidget(self.status, 0, 5)
        layout.addWidget(close, 0, 6)
        layout.addWidget(self.replace_field, 1, 0)
        layout.addWidget(self.replace_button, 1, 1)
        layout.addWidget(self.replace_all_button, 1, 2)
        layout.setColumnStretch(0, 1)
        self._replace_row = (self.replace_field, self.replace_button, self.replace_all_button)
        self.find_field.installEventFilter(self)
        self.replace_field.installEventFilter(self)
        self.find_field.textEdited.connect(self._on_find_edited)
        self.match_case.toggled.connect(self._on_options_toggled)
        self.whole_word.toggled.connect(self._on_options_toggled)
        previous.clicked.connect(self.find_previous)
        following.clicked.connect(self.find_next)
        self.replace_button.clicked.connect(self.replace_one)
        self.replace_all_button.clicked.connect(self.replace_all)
        close.clicked.connect(self.close_bar)
        editor.textChanged.connect(self._on_editor_text_changed)
        editor.cursorPositionChanged.connect(self._on_editor_text_changed)  # "3 of 12" follows a click too
        self.hide()

    # -- public API ----------------------------------------------------------

    def open_find(self) -> None:
        """Show the bar without the replace row, seeded with the editor's one-line selection."""
        self._open(replace=False)

    def open_replace(self) -> None:
        self._open(replace=True)

    def close_bar(self) -> None:
        """Hide the bar, drop the match highlights and give the editor the focus back."""
        was_visible = self.isVisible()
        self.hide()
        self.matches_changed.emit([])
        self._editor.setFocus(Qt.FocusReason.OtherFocusReason)
        if was_visible:
            self.closed.emit()

    def matches(self) -> list[tuple[int, int]]:
        """(start, end) document positions of every match of the find field (at most MAX_COUNTED)."""
        term = self.find_field.text()
        if not term:
            return []
        document = self._editor.document()
        key = (document, document.revision(), term, self.match_case.isChecked(), self.whole_word.isChecked())
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        found: list[tuple[int, int]] = []
        cursor = QTextCursor(document)
        flags = self._flags()
        whole = self.whole_word.isChecked()
        while len(found) < MAX_COUNTED:
            cursor = document.find(term, cursor, flags)
            if cursor.isNull():
                break
            start, end = cursor.selectionStart(), cursor.selectionEnd()
            if whole and (_is_word_char(document.characterAt(start - 1)) or _is_word_char(document.characterAt(end))):
                continue
            found.append((start, end))
        self._cache = (key, found)
        return found

    @Slot()
    def find_next(self) -> bool:
        return self._find(backward=False)

    @Slot()
    def find_previous(self) -> bool:
        return self._find(backward=True)

    @Slot()
    def replace_one(self) -> None:
        """Replace the selected match (if the selection is one), then select the next match."""
        cursor = self._editor.textCursor()
        if (cursor.selectionStart(), cursor.selectionEnd()) in self.matches():
            cursor.insertText(self.replace_field.text())
            self._editor.setTextCursor(cursor)
        self.find_next()

    @Slot()
    def replace_all(self) -> int:
        """Replace every match in one undo step; returns how many were replaced."""
        found = self.matches()
        if not found:
            self._update_status()
            return 0
        replacement = self.replace_field.text()
        cursor = QTextCursor(self._editor.document())
        cursor.beginEditBlock()
        for start, end in reversed(found):  # back to front, so earlier positions stay valid
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            cursor.insertText(replacement)
        cursor.endEditBlock()
        logger.debug("replaced %d matches", len(found))
        self._update_status(replaced=len(found))
        return len(found)

    # -- internals -----------------------------------------------------------

    def _open(self, *, replace: bool) -> None:
        selected = self._editor.textCursor().selectedText()
        if selected and "\u2029" not in selected:
            self.find_field.setText(selected)
        for widget in self._replace_row:
            widget.setVisible(replace)
        self.show()
        field = self.replace_field if replace and self.find_field.text() else self.find_field
        field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        field.selectAll()
        self._refresh()

    def _flags(self) -> QTextDocument.FindFlag:
        flags = QTextDocument.FindFlag(0)
        if self.match_case.isChecked():
            flags |= QTextDocument.FindFlag.FindCaseSensitively
        return flags

    def _find(self, *, backward: bool, from_start_of_selection: bool = False) -> bool:
        found = self.matches()
        if not found:
            self._update_status()
            return False
        cursor = self._editor.textCursor()
        if backward:
            before = [m for m in found if m[0] < cursor.selectionStart()]
            target = before[-1] if before else found[-1]  # wraps around
        else:
            origin = cursor.selectionStart() if from_start_of_selection else cursor.selectionEnd()
            after = [m for m in found if m[0] >= origin]
            target = after[0] if after else found[0]
        cursor.setPosition(target[0])
        cursor.setPosition(target[1], QTextCursor.MoveMode.KeepAnchor)
        self._editor.setTextCursor(cursor)
        self._editor.ensureCursorVisible()
        self._update_status()
        return True

    def _refresh(self) -> None:
        if self.find_field.text():
            self._find(backward=False, from_start_of_selection=True)
        else:
            self._update_status()

    def _update_status(self, *, replaced: int | None = None) -> None:
        found = self.matches() if self.isVisible() else []
        if replaced is not None:
            self.status.setText(f"Replaced {replaced}")
        elif not self.find_field.text():
            self.status.setText("")
        elif not found:
            self.status.setText("No matches")
        else:
            cursor = self._editor.textCursor()
            current = (cursor.selectionStart(), cursor.selectionEnd())
            total = f"{len(found)}+" if len(found) >= MAX_COUNTED else str(len(found))
            if current in found:
                self.status.setText(f"{found.index(current) + 1} of {total}")
            else:
                self.status.setText(f"{total} match" + ("" if len(found) == 1 else "es"))
        self.matches_changed.emit(found)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.KeyPress and watched in (self.find_field, self.replace_field):
            assert isinstance(event, QKeyEvent)
            key, mods = event.key(), event.modifiers()
            if key == Qt.Key.Key_Escape:
                self.close_bar()
                return True
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                if watched is self.replace_field:
                    self.replace_one()
                elif mods & Qt.KeyboardModifier.ShiftModifier:
                    self.find_previous()
                else:
                    self.find_next()
                return True
        return False

    # -- slots ---------------------------------------------------------------

    @Slot(str)
    def _on_find_edited(self, _text: str) -> None:
        self._refresh()

    @Slot(bool)
    def _on_options_toggled(self, _checked: bool) -> None:
        self._refresh()

    @Slot()
    def _on_editor_text_changed(self) -> None:
        if self.isVisible():
            self._update_status()
