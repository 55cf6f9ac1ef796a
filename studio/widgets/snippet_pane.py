"""A snippet editor with a heading and a one-line status; the source is compile-checked after each edit."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QTimer, Slot
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from studio.document import check_source
from studio.widgets.snippet_editor import SnippetEditor

__all__ = ["CHECK_DEBOUNCE_MS", "SnippetPane"]

CHECK_DEBOUNCE_MS = 250


class SnippetPane(QWidget):
    """Heading, `SnippetEditor` and a status line; the source is compile-checked shortly after each edit.

    `function` ("read", "complete" or None) is the top-level name the snippet
    must define; `required` says whether an empty snippet is an error.
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
        self.editor = SnippetEditor(self)
        self.editor.setObjectName(object_name)
        self.editor.setPlaceholderText(placeholder)
        self.status = QLabel(self)
        self.status.setObjectName(object_name.replace("Editor", "") + "Status")
        # One line, always there (empty when all is well): the editor must not jump while the user types
        # into and out of an error. The whole message is in the tooltip.
        self.status.setWordWrap(False)
        self.status.setFixedHeight(self.status.fontMetrics().lineSpacing() + 4)
        self.status.setMinimumWidth(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.setSpacing(4)
        title = QLabel(heading, self)
        title.setWordWrap(True)
        layout.addWidget(title)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.status)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(CHECK_DEBOUNCE_MS)
        self._timer.timeout.connect(self.check)
        self.editor.textChanged.connect(self._on_text_changed)

    def load(self, source: str, *, active: bool = True, key: str | None = None) -> None:
        """Show `source` (no `source_edited`), forget the editor's own undo history, and check it.

        `key` names what the source belongs to (the resource's name), so the
        pane can tell switching to another resource from reloading this one.
        """
        self._active = active
        self.editor.set_source(source)
        self.editor.document().clearUndoRedoStacks()
        self.editor.setEnabled(active)
        self.check()

    def set_completion_context(self, *, prelude: str, variables: Sequence[str]) -> None:
        """What completion sees besides the snippet: the project's prelude and the template's variables."""
        self.editor.set_completion_context(prelude=prelude, variables=variables)

    def check(self) -> None:
        """Compile-check now: underline the error's line, or clear the mark."""
        self._timer.stop()
        source = self.editor.toPlainText()
        if not self._active:
            self.editor.clear_diagnostic()
            self._set_status("", error=False)
            return
        if not source.strip():
            self.editor.clear_diagnostic()
            needed = self._required and self._function
            self._set_status(f"The resource needs a reader: define <code>{self._function}()</code>." if needed else "",
                             error=bool(needed))  # fmt: skip
            return
        found = check_source(source, function=self._function)
        if found is None:
            self.editor.clear_diagnostic()
            self._set_status("", error=False)
            return
        line, column, message = found
        self.editor.set_diagnostic(line, column, message)
        self._set_status(f"Line {line}: {message}", error=True)

    def _set_status(self, text: str, *, error: bool) -> None:
        self.status.setText(text)
        self.status.setToolTip(text)
        self.status.setStyleSheet("color: #b71c1c;" if error else "color: #555;")

    @Slot()
    def _on_text_changed(self) -> None:
        self._timer.start()
