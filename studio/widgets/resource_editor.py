"""The editor page of the selected resource: builder form, reader snippet with its output, and preview."""

from __future__ import annotations

import logging
from dataclasses import replace

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from studio.document import ProjectDocument, check_source
from studio.widgets.preview import PreviewPanel
from studio.widgets.resource_form import ResourceForm
from studio.widgets.snippet_editor import SnippetEditor

logger = logging.getLogger(__name__)

__all__ = ["ResourceEditor"]

OUTPUT_MAX_LINES = 2000
CHECK_DEBOUNCE_MS = 250


class ResourceEditor(QWidget):
    """Form, snippet editor, captured output and preview of one resource of the document.

    The snippet is checked (compile only) shortly after each edit and its
    error is underlined on its line; the source is written to the document
    debounced, merging a burst of typing into one undo step. The preview's
    signals are the shell's to connect (`preview.preview_requested`,
    `preview.completion_requested`, `preview.show_outcome`).
    """

    def __init__(self, document: ProjectDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resourceEditor")
        self._document = document
        self._name = ""

        self.form = ResourceForm(document, self)
        form_scroll = QScrollArea(self)
        form_scroll.setObjectName("formScroll")
        form_scroll.setWidget(self.form)
        form_scroll.setWidgetResizable(True)
        form_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        form_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        form_scroll.setMinimumWidth(300)

        self.snippet_editor = SnippetEditor(self)
        self.snippet_editor.setPlaceholderText(
            "def read(uri, params):\n    return 'text, bytes, JSON-able data or ResourceContent'"
        )
        self.snippet_status = QLabel(self)
        self.snippet_status.setObjectName("snippetStatus")
        self.snippet_status.setWordWrap(True)
        self.output_view = QPlainTextEdit(self)
        self.output_view.setObjectName("snippetOutput")
        self.output_view.setReadOnly(True)
        self.output_view.setMaximumBlockCount(OUTPUT_MAX_LINES)
        self.output_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.output_view.setPlaceholderText("print() output and logs of the snippet appear here")
        clear_output = QPushButton("Clear", self)
        clear_output.setObjectName("clearOutputButton")
        clear_output.clicked.connect(self.output_view.clear)

        self.preview = PreviewPanel(self)

        snippet_pane = QWidget(self)
        snippet_layout = QVBoxLayout(snippet_pane)
        snippet_layout.setContentsMargins(0, 0, 0, 0)
        snippet_layout.setSpacing(4)
        heading = QLabel("<b>Reader snippet</b> — <code>def read(uri, params)</code>", snippet_pane)
        snippet_layout.addWidget(heading)
        snippet_layout.addWidget(self.snippet_editor, 1)
        snippet_layout.addWidget(self.snippet_status)

        output_pane = QWidget(self)
        output_layout = QVBoxLayout(output_pane)
        output_layout.setContentsMargins(0, 0, 0, 0)
        output_header = QHBoxLayout()
        output_header.addWidget(QLabel("<b>Output</b>", output_pane))
        output_header.addStretch(1)
        output_header.addWidget(clear_output)
        output_layout.addLayout(output_header)
        output_layout.addWidget(self.output_view)

        self.bottom_tabs = QTabWidget(self)
        self.bottom_tabs.setObjectName("editorTabs")
        self.bottom_tabs.addTab(self.preview, "Preview")
        self.bottom_tabs.addTab(output_pane, "Snippet output")

        right = QSplitter(Qt.Orientation.Vertical, self)
        right.setChildrenCollapsible(False)
        right.addWidget(snippet_pane)
        right.addWidget(self.bottom_tabs)
        right.setStretchFactor(0, 1)
        right.setStretchFactor(1, 1)
        right.setSizes([400, 400])

        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(form_scroll)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([380, 620])

        self.empty_label = QLabel("Select a resource in the catalogue, or add one.", self)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setStyleSheet("color: #888;")
        self._stack = QStackedWidget(self)
        self._stack.addWidget(self.empty_label)
        self._stack.addWidget(self.splitter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._stack)

        self._check_timer = QTimer(self)
        self._check_timer.setSingleShot(True)
        self._check_timer.setInterval(CHECK_DEBOUNCE_MS)
        self._check_timer.timeout.connect(self._on_check_timeout)
        self.snippet_editor.textChanged.connect(self._on_snippet_text_changed)
        self.snippet_editor.source_edited.connect(self._on_source_edited)
        document.resource_changed.connect(self._on_resource_changed)
        document.resource_removed.connect(self._on_resource_removed)
        document.project_reset.connect(self._on_project_reset)
        self.show_resource("")

    # -- public API ----------------------------------------------------------

    @property
    def resource_name(self) -> str:
        return self._name

    def show_resource(self, name: str) -> None:
        """Show the named resource ("" or an unknown name shows a hint instead)."""
        self.flush()
        spec = self._document.peek(name) if name else None
        self._name = name if spec is not None else ""
        self.form.set_resource(self._name)
        self.snippet_editor.set_source(spec.reader if spec else "")
        self.snippet_editor.document().clearUndoRedoStacks()
        self.snippet_editor.setEnabled(spec is not None)
        self.preview.set_resource(self._document.spec(self._name) if spec else None)
        self.output_view.clear()
        self._check_snippet()
        self._stack.setCurrentWidget(self.splitter if spec is not None else self.empty_label)

    def flush(self) -> None:
        """Write pending edits (form and snippet) to the document now."""
        self.form.commit()
        self.snippet_editor.flush()

    @Slot(str)
    def append_output(self, text: str) -> None:
        """Append captured snippet output (bounded to the last OUTPUT_MAX_LINES lines)."""
        self.output_view.appendPlainText(text.rstrip("\n"))

    # -- snippet -------------------------------------------------------------

    def _check_snippet(self) -> None:
        self._check_timer.stop()
        source = self.snippet_editor.toPlainText()
        found = check_source(source, function="read") if self._name else None
        if found is None:
            self.snippet_editor.clear_diagnostic()
            if self._name and not source.strip():
                self._set_status(
                    "The resource needs a reader: define <code>read(uri, params)</code>.", error=True
                )
            else:
                self._set_status("", error=False)
            return
        line, column, message = found
        self.snippet_editor.set_diagnostic(line, column, message)
        self._set_status(f"Line {line}: {message}", error=True)

    def _set_status(self, text: str, *, error: bool) -> None:
        self.snippet_status.setText(text)
        self.snippet_status.setVisible(bool(text))
        self.snippet_status.setStyleSheet("color: #b71c1c;" if error else "color: #555;")

    # -- slots ---------------------------------------------------------------

    @Slot()
    def _on_snippet_text_changed(self) -> None:
        self._check_timer.start()

    @Slot()
    def _on_check_timeout(self) -> None:
        self._check_snippet()

    @Slot(str)
    def _on_source_edited(self, source: str) -> None:
        spec = self._document.spec(self._name) if self._name else None
        if spec is not None and spec.reader != source:
            self._document.update_resource(self._name, replace(spec, reader=source))

    @Slot(str, str)
    def _on_resource_changed(self, old_name: str, new_name: str) -> None:
        if old_name != self._name:
            return
        self._name = new_name
        spec = self._document.peek(new_name)
        if spec is None:
            return
        # Undo/redo of a snippet edit: show the document's source; a form edit leaves the text as it is.
        if spec.reader != self.snippet_editor.toPlainText() and not self.snippet_editor.has_pending_edit:
            self.snippet_editor.set_source(spec.reader)
            self._check_snippet()
        self.preview.set_resource(self._document.spec(new_name))

    @Slot(str)
    def _on_resource_removed(self, name: str) -> None:
        if name == self._name:
            self._name = ""
            self.show_resource("")

    @Slot()
    def _on_project_reset(self) -> None:
        self._name = ""
        self.show_resource("")
