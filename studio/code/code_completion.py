"""Completion while typing: a QCompleter popup fed by jedi in a completion process, via one worker thread."""

from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QObject, QStringListModel, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QAbstractItemView, QCompleter, QPlainTextEdit

from studio.code.completion_process import encode_request
from studio.code.completion_source import (
    Candidate,
    CheckRequest,
    CompletionRequest,
    is_completion_point,
    params_key_prefix,
    word_prefix,
)

logger = logging.getLogger(__name__)

__all__ = ["TRIGGER_DEBOUNCE_MS", "CodeCompletion", "CompletionWorker"]

TRIGGER_DEBOUNCE_MS = 120
POPUP_ROWS = 10


def _release(process: subprocess.Popen[str]) -> None:
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            # A pipe to a dead process may fail to flush; it is closed all the same.
            with contextlib.suppress(OSError):
                pipe.close()


class CompletionWorker(QObject):
    """Feeds completion requests to the completion process from one thread; newest request per owner wins.

    The thread blocks on the process's pipe (the GIL is free meanwhile), and
    requests that were superseded while it waited are never sent. A process
    that died is started again for the next request. The process ends when
    this one does (its stdin closes), or on `close`.

    Signals:
        completed(CompletionRequest request, list candidates): a request was answered with a
            `list[Candidate]` (emitted from the worker thread; receivers in the GUI thread get it queued).
        checked(CheckRequest request, object diagnostic): a check was answered: (line, column, message),
            None when the snippet compiles, or False when the process could not check it (a union Qt cannot
            name, so `object`).
    """

    completed = Signal(CompletionRequest, list)
    checked = Signal(CheckRequest, object)

    _shared: CompletionWorker | None = None

    def __init__(self) -> None:
        super().__init__()
        self._pending: dict[tuple[str, int], CompletionRequest | CheckRequest] = {}
        self._wake = threading.Condition()
        self._closed = False
        self._warm = False
        self._process: subprocess.Popen[str] | None = None
        self._thread = threading.Thread(target=self._run, name="code-completion", daemon=True)
        self._thread.start()

    @classmethod
    def shared(cls) -> CompletionWorker:
        """The process-wide worker (started on first use; closed at interpreter exit)."""
        if cls._shared is None:
            cls._shared = cls()
            atexit.register(cls._shared.close)
        return cls._shared

    def submit(self, request: CompletionRequest | CheckRequest) -> None:
        """Queue `request`, replacing a not yet sent one of the same kind from the same owner."""
        with self._wake:
            self._pending[(type(request).__name__, request.owner)] = request
            self._wake.notify()

    def warm_up(self) -> None:
        """Start the completion process now (it loads jedi for seconds), so the first request is quick."""
        with self._wake:
            self._warm = True
            self._wake.notify()

    @property
    def ready(self) -> bool:
        """True while a completion process is running and has loaded jedi."""
        process = self._process
        return process is not None and process.poll() is None

    def close(self) -> None:
        """Stop the thread and the completion process (idempotent)."""
        with self._wake:
            self._closed = True
            self._wake.notify()
        process = self._process
        if process is not None:
            if process.stdin is not None and process.poll() is None:
                process.stdin.close()  # end of input ends the process
            try:
                process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            _release(process)

    def _start_process(self) -> subprocess.Popen[str]:
        env = dict(os.environ)
        # The same modules as this process, wherever they were imported from.
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        process = subprocess.Popen(
            [sys.executable, "-m", "studio.code.completion_process"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8", env=env, bufsize=1,
        )  # fmt: skip
        assert process.stdout is not None
        ready = process.stdout.readline()
        if not ready:
            code = process.wait()
            _release(process)
            raise OSError(f"the completion process exited ({code}) before it was ready")
        logger.debug("completion process %d ready", process.pid)
        return process

    def _ensure_process(self) -> subprocess.Popen[str]:
        if self._process is None or self._process.poll() is not None:
            if self._process is not None:  # a dead one: release its pipes before starting the next
                _release(self._process)
            try:
                self._process = self._start_process()
            except OSError:
                self._process = None
                raise
        return self._process

    def _ask(self, request: CompletionRequest | CheckRequest) -> dict[str, Any]:
        process = self._ensure_process()
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(encode_request(request) + "\n")
        process.stdin.flush()
        answer = process.stdout.readline()
        if not answer:
            raise OSError(f"the completion process exited ({process.wait()})")
        data: dict[str, Any] = json.loads(answer)
        return data

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._pending and not self._closed and not self._warm:
                    self._wake.wait()
                if self._closed:
                    return
                self._warm = False
                request = self._pending.popitem()[1] if self._pending else None
            if request is None:  # only asked to warm up (outside the lock: starting takes seconds)
                try:
                    self._ensure_process()
                except OSError as exc:
                    logger.warning("completion unavailable: %s", exc)
                continue
            try:
                data = self._ask(request)
            except (OSError, ValueError) as exc:
                logger.warning("completion process unavailable: %s", exc)
                data = {}
            if isinstance(request, CheckRequest):
                found = data.get("diagnostic", False) if data.get("id") == request.request_id else False
                self.checked.emit(request, tuple(found) if isinstance(found, list) else found)
            else:
                names = data.get("candidates", [])
                self.completed.emit(request, [Candidate(name=str(n), kind=str(k), suffix=str(x)) for n, k, x in names])


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
