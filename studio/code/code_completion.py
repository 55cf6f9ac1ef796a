"""Completion while typing: a QCompleter popup fed by jedi in the analysis helper process."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence

from PySide6.QtCore import QObject, QStringListModel, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QAbstractItemView, QCompleter, QPlainTextEdit

from studio.analysis.completion_source import (
    Candidate,
    CompletionRequest,
    is_completion_point,
    params_key_prefix,
    word_prefix,
)
from studio.analysis.worker import CompletionWorker

logger = logging.getLogger(__name__)

__all__ = ["TRIGGER_DEBOUNCE_MS", "CodeCompletion"]

TRIGGER_DEBOUNCE_MS = 120
POPUP_ROWS = 10


class CodeCompletion(QObject):
    """Completion for one editor: triggers, the popup, and inserting the chosen name.

    Typing never waits for jedi: requests go to the shared worker, which hands
    only the newest one to the process, and an answer is shown only if the
    cursor is still in the word it was asked for.

    The editor calls `text_typed` after inserting text, `request_now` on
    Ctrl+Space, and asks `popup_visible` before handling Enter/Tab/Escape.

    Signals:
        requested(int request_id): a request went to the worker.
        answered(int request_id): the worker's answer to this editor arrived (shown or dropped as stale).
        shown(list names): `list[str]`, the names the popup opened with (for tests and the bench).
    """

    requested = Signal(int)
    answered = Signal(int)
    shown = Signal(list)

    _owners = itertools.count(1)

    def __init__(self, editor: QPlainTextEdit) -> None:
        super().__init__(editor)
        self._editor = editor
        self._owner = next(self._owners)
        self._ids = itertools.count(1)
        self._latest: CompletionRequest | None = None
        self._prelude = ""
        self._variables: tuple[str, ...] = ()
        self.enabled = True
        self._model = QStringListModel(self)
        self._candidates: dict[str, Candidate] = {}
        self.completer = QCompleter(self._model, self)
        self.completer.setWidget(editor)
        self.completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setMaxVisibleItems(POPUP_ROWS)
        self.completer.activated.connect(self._on_activated)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(TRIGGER_DEBOUNCE_MS)
        self._timer.timeout.connect(self.request_now)
        self._worker: CompletionWorker | None = None

    # -- API for the editor --------------------------------------------------

    def set_context(self, *, prelude: str, variables: Sequence[str]) -> None:
        self._prelude = prelude
        self._variables = tuple(variables)

    def _popup(self) -> QAbstractItemView:
        popup = self.completer.popup()
        assert popup is not None, "QCompleter creates its popup"
        return popup

    @property
    def popup_visible(self) -> bool:
        return self._popup().isVisible()

    def hide_popup(self) -> None:
        self._popup().hide()

    def prepare(self) -> None:
        """Get the completion process going (the editor calls this when it first gets the focus)."""
        if self.enabled:
            self._connect_worker().warm_up()

    def _connect_worker(self) -> CompletionWorker:
        if self._worker is None:
            self._worker = CompletionWorker.shared()
            self._worker.completed.connect(self._on_completed)
        return self._worker

    def text_typed(self, typed: str) -> None:
        """The user inserted `typed` at the cursor: narrow an open popup, and ask again after a pause."""
        if not self.enabled:
            return
        before = self._before_cursor()
        if self.popup_visible:
            prefix = self._prefix(before)
            if not typed or not (typed[-1].isidentifier() or typed[-1].isdigit()):
                self.hide_popup()
            else:
                self._filter(prefix)
        if is_completion_point(before, typed=typed):
            self._timer.start()
        else:
            self._timer.stop()

    def cursor_left(self) -> None:
        """The cursor moved without typing (or text was deleted): a pending request no longer applies."""
        self._timer.stop()
        self._latest = None
        self.hide_popup()

    @Slot()
    def request_now(self) -> None:
        """Ask the worker for completions at the cursor now (Ctrl+Space, or after the trigger pause)."""
        self._timer.stop()
        cursor = self._editor.textCursor()
        request = CompletionRequest(
            request_id=next(self._ids),
            owner=self._owner,
            source=self._editor.toPlainText(),
            line=cursor.blockNumber() + 1,
            column=len(cursor.block().text()[: cursor.positionInBlock()]),
            prelude=self._prelude,
            variables=self._variables,
        )
        self._latest = request
        self._connect_worker().submit(request)
        self.requested.emit(request.request_id)

    # -- internals -----------------------------------------------------------

    def _before_cursor(self) -> str:
        cursor = self._editor.textCursor()
        return cursor.block().text()[: cursor.positionInBlock()]

    @staticmethod
    def _prefix(before: str) -> str:
        key = params_key_prefix(before)
        return key[0] if key is not None else word_prefix(before)

    def _filter(self, prefix: str) -> None:
        self.completer.setCompletionPrefix(prefix)
        popup = self._popup()
        if self.completer.completionCount() == 0:
            popup.hide()
            return
        popup.setCurrentIndex(self.completer.completionModel().index(0, 0))
        rect = self._editor.cursorRect()
        rect.setWidth(popup.sizeHintForColumn(0) + popup.verticalScrollBar().sizeHint().width() + 8)
        self.completer.complete(rect)

    @Slot(object, list)
    def _on_completed(self, request: CompletionRequest, candidates: list[Candidate]) -> None:
        if request.owner != self._owner:
            return  # another editor's
        self.answered.emit(request.request_id)
        latest = self._latest
        if latest is None or request.request_id != latest.request_id:
            return  # stale
        cursor = self._editor.textCursor()
        before = self._before_cursor()
        prefix = self._prefix(before)
        asked = latest.column - len(self._prefix(latest.source.split("\n")[latest.line - 1][: latest.column]))
        # Still typing the same word on the same line: show (narrowed to what was typed since); else drop.
        if cursor.blockNumber() + 1 != latest.line or len(before) - len(prefix) != asked or not candidates:
            return
        self._candidates = {c.name: c for c in candidates}
        names = list(self._candidates)
        self._model.setStringList(names)
        self._filter(prefix)
        if self.popup_visible:
            self.shown.emit(names)

    @Slot(str)
    def _on_activated(self, name: str) -> None:
        cursor = self._editor.textCursor()
        before = self._before_cursor()
        prefix = self._prefix(before)
        candidate = self._candidates.get(name)
        cursor.beginEditBlock()
        cursor.movePosition(cursor.MoveOperation.Left, cursor.MoveMode.KeepAnchor, len(prefix))
        cursor.insertText(name + (candidate.suffix if candidate else ""))
        cursor.endEditBlock()
        self._editor.setTextCursor(cursor)
        self._latest = None
