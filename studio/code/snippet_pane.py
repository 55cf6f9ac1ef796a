"""A snippet editor with a heading, its find / go-to-line bars and a one-line status, checked as you type."""

from __future__ import annotations

import itertools
import logging
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QEvent, Qt, QTimer, Slot
from PySide6.QtGui import QPalette, QTextDocument
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from studio.analysis.completion_source import CheckRequest
from studio.analysis.source_check import check_source
from studio.analysis.source_warnings import SourceWarning, WarningsRequest
from studio.analysis.worker import CompletionWorker
from studio.code.find_bar import FindBar
from studio.code.goto_line import GoToLineBar
from studio.code.snippet_editor import SnippetEditor
from studio.look.editor_theme import ensure_contrast, theme_for_palette
from studio.look.marks import banner_style

logger = logging.getLogger(__name__)

__all__ = ["BACKGROUND_CHECK_LINES", "CHECK_DEBOUNCE_MS", "KEPT_DOCUMENTS", "SnippetPane"]

CHECK_DEBOUNCE_MS = 250
BACKGROUND_CHECK_LINES = 400
"""Snippets longer than this are compile-checked in the completion process after an edit: compiling
2,000 lines takes tens of milliseconds, all of it holding the GIL, so a thread would not help."""
KEPT_DOCUMENTS = 32
"""Resources whose editor document (text, undo history, cursor) is kept while another one is shown."""


_owners = itertools.count(1_000_000)  # check owners; distinct from the editors' completion owners


@dataclass(slots=True)
class _Kept:
    document: QTextDocument
    cursor: int


class SnippetPane(QWidget):
    """Heading, `SnippetEditor` with its find and go-to-line bars, and a status line.

    The source is compile-checked shortly after each edit; when it compiles, the
    analysis process's pyflakes warnings (undefined names, unused imports) are
    underlined when they come, the helpers and the prelude's names (the
    completion context's `prelude`) known. `function` ("read", "complete",
    "instances" or None: a module such as the prelude, whose imports the readers
    use) is the top-level name the snippet must define;
    `required` says whether an empty snippet is an error. Each resource (the
    `key` given to `load`) keeps its own editor document, so undo in the editor
    still works after switching to another resource and back. `set_run_error`
    shows what the server reported when it last ran the snippet. No signals of its own: the editor's
    (`editor.source_edited`) say what was typed.
    """

    def __init__(
        self,
        *,
        heading: str,
        placeholder: str,
        function: str | None,
        required: bool,
        object_name: str,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._function = function
        self._required = required
        self._active = False
        self._key: str | None = None
        self._kept: OrderedDict[str, _Kept] = OrderedDict()
        self._status_error = False
        self.editor = SnippetEditor(self)
        self.editor.setObjectName(object_name)
        self.editor.setPlaceholderText(placeholder)
        self.find_bar = FindBar(self.editor, self)
        self.go_to_line_bar = GoToLineBar(self.editor, self)
        self.status = QLabel(self)
        self.status.setObjectName(object_name.replace("Editor", "") + "Status")
        # One line, always there (empty when all is well): the editor must not jump while the user types
        # into and out of an error. The whole message is in the tooltip.
        self.status.setWordWrap(False)
        self.status.setFixedHeight(self.status.fontMetrics().lineSpacing() + 4)
        self.status.setMinimumWidth(1)
        # What the server reported when it last ran the snippet (an instances listing that failed):
        # shown only then, above the code, so it is seen before the code is read.
        self.run_error = QLabel(self)
        self.run_error.setObjectName(object_name.replace("Editor", "") + "RunError")
        self.run_error.setWordWrap(True)
        self.run_error.setTextFormat(Qt.TextFormat.PlainText)
        self.run_error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.run_error.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.setSpacing(4)
        title = QLabel(heading, self)
        title.setWordWrap(True)
        layout.addWidget(title)
        layout.addWidget(self.run_error)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.find_bar)
        layout.addWidget(self.go_to_line_bar)
        layout.addWidget(self.status)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(CHECK_DEBOUNCE_MS)
        self._timer.timeout.connect(self._on_check_timeout)
        self._owner = next(_owners)
        self._check_ids = itertools.count(1)
        self._check_pending: CheckRequest | None = None
        self._warnings_pending: WarningsRequest | None = None
        self._prelude = ""
        self._worker: CompletionWorker | None = None
        self.editor.textChanged.connect(self._on_text_changed)
        self.editor.find_requested.connect(self._on_find_requested)
        self.editor.go_to_line_requested.connect(self._on_go_to_line_requested)
        self.editor.escape_pressed.connect(self._on_escape_pressed)
        self.find_bar.matches_changed.connect(self.editor.set_find_matches)

    # -- public API ----------------------------------------------------------

    def load(self, source: str, *, active: bool = True, key: str | None = None) -> None:
        """Show `source` (no `source_edited`) and check it.

        `key` names what the source belongs to (the resource's name). Coming
        back to a key whose kept document still holds `source` shows that
        document again, undo history and cursor included; otherwise (a new key,
        or the project changed the text meanwhile) the editor starts a fresh
        history with `source`.
        """
        self._active = active
        if key != self._key or self.editor.toPlainText() != source:
            self._switch(source, key)
        self.editor.setEnabled(active)
        self.check()

    def set_completion_context(self, *, prelude: str, variables: Sequence[str]) -> None:
        """What completion and the warnings see besides the snippet: the project's prelude and the template's
        variables. A new prelude checks the snippet again (a name it defines is no longer undefined)."""
        self.editor.set_completion_context(prelude=prelude, variables=variables)
        if prelude != self._prelude:
            self._prelude = prelude
            if self._active and self.editor.toPlainText().strip():
                self._timer.start()

    def rename_key(self, old: str, new: str) -> None:
        """The resource `old` is now called `new`: its document (shown or kept) goes with it."""
        if self._key == old:
            self._key = new
        kept = self._kept.pop(old, None)
        if kept is not None:
            self._kept[new] = kept

    def kept_keys(self) -> list[str]:
        """Keys whose documents are kept, least recently shown first (the shown one excluded)."""
        return list(self._kept)

    def check(self) -> None:
        """Compile-check now: underline the error's line, or clear the mark."""
        self._timer.stop()
        self._check_pending = None
        source = self.editor.toPlainText()
        if not self._active:
            self._show_warnings([])
            self.editor.clear_diagnostic()
            self._set_status("", error=False)
            return
        if not source.strip():
            self._show_warnings([])
            self.editor.clear_diagnostic()
            needed = self._required and self._function
            self._set_status(f"The resource needs a reader: define <code>{self._function}()</code>." if needed else "",
                             error=bool(needed))  # fmt: skip
            return
        self._show_check(check_source(source, function=self._function))

    def set_run_error(self, text: str) -> None:
        """Show what went wrong when the server last ran the snippet ("" hides it)."""
        self.run_error.setText(text)
        self.run_error.setToolTip(text)
        self.run_error.setVisible(bool(text))

    @property
    def check_pending(self) -> bool:
        """True while a background compile check of the shown text is out."""
        return self._check_pending is not None

    @property
    def warnings_pending(self) -> bool:
        """True while the warnings of the shown text are being found in the analysis process."""
        return self._warnings_pending is not None

    def _show_check(self, found: tuple[int, int, str] | None) -> None:
        if found is None:
            self.editor.clear_diagnostic()
            self._set_status("", error=False)
            self._ask_warnings()
            return
        self._show_warnings([])  # a snippet that does not compile shows its error alone
        line, column, message = found
        self.editor.set_diagnostic(line, column, message)
        self._set_status(f"Line {line}: {message}", error=True)

    # -- internals -----------------------------------------------------------

    def _show_warnings(self, warnings: list[SourceWarning]) -> None:
        self._warnings_pending = None
        self.editor.set_warnings(warnings)

    def _ask_warnings(self) -> None:
        source = self.editor.toPlainText()
        module = self._function is None
        request = WarningsRequest(request_id=next(self._check_ids), owner=self._owner, source=source,
                                  prelude="" if module else self._prelude, module=module)  # fmt: skip
        self._warnings_pending = request
        self._analysis().submit(request)

    def _analysis(self) -> CompletionWorker:
        if self._worker is None:
            self._worker = CompletionWorker.shared()
            self._worker.checked.connect(self._on_checked)
            self._worker.warnings_found.connect(self._on_warnings_found)
        return self._worker

    def _switch(self, source: str, key: str | None) -> None:
        current = self.editor.document()
        if self._key:
            self._kept[self._key] = _Kept(current, self.editor.textCursor().position())
            self._kept.move_to_end(self._key)
        else:
            current.deleteLater()  # a keyless document is never shown again
        kept = self._kept.pop(key, None) if key else None
        if kept is not None and kept.document.toPlainText() == source:
            self.editor.swap_document(kept.document, cursor_position=kept.cursor)
        else:
            if kept is not None:
                kept.document.deleteLater()
            self.editor.swap_document(self.editor.create_document(source))
        self._key = key
        while len(self._kept) > KEPT_DOCUMENTS:
            _old_key, dropped = self._kept.popitem(last=False)
            dropped.document.deleteLater()
        if self.find_bar.isVisible():  # its matches belong to the text that was shown
            self.find_bar.hide()
            self.editor.set_find_matches([])

    def _set_status(self, text: str, *, error: bool) -> None:
        self._status_error = error
        self.status.setText(text)
        self.status.setToolTip(text)
        self._color_status()

    def _color_status(self) -> None:
        palette = self.palette()
        background = palette.color(QPalette.ColorRole.Window)
        text = palette.color(QPalette.ColorRole.WindowText)
        if self._status_error:
            color = ensure_contrast(theme_for_palette(palette).error, (background,), toward=text, ratio=4.5)
        else:
            color = palette.color(QPalette.ColorRole.PlaceholderText)
        status_palette = self.status.palette()
        status_palette.setColor(QPalette.ColorRole.WindowText, color)
        self.status.setPalette(status_palette)
        self.run_error.setStyleSheet(banner_style(palette))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._color_status()

    # -- slots ---------------------------------------------------------------

    @Slot()
    def _on_text_changed(self) -> None:
        self._timer.start()

    @Slot()
    def _on_check_timeout(self) -> None:
        source = self.editor.toPlainText()
        if not self._active or self.editor.blockCount() <= BACKGROUND_CHECK_LINES or not source.strip():
            self.check()
            return
        request = CheckRequest(
            request_id=next(self._check_ids), owner=self._owner, source=source, function=self._function
        )
        self._check_pending = request
        self._analysis().submit(request)

    @Slot(object, object)
    def _on_checked(self, request: CheckRequest, found: object) -> None:
        if request.owner != self._owner or request is not self._check_pending:
            return
        self._check_pending = None
        if request.source != self.editor.toPlainText() or not self._active:
            return  # edited meanwhile: the next check is on its way
        if found is False:  # the process could not check it: do it here after all
            self.check()
            return
        assert found is None or isinstance(found, tuple)
        line, column, message = found if found is not None else (0, 0, "")
        self._show_check((int(line), int(column), str(message)) if found is not None else None)

    @Slot(object, list)
    def _on_warnings_found(self, request: WarningsRequest, warnings: list[SourceWarning]) -> None:
        if request.owner != self._owner or request is not self._warnings_pending:
            return
        self._warnings_pending = None
        if request.source != self.editor.toPlainText() or not self._active or self.editor.diagnostic is not None:
            return  # edited meanwhile (the next check asks again), or an error shows alone
        self.editor.set_warnings(warnings)

    @Slot(bool)
    def _on_find_requested(self, replace: bool) -> None:
        self.go_to_line_bar.hide()
        if replace:
            self.find_bar.open_replace()
        else:
            self.find_bar.open_find()

    @Slot()
    def _on_escape_pressed(self) -> None:
        if self.find_bar.isVisible():
            self.find_bar.close_bar()
        self.go_to_line_bar.hide()

    @Slot()
    def _on_go_to_line_requested(self) -> None:
        if self.find_bar.isVisible():
            self.find_bar.close_bar()
        self.go_to_line_bar.open()
