"""The editor page of the selected resource: builder form, reader snippet with its output, and preview."""

from __future__ import annotations

import logging
from dataclasses import replace

from PySide6.QtCore import Qt, Slot
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

from studio.document import ProjectDocument
from studio.widgets.preview import PreviewPanel
from studio.widgets.resource_form import ResourceForm
from studio.widgets.snippet_pane import SnippetPane

logger = logging.getLogger(__name__)

__all__ = ["ResourceEditor"]

OUTPUT_MAX_LINES = 2000


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
        # Always there, so a taller form (a template's completions, more icons) does not narrow the fields.
        form_scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.form_scroll = form_scroll
        form_scroll.setMinimumWidth(300)

        self.reader_pane = SnippetPane(
            heading="<b>Reader</b> — <code>def read(uri, params)</code> returns text, bytes, JSON-able data "
            "or <code>ResourceContent</code>",
            placeholder="def read(uri, params):\n    return f'Hello from {uri}'",
            function="read",
            required=True,
            object_name="snippetEditor",
            parent=self,
        )
        self.complete_pane = SnippetPane(
            heading="<b>Completions</b> (optional) — <code>def complete(name, value, context)</code> returns "
            "suggestions for a template variable; the static lists in the form are used without it",
            placeholder="def complete(name, value, context):\n    return [v for v in VALUES if v.startswith(value)]",
            function="complete",
            required=False,
            object_name="completeEditor",
            parent=self,
        )
        self.prelude_pane = SnippetPane(
            heading="<b>Prelude</b> — code shared by every snippet of the project (imports, helpers, data)",
            placeholder="import json\n\nDATA = {...}",
            function=None,
            required=False,
            object_name="preludeEditor",
            parent=self,
        )
        self.snippet_editor = self.reader_pane.editor
        self.snippet_status = self.reader_pane.status
        self.complete_editor = self.complete_pane.editor
        self.prelude_editor = self.prelude_pane.editor
        self.snippet_tabs = QTabWidget(self)
        self.snippet_tabs.setObjectName("snippetTabs")
        self.snippet_tabs.setDocumentMode(True)
        self.snippet_tabs.addTab(self.reader_pane, "Reader")
        self.snippet_tabs.addTab(self.complete_pane, "Completions")
        self.snippet_tabs.addTab(self.prelude_pane, "Prelude")
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
        right.addWidget(self.snippet_tabs)
        right.addWidget(self.bottom_tabs)
        # The preview gets the larger share: read results need the height more than a short snippet.
        right.setStretchFactor(0, 2)
        right.setStretchFactor(1, 3)
        right.setSizes([400, 600])
        self.vertical_splitter = right

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

        self.snippet_editor.source_edited.connect(self._on_reader_edited)
        self.complete_editor.source_edited.connect(self._on_complete_edited)
        self.prelude_editor.source_edited.connect(self._on_prelude_edited)
        document.prelude_changed.connect(self._on_prelude_changed)
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
        self.reader_pane.load(spec.reader if spec else "", active=spec is not None, key=self._name)
        self.complete_pane.load(spec.complete if spec else "", active=spec is not None, key=self._name)
        if self.prelude_editor.toPlainText() != self._document.project.prelude:
            self.prelude_pane.load(self._document.project.prelude)
        self.preview.set_resource(self._document.spec(self._name) if spec else None)
        self.output_view.clear()
        self._stack.setCurrentWidget(self.splitter if spec is not None else self.empty_label)

    def flush(self) -> None:
        """Write pending edits (form and snippets) to the document now."""
        self.form.commit()
        for editor in (self.snippet_editor, self.complete_editor, self.prelude_editor):
            editor.flush()

    @Slot(str)
    def append_output(self, text: str) -> None:
        """Append captured snippet output (bounded to the last OUTPUT_MAX_LINES lines)."""
        self.output_view.appendPlainText(text.rstrip("\n"))

    # -- slots ---------------------------------------------------------------

    def _update_spec(self, **changes: str) -> None:
        spec = self._document.spec(self._name) if self._name else None
        if spec is not None and any(getattr(spec, key) != value for key, value in changes.items()):
            self._document.update_resource(self._name, replace(spec, **changes))

    @Slot(str)
    def _on_reader_edited(self, source: str) -> None:
        self._update_spec(reader=source)

    @Slot(str)
    def _on_complete_edited(self, source: str) -> None:
        self._update_spec(complete=source)

    @Slot(str)
    def _on_prelude_edited(self, source: str) -> None:
        self._document.set_prelude(source)

    @Slot()
    def _on_prelude_changed(self) -> None:
        prelude = self._document.project.prelude
        self.preview.mark_stale()  # every snippet sees the prelude
        if prelude != self.prelude_editor.toPlainText() and not self.prelude_editor.has_pending_edit:
            self.prelude_editor.set_source(prelude)
            self.prelude_pane.check()

    @Slot(str, str)
    def _on_resource_changed(self, old_name: str, new_name: str) -> None:
        if old_name != self._name:
            return
        self._name = new_name
        spec = self._document.peek(new_name)
        if spec is None:
            return
        # Undo/redo of a snippet edit: show the document's source; a form edit leaves the text as it is.
        for pane, source in ((self.reader_pane, spec.reader), (self.complete_pane, spec.complete)):
            if source != pane.editor.toPlainText() and not pane.editor.has_pending_edit:
                pane.editor.set_source(source)
                pane.check()
        self.preview.set_resource(self._document.spec(new_name))

    @Slot(str)
    def _on_resource_removed(self, name: str) -> None:
        if name == self._name:
            self._name = ""
            self.show_resource("")

    @Slot()
    def _on_project_reset(self) -> None:
        self._name = ""
        self.prelude_pane.load(self._document.project.prelude)
        self.show_resource("")
