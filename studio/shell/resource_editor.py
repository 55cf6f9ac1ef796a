"""The editor page of one resource: code in the centre, preview and output beside it, the builder on demand."""

from __future__ import annotations

import logging
import time
from dataclasses import replace

from PySide6.QtCore import QByteArray, QEvent, Qt, Signal, Slot
from PySide6.QtGui import QIcon, QResizeEvent, QTextDocumentFragment
from PySide6.QtWidgets import (
    QLabel,
    QSplitter,
    QStackedWidget,
    QStyle,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from resources_qt.errors import ValidationError
from resources_qt.project import ResourceSpec
from resources_qt.snippets.kinds import COMPLETION, INSTANCES, KINDS, PRELUDE, READER
from resources_qt.templates import compile_template
from studio.builder.resource_form import ResourceForm
from studio.code.snippet_editor import SnippetEditor
from studio.code.snippet_pane import SnippetPane
from studio.document.document import ProjectDocument
from studio.look.icons import studio_icon
from studio.look.theme import status_colors
from studio.preview.preview import PreviewPanel
from studio.preview.snippet_output import OUTPUT_MAX_LINES, OutputBlock, SnippetOutputView
from studio.shell.builder_dock import BUILDER_WIDTH, MIN_CODE_COLUMNS, BuilderDock

logger = logging.getLogger(__name__)

__all__ = ["INSTANCES_TAB", "MIN_CODE_COLUMNS", "OUTPUT_MAX_LINES", "ResourceEditor", "instances_placeholder"]

READER_TAB, COMPLETIONS_TAB, INSTANCES_TAB, PRELUDE_TAB = (
    KINDS.index(kind) for kind in (READER, COMPLETION, INSTANCES, PRELUDE)
)  # the tabs are added in the registry's order
_COMPLETIONS_TIP = "Completion snippets are for URI templates: a direct resource has no variables to complete"
_INSTANCES_TIP = "Instances are for URI templates: a direct resource is its own one instance"
_INSTANCES_TEMPLATE_TIP = (
    "def instances(): the concrete URIs of this template that resources/list shows. Each item is a dict of\n"
    "the template's variables (optional: name, title, description, mime_type, size, annotations) or a URI."
)


_HEADINGS = (
    "<code>def read(uri, params)</code> returns text, bytes, JSON-able data or <code>ResourceContent</code>",
    "<code>def complete(name, value, context)</code> suggests values for a template variable (optional)",
    "<code>def instances()</code> lists the template's concrete URIs in resources/list (optional)",
    "Code shared by every snippet of the project: imports, helpers, data",
)
"""The snippet tabs' headings (Reader, Completions, Instances, Prelude), also their editors' descriptions."""
_CODE_NAMES = ("Reader snippet", "Completions snippet", "Instances snippet", "Prelude")


def instances_placeholder(variables: list[str]) -> str:
    """The empty Instances tab's hint: a `def instances():` skeleton using the template's own variables.

    Shown as a placeholder, never written into the project: an untouched tab leaves `instances` empty.
    """
    names = variables or ["id"]
    item = ", ".join(f'"{name}": "{name}-1"' for name in names)
    # Short lines: with the builder open the editor keeps about 60 columns (MIN_CODE_COLUMNS).
    return f"def instances():\n    # one dict per instance, or a URI\n    return [{{{item}}}]"


class ResourceEditor(QWidget):
    """Snippet editors (Reader / Completions / Instances / Prelude) in the centre, preview and output beside them.

    Left of the code sits the builder form, a panel shown and hidden with
    `set_builder_visible` (the window binds a key to it). The snippet is
    checked (compile only) shortly after each edit; the source is written to
    the document debounced, merging a burst of typing into one undo step. The
    preview's signals are the shell's to connect (`preview.preview_requested`,
    `preview.completion_requested`, `preview.show_outcome`).

    Signals:
        builder_toggled(bool visible): the builder panel was shown or hidden (by its button or a call).
    """

    builder_toggled = Signal(bool)

    def __init__(self, document: ProjectDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resourceEditor")
        self._document = document
        self._name = ""
        self._focus_mode = False

        self.form = ResourceForm(document, self)

        # -- code ------------------------------------------------------------------------
        # Short headings: every line of text above the editor is a line of code fewer.
        self.reader_pane = SnippetPane(
            heading=_HEADINGS[0],
            placeholder="def read(uri, params):\n    return f'Hello from {uri}'",
            function=READER.function,
            required=READER.required,
            object_name="snippetEditor",
            parent=self,
        )
        self.complete_pane = SnippetPane(
            heading=_HEADINGS[1],
            placeholder="def complete(name, value, context):\n    return [v for v in VALUES if v.startswith(value)]",
            function=COMPLETION.function,
            required=COMPLETION.required,
            object_name="completeEditor",
            parent=self,
        )
        self.instances_pane = SnippetPane(
            heading=_HEADINGS[2],
            placeholder=instances_placeholder([]),
            function=INSTANCES.function,
            required=INSTANCES.required,
            object_name="instancesEditor",
            parent=self,
        )
        self.prelude_pane = SnippetPane(
            heading=_HEADINGS[3],
            placeholder="import json\n\nDATA = {...}",
            function=PRELUDE.function,
            required=PRELUDE.required,
            object_name="preludeEditor",
            parent=self,
        )
        panes = (self.reader_pane, self.complete_pane, self.instances_pane, self.prelude_pane)
        for pane, name, heading in zip(panes, _CODE_NAMES, _HEADINGS, strict=True):
            pane.editor.setAccessibleName(name)
            pane.editor.setAccessibleDescription(QTextDocumentFragment.fromHtml(heading).toPlainText())
        self.snippet_editor = self.reader_pane.editor
        self.snippet_status = self.reader_pane.status
        self.complete_editor = self.complete_pane.editor
        self.instances_editor = self.instances_pane.editor
        self.prelude_editor = self.prelude_pane.editor
        self.snippet_tabs = QTabWidget(self)
        self.snippet_tabs.setObjectName("snippetTabs")
        self.snippet_tabs.setDocumentMode(True)
        # Every tab shows its whole name and none scrolls out of sight: their width is the code's minimum.
        self.snippet_tabs.setUsesScrollButtons(False)
        self.snippet_tabs.setElideMode(Qt.TextElideMode.ElideNone)
        by_kind = {READER: self.reader_pane, COMPLETION: self.complete_pane, INSTANCES: self.instances_pane,
                 PRELUDE: self.prelude_pane}  # fmt: skip
        for kind in KINDS:
            self.snippet_tabs.addTab(by_kind[kind], kind.label)
        self.builder_button = QToolButton(self)
        self.builder_button.setObjectName("builderToggle")
        self.builder_button.setText("Builder")
        self.builder_button.setCheckable(True)
        self.builder_button.setAutoRaise(True)
        self.builder_button.setToolTip("Show or hide the builder form: name, address, MIME type, samples… (Ctrl+B)")
        self.builder_button.toggled.connect(self.set_builder_visible)
        self.snippet_tabs.setCornerWidget(self.builder_button, Qt.Corner.TopLeftCorner)

        # -- preview and output -------------------------------------------------------------
        self.preview = PreviewPanel(self)
        self.output = SnippetOutputView(self)
        self.output_view = self.output.text_view
        self.side_splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.side_splitter.setObjectName("sideSplitter")
        self.side_splitter.setChildrenCollapsible(False)
        self.side_splitter.addWidget(self.preview)
        self.side_splitter.addWidget(self.output)
        self.side_splitter.setStretchFactor(0, 4)
        self.side_splitter.setStretchFactor(1, 1)
        self.side_splitter.setSizes([560, 110])
        self.side_tabs = QTabWidget(self)
        self.side_tabs.setObjectName("sideTabs")
        self.side_tabs.setDocumentMode(True)
        self.side_tabs.setTabBarAutoHide(True)  # a tab bar only while the builder shares the column
        self.side_tabs.addTab(self.side_splitter, "Preview")

        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("editorSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.builder = BuilderDock(self.form, splitter=self.splitter, side_tabs=self.side_tabs,
                                   preview_page=self.side_splitter, code_min_width=self.code_min_width,
                                   focus_code=self.focus_code, parent=self)  # fmt: skip
        self.builder_panel, self.form_scroll = self.builder.panel, self.builder.form_scroll
        self.builder.shown_changed.connect(self._on_builder_shown_changed)
        self.splitter.addWidget(self.builder.slot)
        self.splitter.addWidget(self.snippet_tabs)
        self.splitter.addWidget(self.side_tabs)
        # Extra room goes to the code first, then the preview; the builder keeps its width.
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setStretchFactor(2, 2)
        self.splitter.setSizes([BUILDER_WIDTH, 560, 440])

        self.empty_label = QLabel("Select a resource in the catalogue, or add one.", self)
        self.empty_label.setObjectName("emptyEditorHint")
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._stack = QStackedWidget(self)
        self._stack.addWidget(self.empty_label)
        self._stack.addWidget(self.splitter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._stack)
        self._apply_colors()

        self.snippet_editor.source_edited.connect(self._on_reader_edited)
        self.complete_editor.source_edited.connect(self._on_complete_edited)
        self.instances_editor.source_edited.connect(self._on_instances_edited)
        self.prelude_editor.source_edited.connect(self._on_prelude_edited)
        document.prelude_changed.connect(self._on_prelude_changed)
        document.resource_changed.connect(self._on_resource_changed)
        document.resource_removed.connect(self._on_resource_removed)
        document.project_reset.connect(self._on_project_reset)
        document.instances_failure_changed.connect(self._on_instances_failure_changed)
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
        self.instances_pane.load(spec.instances if spec else "", active=spec is not None, key=self._name)
        if self.prelude_editor.toPlainText() != self._document.project.prelude:
            self.prelude_pane.load(self._document.project.prelude)
        self.preview.set_resource(self._document.spec(self._name) if spec else None)
        self._follow_kind(spec)
        self.output.clear()
        self._stack.setCurrentWidget(self.splitter if spec is not None else self.empty_label)

    def flush(self) -> None:
        """Write pending edits (form and snippets) to the document now."""
        self.form.commit()
        for editor in self._editors():
            editor.flush()

    @Slot(str)
    def append_output(self, text: str) -> None:
        """Append captured snippet output that came without a read attached."""
        self.output.append_text(text)

    def add_output_block(self, block: OutputBlock) -> None:
        """Show what one read of the shown resource printed, as one block."""
        self.output.add_block(block)

    @property
    def builder_visible(self) -> bool:
        """The builder form is on screen: beside the code, or its tab in front over the preview."""
        return self.builder.shown

    @Slot(bool)
    def set_builder_visible(self, visible: bool) -> None:
        """Show or hide the builder form (see `BuilderDock`); showing it puts the focus in its name field."""
        if visible and self._focus_mode:
            self.set_focus_mode(False)
        self.builder.set_shown(visible)
        self._sync_builder_button(self.builder.shown)  # also when nothing changed: a click is undone

    def code_min_width(self) -> int:
        """The code column's width for `MIN_CODE_COLUMNS` columns of the editor's font, with gutter and frames."""
        editor = self.snippet_editor
        chrome = editor.gutter_width() + 2 * editor.frameWidth() + editor.verticalScrollBar().sizeHint().width()
        margins = self.reader_pane.contentsMargins()
        columns = MIN_CODE_COLUMNS * editor.fontMetrics().averageCharWidth()
        return max(columns + chrome + margins.left() + margins.right() + 4,
                   self.snippet_tabs.minimumSizeHint().width())  # fmt: skip

    @property
    def focus_mode(self) -> bool:
        return self._focus_mode

    def set_focus_mode(self, on: bool) -> None:
        """Distraction-free: only the code editors (the builder, preview and output step aside)."""
        self._focus_mode = on
        self.side_tabs.setVisible(not on)
        self.builder.set_focus_mode(on)

    def show_preview(self) -> None:
        """Make sure the preview is on screen: it steps aside in distraction-free mode, and for the builder's tab."""
        if self._focus_mode:
            self.side_tabs.show()
        self.builder.show_preview()

    def set_word_wrap(self, on: bool) -> None:
        """Wrap long lines in every snippet editor (on) or scroll them horizontally (off)."""
        for editor in self._editors():
            editor.set_word_wrap(on)

    def splitter_states(self) -> dict[str, QByteArray]:
        """The sizes of the editor's splitters, to remember per user."""
        return {"editor": self.splitter.saveState(), "side": self.side_splitter.saveState()}

    def restore_splitter_states(self, states: dict[str, QByteArray]) -> None:
        for name, splitter in (("editor", self.splitter), ("side", self.side_splitter)):
            state = states.get(name)
            if state is not None:
                splitter.restoreState(state)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.builder.relayout()

    def reset_splitters(self) -> None:
        self.splitter.setSizes([BUILDER_WIDTH, 560, 440])
        self.side_splitter.setSizes([560, 110])

    def current_code_editor(self) -> SnippetEditor:
        """The snippet editor of the current tab."""
        pane = self.snippet_tabs.currentWidget()
        return pane.editor if isinstance(pane, SnippetPane) else self.snippet_editor

    def focus_code(self) -> None:
        """Put the keyboard focus in the snippet editor of the current tab."""
        self.current_code_editor().setFocus(Qt.FocusReason.ShortcutFocusReason)

    def focus_builder(self) -> None:
        """Put the keyboard focus in the builder's name field (if the builder is shown), its text selected."""
        self.builder.focus()

    def visible_reader_lines(self) -> float:
        """How many lines of the reader editor fit in its viewport (layout tests and the bench use it)."""
        editor = self.snippet_editor
        return editor.viewport().height() / max(1, editor.fontMetrics().lineSpacing())

    # -- internals -------------------------------------------------------------

    def _editors(self) -> tuple[SnippetEditor, ...]:
        return (self.snippet_editor, self.complete_editor, self.instances_editor, self.prelude_editor)

    def _follow_kind(self, spec: ResourceSpec | None) -> None:
        """Completions and instances are for templates: a direct resource never keeps those tabs selected."""
        template = bool(spec is not None and spec.uri_template)
        # Instances typed before the address became a direct URI stay reachable, to be cut or moved:
        # the form names the problem ("instances need a uri_template") until then.
        instances = template or bool(spec is not None and spec.instances.strip())
        tabs = self.snippet_tabs
        # Back to the reader first: disabling the current tab would move on to the next one instead.
        if (not template and tabs.currentIndex() == COMPLETIONS_TAB) or (
            not instances and tabs.currentIndex() == INSTANCES_TAB
        ):
            tabs.setCurrentIndex(READER_TAB)
        tabs.setTabEnabled(COMPLETIONS_TAB, template)
        tabs.setTabToolTip(COMPLETIONS_TAB, "" if template else _COMPLETIONS_TIP)
        tabs.setTabEnabled(INSTANCES_TAB, instances)
        tabs.setTabToolTip(INSTANCES_TAB, _INSTANCES_TEMPLATE_TIP if template else _INSTANCES_TIP)
        self._update_completion_context(spec)
        self._show_instances_failure()

    def _update_completion_context(self, spec: ResourceSpec | None) -> None:
        variables: list[str] = []
        if spec is not None and spec.uri_template:
            try:
                variables = list(compile_template(spec.uri_template).variable_names)
            except ValidationError:
                variables = []  # a half-typed template: nothing to offer yet
        prelude = self._document.project.prelude
        self.reader_pane.set_completion_context(prelude=prelude, variables=variables)
        self.complete_pane.set_completion_context(prelude=prelude, variables=variables)
        self.instances_pane.set_completion_context(prelude=prelude, variables=[])  # instances() takes no params
        self.prelude_pane.set_completion_context(prelude="", variables=[])  # the prelude is its own context
        placeholder = instances_placeholder(variables)
        if self.instances_editor.placeholderText() != placeholder:
            self.instances_editor.setPlaceholderText(placeholder)

    def _show_instances_failure(self) -> None:
        """The server's last listing of the shown template: its error above the code, a mark on the tab."""
        failure = self._document.instances_failure(self._name) if self._name else None
        text = ""
        if failure is not None:
            since = time.strftime("%H:%M:%S", time.localtime(failure.time))
            text = f"The last listing failed (since {since}): {failure.message}"
        self.instances_pane.set_run_error(text)
        icon = studio_icon("error", QStyle.StandardPixmap.SP_MessageBoxCritical) if failure is not None else QIcon()
        self.snippet_tabs.setTabIcon(INSTANCES_TAB, icon)

    def _apply_colors(self) -> None:
        css = f"QLabel#emptyEditorHint {{ color: {status_colors(self.palette()).muted_text.name()}; }}"
        if self.empty_label.styleSheet() != css:
            self.empty_label.setStyleSheet(css)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._apply_colors()

    # -- slots ---------------------------------------------------------------

    def _update_spec(
        self, *, reader: str | None = None, complete: str | None = None, instances: str | None = None
    ) -> None:
        spec = self._document.spec(self._name) if self._name else None
        if spec is None:
            return
        changed = replace(spec, reader=spec.reader if reader is None else reader,
                          complete=spec.complete if complete is None else complete,
                          instances=spec.instances if instances is None else instances)  # fmt: skip
        if changed != spec:
            self._document.update_resource(self._name, changed)

    def _sync_builder_button(self, shown: bool) -> None:
        self.builder_button.blockSignals(True)
        self.builder_button.setChecked(shown)
        self.builder_button.blockSignals(False)
        # The open builder has its own close button (and Ctrl+B): the toggle's room goes to the four tabs.
        self.builder_button.setVisible(not shown)

    @Slot(bool)
    def _on_builder_shown_changed(self, shown: bool) -> None:
        self._sync_builder_button(shown)
        self.builder_toggled.emit(shown)

    @Slot(str)
    def _on_reader_edited(self, source: str) -> None:
        self._update_spec(reader=source)

    @Slot(str)
    def _on_complete_edited(self, source: str) -> None:
        self._update_spec(complete=source)

    @Slot(str)
    def _on_instances_edited(self, source: str) -> None:
        self._update_spec(instances=source)

    @Slot(str)
    def _on_instances_failure_changed(self, name: str) -> None:
        if name == self._name:
            self._show_instances_failure()

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
        self._update_completion_context(self._document.peek(self._name) if self._name else None)

    @Slot(str, str)
    def _on_resource_changed(self, old_name: str, new_name: str) -> None:
        if old_name != self._name:
            return
        self._name = new_name
        spec = self._document.peek(new_name)
        if spec is None:
            return
        # Undo/redo of a snippet edit: show the document's source; a form edit leaves the text as it is.
        for pane, source in (
            (self.reader_pane, spec.reader), (self.complete_pane, spec.complete),
            (self.instances_pane, spec.instances),
        ):  # fmt: skip
            if source != pane.editor.toPlainText() and not pane.editor.has_pending_edit:
                pane.editor.set_source(source)
                pane.check()
        self.preview.set_resource(self._document.spec(new_name))
        self._follow_kind(spec)

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
