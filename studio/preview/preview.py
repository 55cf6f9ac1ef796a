"""The preview panel: choose a URI (samples, or one field per template variable), read it, show the outcome."""

from __future__ import annotations

import html
import json
import logging
import reprlib
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QStringListModel, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QStackedWidget,
    QStyle,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from resources_qt.errors import ValidationError
from resources_qt.project import ResourceSpec
from resources_qt.templates import CompiledTemplate, compile_template
from studio.look.icons import studio_icon
from studio.look.theme import StatusColors, status_colors
from studio.preview.read_as import ReadAsBar
from studio.preview.variable_field import add_variable_field

if TYPE_CHECKING:
    from resources_qt.qt import PreviewOutcome
    from studio.preview.content_view import ContentView
    from studio.preview.renderers import RendererRegistry

logger = logging.getLogger(__name__)

__all__ = ["ERROR_NAMES", "PreviewPanel"]

SPARE_VIEWS = 4
"""Content views kept out of the tabs for the next read; a read with more contents makes the rest anew."""

_SHORT_REPR = reprlib.Repr()  # bounded in depth and breadth, so any data has a short, finite repr
_SHORT_REPR.maxlevel, _SHORT_REPR.maxlist, _SHORT_REPR.maxdict, _SHORT_REPR.maxstring = 20, 100, 100, 1000
_ERROR_DATA_LIMIT = 64 * 1024
"""Characters of an error's data shown: it is laid out as HTML on the GUI thread."""

ERROR_NAMES = {
    -32700: "Parse error",
    -32600: "Invalid request",
    -32601: "Method not found",
    -32602: "Invalid params",
    -32603: "Internal error",
    -32002: "Resource not found",
    -32000: "Reader failed",
}


class PreviewPanel(QWidget):
    """Reads a URI through the server (via the shell) and shows what came back.

    The panel knows nothing of the server: it asks with `preview_requested`
    and is answered with `show_outcome(outcome)`, where `outcome` has the
    fields of the facade's `PreviewOutcome`.

    Signals:
        preview_requested(str uri): the user asked to read `uri`.
        completion_requested(str resource_name, str variable, str value, dict context): the user typed
            in a variable field of a resource with a completion snippet; answer with `set_completions`.
        add_test_requested(object outcome): the user asked to keep the shown read (a `PreviewOutcome`)
            as a resource test (`addTestButton`).
    """

    preview_requested = Signal(str)
    completion_requested = Signal(str, str, str, dict)
    add_test_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None, *, registry: RendererRegistry | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("previewPanel")
        self._registry = registry  # None: the content views use the default renderers
        self._spec: ResourceSpec | None = None
        self._compiled: CompiledTemplate | None = None
        self._variable_edits: dict[str, QLineEdit] = {}
        self._completion_models: dict[str, QStringListModel] = {}
        self._picked: dict[str, str] = {}  # variable -> the value last picked from its popup
        # What the shown result was read with: (uri, the spec's reading fields); None when nothing is shown.
        self._shown_from: tuple[str, tuple[str, ...]] | None = None
        self._prelude_changed = False
        self._syncing = False
        # The user typed a URI of their own (or composed one from the variables): keep it across edits.
        self._own_uri = False

        self.uri_box = QComboBox(self)
        self.uri_box.setObjectName("previewUri")
        self.uri_box.setAccessibleName("URI to read")
        self.uri_box.setEditable(True)
        self.uri_box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.uri_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.uri_box.setMinimumContentsLength(20)
        self._uri_line = QLineEdit(self.uri_box)  # our own, so it is never None to the type checker
        self.uri_box.setLineEdit(self._uri_line)
        self._uri_line.setPlaceholderText("URI to read, e.g. a sample")
        self.uri_box.setToolTip("The URI to read; the list holds the resource's samples")
        self.read_button = QPushButton("Read", self)
        self.read_button.setObjectName("previewButton")
        self.read_button.setIcon(studio_icon("preview", QStyle.StandardPixmap.SP_MediaPlay))
        self.read_button.setToolTip("Read the URI through the server, as a client would (Ctrl+Return)")
        self.read_button.setShortcut("Ctrl+Return")

        self.variables = QWidget(self)
        self.variables.setObjectName("previewVariables")
        self._variables_layout = QGridLayout(self.variables)
        self._variables_layout.setContentsMargins(0, 0, 0, 0)
        self._variables_layout.setHorizontalSpacing(6)
        self.variables.hide()

        self.output = QWidget(self)
        self.output.setObjectName("previewOutput")
        self.summary_label = QLabel(self.output)
        self.summary_label.setObjectName("previewSummary")
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextFormat(Qt.TextFormat.RichText)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.add_test_button = QPushButton("Add as test", self.output)
        self.add_test_button.setObjectName("addTestButton")
        self.add_test_button.setIcon(studio_icon("tests", QStyle.StandardPixmap.SP_DialogApplyButton))
        self.add_test_button.setToolTip(
            "Keep this read as a resource test: the URI, the resource it matched and its content (as a snapshot)\n"
            "or its error code; it runs on the Tests page (Ctrl+5)"
        )
        self.add_test_button.setEnabled(False)
        self._shown_outcome: PreviewOutcome | None = None
        self.stale_label = QLabel("Stale — the URI or the snippet changed since this read; press Read", self.output)
        self.stale_label.setObjectName("previewStale")
        self.stale_label.hide()
        self.pages = QStackedWidget(self.output)
        self.placeholder = QLabel("Pick a sample or type a URI, then press Read.", self.output)
        self.placeholder.setObjectName("previewPlaceholder")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.content_tabs = QTabWidget(self.output)
        self.content_tabs.setObjectName("previewContents")
        self.content_tabs.setTabBarAutoHide(True)
        self.content_tabs.setDocumentMode(True)
        # A browser, not a label: long messages and error data scroll instead of being cut off.
        self.error_view = QTextBrowser(self.output)
        self.error_view.setObjectName("previewError")
        self.error_view.setOpenLinks(False)
        self._last_error: PreviewOutcome | None = None
        self._stale = False
        self._spare_views: list[ContentView] = []  # views out of the tabs, kept for the next read
        self._warmed = False
        for page in (self.placeholder, self.content_tabs, self.error_view):
            self.pages.addWidget(page)
        output_layout = QVBoxLayout(self.output)
        output_layout.setContentsMargins(0, 0, 0, 0)
        output_layout.setSpacing(4)
        summary_row = QHBoxLayout()
        summary_row.setContentsMargins(0, 0, 0, 0)
        summary_row.addWidget(self.summary_label, 1)
        summary_row.addWidget(self.add_test_button, 0, Qt.AlignmentFlag.AlignTop)
        output_layout.addLayout(summary_row)
        output_layout.addWidget(self.stale_label)
        output_layout.addWidget(self.pages, 1)

        uri_row = QHBoxLayout()
        uri_row.setContentsMargins(0, 0, 0, 0)
        uri_row.addWidget(QLabel("URI", self))
        uri_row.addWidget(self.uri_box, 1)
        uri_row.addWidget(self.read_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addLayout(uri_row)
        # "Read as" a scope set (studio/preview/read_as.py); the shell attaches the facade to it.
        self.read_as = ReadAsBar(self)
        layout.addWidget(self.read_as)
        layout.addWidget(self.variables)
        layout.addWidget(self.output, 1)

        self.read_button.clicked.connect(self._on_read_clicked)
        self.add_test_button.clicked.connect(self._on_add_test_clicked)
        self._uri_line.returnPressed.connect(self._on_read_clicked)
        self.uri_box.editTextChanged.connect(self._on_uri_text_changed)
        self._uri_line.textEdited.connect(self._on_uri_typed)
        self.uri_box.activated.connect(self._on_sample_picked)
        self._apply_colors()
        self.clear_output()

    # -- public API ----------------------------------------------------------

    @property
    def uri(self) -> str:
        return self.uri_box.currentText().strip()

    def read(self) -> None:
        """Read the URI now, as the Read button does."""
        self._on_read_clicked()

    def set_uri(self, uri: str) -> None:
        """Read `uri` from now on, as if the user had typed it (it no longer follows the resource)."""
        self.uri_box.setEditText(uri)
        self._own_uri = True

    @property
    def follows_resource(self) -> bool:
        """The URI is the resource's own default (its address or first sample), not one the user typed."""
        return not self._own_uri

    def set_resource(self, spec: ResourceSpec | None) -> None:
        """Offer `spec`'s samples and, for a template, one field per variable; None clears the panel."""
        same = self._spec is not None and spec is not None and self._spec.name == spec.name
        self._spec = spec
        try:
            self._compiled = compile_template(spec.uri_template) if spec and spec.uri_template else None
        except ValidationError:
            self._compiled = None
        current = self.uri
        if not same:
            self._own_uri = False
        self._syncing = True
        try:
            self.uri_box.clear()
            samples = spec.sample_uris() if spec else []
            self.uri_box.addItems(samples)
            if same and current and self._own_uri:
                self.uri_box.setEditText(current)
            elif samples:
                # Follow the address (or the first sample) while the user has not typed their own.
                self.uri_box.setCurrentIndex(0)
            else:
                self.uri_box.setEditText(spec.uri_template if spec and spec.uri_template else "")
        finally:
            self._syncing = False
        self._rebuild_variables()
        self._fill_variables_from_uri(self.uri)
        self.read_button.setEnabled(spec is not None)
        if not same:
            self.clear_output()
        self._update_stale()

    def mark_stale(self) -> None:
        """Something the read depends on beyond the resource changed (e.g. the prelude)."""
        if self._shown_from is not None:
            self._prelude_changed = True
            self._update_stale()

    @property
    def is_stale(self) -> bool:
        """A result is shown, but the URI or the snippet changed since it was read."""
        return self.stale_label.isVisibleTo(self)

    def variable_edit(self, variable: str) -> QLineEdit | None:
        """The field of a template variable (for tests and the shell)."""
        return self._variable_edits.get(variable)

    def set_completions(self, variable: str, values: list[str]) -> None:
        """Replace the suggestions of a variable's field (e.g. from the completion snippet)."""
        model = self._completion_models.get(variable)
        if model is None:
            return
        values = [str(value) for value in values]
        model.setStringList(values)
        edit = self._variable_edits[variable]
        completer = edit.completer()
        popup = completer.popup() if completer is not None else None
        # A value just picked from the popup, or the only suggestion being what is typed, needs no popup:
        # reopening it would cover the result the user is about to read.
        settled = self._picked.get(variable) == edit.text() or values == [edit.text()]
        if settled and popup is not None:
            popup.hide()
        elif not settled and completer is not None and edit.hasFocus() and values:
            completer.complete()

    def clear_output(self) -> None:
        self._shown_from = None
        self._shown_outcome = None
        self.add_test_button.setEnabled(False)
        self._update_stale()
        self.summary_label.setText("")
        self.summary_label.hide()
        self._clear_tabs()
        self.pages.setCurrentWidget(self.placeholder)

    def content_views(self) -> list[ContentView]:
        return [self.content_tabs.widget(i) for i in range(self.content_tabs.count())]  # type: ignore[misc]

    @Slot(object)
    def show_outcome(self, outcome: PreviewOutcome) -> None:
        """Show a `PreviewOutcome`: what matched, the parameters, the contents or the error, and the time."""
        self.read_button.setEnabled(self._spec is not None)
        self._shown_from = (outcome.uri or "", self._reading_fields())
        self._shown_outcome = outcome
        self._prelude_changed = False
        self._update_stale()
        self.summary_label.setText(self._summary(outcome))
        self.summary_label.show()
        self._clear_tabs()
        self._last_error = None
        if outcome.error_code is not None or outcome.contents is None:
            self._last_error = outcome
            self.error_view.setHtml(self._error_html(outcome, status_colors(self.palette())))
            self.pages.setCurrentWidget(self.error_view)
            return
        contents = list(outcome.contents)
        if not contents:
            self.error_view.setHtml("<b>The read returned no content.</b>")
            self.pages.setCurrentWidget(self.error_view)
            return
        for number, content in enumerate(contents, 1):
            view = self._spare_views.pop() if self._spare_views else self._new_view()
            label = content.uri.rstrip("/").rsplit("/", 1)[-1] or content.uri
            self.content_tabs.addTab(view, f"{number}. {label}")
            view.set_content(content)
        self.pages.setCurrentWidget(self.content_tabs)

    # -- rendering helpers ---------------------------------------------------

    @staticmethod
    def _summary(outcome: PreviewOutcome) -> str:
        esc = html.escape
        parts = []
        name = outcome.resource_name
        if name:
            if outcome.is_template:
                template = outcome.template or ""
                parts.append(f"Matched template <b>{esc(name)}</b> <code>{esc(template)}</code>")
            else:
                parts.append(f"Matched resource <b>{esc(name)}</b>")
        else:
            parts.append("No resource matched")
        params = dict(outcome.params or {})
        if params:
            # In the template's order: the server hands them over in whatever order it matched them.
            try:
                order = list(compile_template(outcome.template or "").variable_names)
            except ValidationError:
                order = []
            names = [n for n in order if n in params] + [n for n in params if n not in order]
            shown = ", ".join(f"<code>{esc(str(n))}</code>&nbsp;=&nbsp;<code>{esc(str(params[n]))}</code>"
                              for n in names)  # fmt: skip
            parts.append(f"parameters {shown}")
        elapsed = outcome.elapsed_ms
        if elapsed is not None:
            parts.append(f"{elapsed:.1f}&nbsp;ms")  # the unit never wraps onto a line of its own
        contents = outcome.contents
        if contents and len(contents) > 1:
            parts.append(f"{len(contents)} content items")
        return " · ".join(parts)

    @staticmethod
    def _error_html(outcome: PreviewOutcome, colors: StatusColors) -> str:
        code = outcome.error_code
        message = outcome.error_message or "The read failed"
        data = outcome.error_data
        title = ERROR_NAMES.get(code, "Error") if code is not None else "Error"
        text = (
            f"<p style='color:{colors.error_text.name()}; font-weight:600'>{html.escape(title)}"
            f"{f' ({code})' if code is not None else ''}</p>"
            f"<p>{html.escape(message)}</p>"
        )
        if data is not None:
            try:
                pretty = json.dumps(data, indent=2, ensure_ascii=False, default=str)
            except (TypeError, ValueError, RecursionError):  # RecursionError: data nested thousands deep
                pretty = _SHORT_REPR.repr(data)
            text += f"<p>data:</p><pre>{html.escape(pretty[:_ERROR_DATA_LIMIT])}</pre>"
        return text

    def _reading_fields(self) -> tuple[str, ...]:
        spec = self._spec
        return (spec.name, spec.reader, spec.mime_type, spec.uri, spec.uri_template) if spec else ()

    def _update_stale(self) -> None:
        shown = self._shown_from
        stale = shown is not None and (
            self._prelude_changed or shown[0] != self.uri or shown[1] != self._reading_fields()
        )
        self.stale_label.setVisible(stale)
        # A stale result no longer says what the resource answers now: it is not worth keeping as a test.
        outcome = self._shown_outcome
        self.add_test_button.setEnabled(outcome is not None and bool(outcome.uri) and not stale)
        if stale != self._stale:
            self._stale = stale
            self._apply_colors()

    def _apply_colors(self) -> None:
        """Banners and dimmed text from the palette (called again when the theme changes)."""
        colors = status_colors(self.palette())
        # Dimmed summary rather than a translucent content page: an opacity effect over a text view
        # paints it dark, and the stale content stays readable and scrollable this way.
        css = (
            colors.banner_css("warning", "QLabel#previewStale")
            + f" QLabel#previewPlaceholder {{ color: {colors.muted_text.name()}; }}"
            + (f" QLabel#previewSummary {{ color: {colors.muted_text.name()}; }}" if self._stale else "")
            + f" QTextBrowser#previewError {{ color: {self.palette().color(QPalette.ColorRole.Text).name()};"
            f" background: {colors.error_background.name()}; border: 1px solid {colors.error_border.name()};"
            " border-radius: 3px; padding: 4px; }"
        )
        if self.output.styleSheet() != css:
            self.output.setStyleSheet(css)
        if self._last_error is not None:
            self.error_view.setHtml(self._error_html(self._last_error, colors))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._apply_colors()

    def _new_view(self) -> ContentView:
        # Imported with the first view, after the first paint: the renderers are not needed before.
        from studio.preview.content_view import ContentView

        return ContentView(self.content_tabs, registry=self._registry)

    def _clear_tabs(self) -> None:
        # The views are kept for the next read: making one costs more than the read of a small resource
        # (the first one in a process about 80 ms, in PySide's type set-up), which the user would wait for.
        while self.content_tabs.count():
            from studio.preview.content_view import ContentView  # loaded: a tab shows one

            widget = self.content_tabs.widget(0)
            self.content_tabs.removeTab(0)
            if not isinstance(widget, ContentView):
                continue
            if len(self._spare_views) < SPARE_VIEWS:
                widget.clear()
                self._spare_views.append(widget)
            else:
                widget.deleteLater()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and not self._warmed:
            # After the panel's first paint (the window is on screen): make the first content view
            # now rather than inside the first read.
            self._warmed = True
            QTimer.singleShot(0, self, self._on_warm_up)
        return super().event(event)

    @Slot()
    def _on_warm_up(self) -> None:
        if not self._spare_views and not self.content_tabs.count():
            view = self._new_view()
            view.hide()
            self._spare_views.append(view)

    # -- template variables --------------------------------------------------

    def _rebuild_variables(self) -> None:
        while self._variables_layout.count():
            item = self._variables_layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self._variable_edits = {}
        self._completion_models = {}
        self._picked = {}
        if self._compiled is None:
            self.variables.hide()
            return
        completions = self._spec.completions if self._spec else {}
        for position, variable in enumerate(self._compiled.variable_names):
            edit, model, completer = add_variable_field(
                self.variables, self._variables_layout, variable=variable, position=position,
                object_name=f"previewVar_{variable}", values=completions.get(variable, []),
            )
            edit.textEdited.connect(self._on_variable_edited)
            edit.returnPressed.connect(self._on_variable_return_pressed)
            completer.activated.connect(self._on_suggestion_picked)
            self._variable_edits[variable] = edit
            self._completion_models[variable] = model
        self.variables.setVisible(bool(self._variable_edits))

    def _fill_variables_from_uri(self, uri: str) -> None:
        if self._compiled is None or not uri:
            return
        params = self._compiled.match(uri)
        if params is None:
            return
        self._syncing = True
        try:
            for variable, edit in self._variable_edits.items():
                value = params.get(variable, "")
                edit.setText(",".join(value) if isinstance(value, list) else str(value))
        finally:
            self._syncing = False

    def _compose(self) -> str:
        assert self._compiled is not None
        values = {name: edit.text() for name, edit in self._variable_edits.items() if edit.text()}
        return self._compiled.expand(values)

    # -- slots ---------------------------------------------------------------

    @Slot()
    def _on_read_clicked(self) -> None:
        uri = self.uri
        if not uri or self._spec is None:
            return
        self.summary_label.setText(f"Reading <code>{html.escape(uri)}</code>...")
        self.summary_label.show()
        self.preview_requested.emit(uri)

    @Slot()
    def _on_add_test_clicked(self) -> None:
        if self._shown_outcome is not None:
            self.add_test_requested.emit(self._shown_outcome)

    @Slot(str)
    def _on_uri_text_changed(self, text: str) -> None:
        if not self._syncing:
            self._fill_variables_from_uri(text.strip())
        self._update_stale()

    @Slot(str)
    def _on_uri_typed(self, _text: str) -> None:
        self._own_uri = True

    @Slot(int)
    def _on_sample_picked(self, _index: int) -> None:
        self._own_uri = True

    @Slot()
    def _on_variable_return_pressed(self) -> None:
        # Enter in a variable field reads, unless it is picking a suggestion from the popup.
        sender = self.sender()
        completer = sender.completer() if isinstance(sender, QLineEdit) else None
        popup = completer.popup() if completer is not None else None
        if popup is not None and popup.isVisible():
            return
        self._on_read_clicked()

    @Slot(str)
    def _on_variable_edited(self, _text: str) -> None:
        if self._syncing or self._compiled is None:
            return
        self._own_uri = True
        self._compose_uri()
        spec = self._spec
        sender = self.sender()
        if spec is not None and spec.complete.strip():
            for variable, edit in self._variable_edits.items():
                if edit is sender:
                    self._picked.pop(variable, None)
                    context = {
                        name: e.text()
                        for name, e in self._variable_edits.items()
                        if e.text() and e is not edit
                    }
                    self.completion_requested.emit(spec.name, variable, edit.text(), context)

    @Slot(str)
    def _on_suggestion_picked(self, value: str) -> None:
        # A picked value is final: compose the URI, but ask for no new suggestions (they would reopen
        # the popup over the value); answers still in flight find it settled and keep the popup shut.
        sender = self.sender()
        for variable, edit in self._variable_edits.items():
            if isinstance(sender, QCompleter) and edit.completer() is sender:
                self._picked[variable] = value
        if not self._syncing and self._compiled is not None:
            self._compose_uri()

    def _compose_uri(self) -> None:
        self._syncing = True
        try:
            self.uri_box.setEditText(self._compose())
        finally:
            self._syncing = False
