"""The Remote page's widgets: the server, its catalogue, a read preview with template variables, the events."""

from __future__ import annotations

import html
import json

from PySide6.QtCore import QModelIndex, QStringListModel, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from resources_qt.client import NotificationReceived, RemoteRead, RemoteResource, ServerSummary
from resources_qt.errors import ValidationError
from resources_qt.templates import CompiledTemplate, compile_template
from studio.look.theme import status_colors
from studio.preview.content_view import ContentView
from studio.preview.preview import ERROR_NAMES
from studio.preview.variable_field import add_variable_field
from studio.remote.catalogue_model import ENTRY_ROLE, RemoteCatalogueModel

__all__ = ["EVENTS_LIMIT", "RemotePage"]

EVENTS_LIMIT = 1000
"""Notifications kept in the events list; the oldest go first."""


class RemotePage(QWidget):
    """Shows one remote connection; what the buttons and fields ask for goes out as signals (the presenter acts).

    Signals:
        connect_requested(): Connect… was clicked.
        disconnect_requested(): Disconnect was clicked.
        read_requested(str uri): Read was clicked (or Enter pressed) with this URI.
        subscribe_requested(str uri, bool on): Subscribe was toggled for this URI.
        import_requested(str key, bool static): "Import into project" (False) or "Import as static content" (True).
        completion_requested(str template, str variable, str value, dict context): a template variable was typed in.
    """

    connect_requested = Signal()
    disconnect_requested = Signal()
    read_requested = Signal(str)
    subscribe_requested = Signal(str, bool)
    import_requested = Signal(str, bool)
    completion_requested = Signal(str, str, str, dict)

    def __init__(self, model: RemoteCatalogueModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("remotePage")
        self.model = model
        self._template: CompiledTemplate | None = None
        self._template_text = ""
        self._variable_edits: dict[str, QLineEdit] = {}
        self._completion_models: dict[str, QStringListModel] = {}
        self._subscribed: set[str] = set()
        self._connected = False

        self.connect_button = QPushButton("Connect…", self)
        self.connect_button.setObjectName("remoteConnect")
        self.disconnect_button = QPushButton("Disconnect", self)
        self.disconnect_button.setObjectName("remoteDisconnect")
        self.status_label = QLabel("Not connected. File > Connect to Server… reads from any MCP server.", self)
        self.status_label.setObjectName("remoteStatus")
        self.status_label.setWordWrap(True)
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.server_label = QLabel(self)
        self.server_label.setObjectName("remoteServerInfo")
        self.instructions_label = QLabel(self)
        self.instructions_label.setObjectName("remoteInstructions")
        self.instructions_label.setWordWrap(True)
        self.capabilities_label = QLabel(self)
        self.capabilities_label.setObjectName("remoteCapabilities")
        self.capabilities_label.setWordWrap(True)

        self.catalogue = QTableView(self)
        self.catalogue.setObjectName("remoteCatalogue")
        self.catalogue.setAccessibleName("Remote catalogue")
        self.catalogue.setModel(model)
        self.catalogue.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.catalogue.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.catalogue.verticalHeader().hide()
        self.catalogue.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.catalogue.horizontalHeader().setStretchLastSection(True)

        self.uri_edit = QLineEdit(self)
        self.uri_edit.setObjectName("remoteUri")
        self.uri_edit.setPlaceholderText("URI to read")
        self.variables = QWidget(self)
        self.variables.setObjectName("remoteVariables")
        self._variables_layout = QGridLayout(self.variables)
        self._variables_layout.setContentsMargins(0, 0, 0, 0)
        self.variables.hide()
        self.read_button = QPushButton("Read", self)
        self.read_button.setObjectName("remoteRead")
        self.subscribe_button = QPushButton("Subscribe", self)
        self.subscribe_button.setObjectName("remoteSubscribe")
        self.subscribe_button.setCheckable(True)
        self.import_button = QPushButton("Import into project", self)
        self.import_button.setObjectName("remoteImport")
        self.import_button.setToolTip("Add it to the project, read from this server when served (an upstream)")
        self.static_button = QPushButton("Import as static content", self)
        self.static_button.setObjectName("remoteImportStatic")
        self.static_button.setToolTip("Add it to the project with a copy of the content read now")
        self.summary_label = QLabel(self)
        self.summary_label.setObjectName("remoteReadSummary")
        self.summary_label.setTextFormat(Qt.TextFormat.RichText)

        self.output = QStackedWidget(self)
        self.output.setObjectName("remotePreviewOutput")
        self.placeholder = QLabel("Select a resource or template and Read.", self.output)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.content_tabs = QTabWidget(self.output)
        self.content_tabs.setObjectName("remoteContentTabs")
        self.error_view = QTextBrowser(self.output)
        self.error_view.setObjectName("remoteReadError")
        for page in (self.placeholder, self.content_tabs, self.error_view):
            self.output.addWidget(page)

        self.events = QListWidget(self)
        self.events.setObjectName("remoteEvents")
        self.events.setAccessibleName("Remote notifications")

        self._layout()
        self.connect_button.clicked.connect(self.connect_requested)
        self.disconnect_button.clicked.connect(self.disconnect_requested)
        self.read_button.clicked.connect(self._on_read_clicked)
        self.uri_edit.returnPressed.connect(self._on_read_clicked)
        self.uri_edit.textChanged.connect(self._on_uri_changed)
        self.subscribe_button.clicked.connect(self._on_subscribe_clicked)
        self.import_button.clicked.connect(self._on_import_clicked)
        self.static_button.clicked.connect(self._on_static_clicked)
        self.catalogue.selectionModel().currentRowChanged.connect(self._on_row_changed)
        model.modelReset.connect(self._on_model_reset)
        self.show_closed()

    def _layout(self) -> None:
        top = QHBoxLayout()
        top.addWidget(self.status_label, 1)
        top.addWidget(self.connect_button)
        top.addWidget(self.disconnect_button)
        info = QFormLayout()
        info.addRow("Server", self.server_label)
        info.addRow("Instructions", self.instructions_label)
        info.addRow("Capabilities", self.capabilities_label)
        buttons = QHBoxLayout()
        buttons.addWidget(self.uri_edit, 1)
        buttons.addWidget(self.read_button)
        buttons.addWidget(self.subscribe_button)
        imports = QHBoxLayout()
        imports.addWidget(self.summary_label, 1)
        imports.addWidget(self.import_button)
        imports.addWidget(self.static_button)
        reading = QWidget(self)
        column = QVBoxLayout(reading)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(buttons)
        column.addWidget(self.variables)
        column.addLayout(imports)
        column.addWidget(self.output, 1)
        right = QSplitter(Qt.Orientation.Vertical, self)
        right.addWidget(reading)
        right.addWidget(self.events)
        right.setStretchFactor(0, 3)
        right.setStretchFactor(1, 1)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.setObjectName("remoteSplitter")
        split.addWidget(self.catalogue)
        split.addWidget(right)
        split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(info)
        layout.addWidget(split, 1)

    # -- what the presenter shows ----------------------------------------------------

    @property
    def uri(self) -> str:
        return self.uri_edit.text().strip()

    @property
    def selected(self) -> RemoteResource | None:
        index = self.catalogue.currentIndex()
        entry = index.data(ENTRY_ROLE) if index.isValid() else None
        return entry if isinstance(entry, RemoteResource) else None

    def show_connecting(self, label: str) -> None:
        self.status_label.setText(f"Connecting to {label}…")
        self.status_label.setStyleSheet("")

    def show_summary(self, summary: ServerSummary) -> None:
        self._connected = True
        era = "2026-07-28 (subscriptions/listen)" if summary.modern else f"{summary.protocol_version} (handshake)"
        self.status_label.setText(f"Connected to {summary.target}")
        self.status_label.setStyleSheet("")
        self.server_label.setText(f"{summary.title or summary.name or '(unnamed)'} {summary.version} · {era}")
        self.instructions_label.setText(summary.instructions or "—")
        self.capabilities_label.setText(json.dumps(dict(summary.capabilities), ensure_ascii=False) or "—")
        self._update_buttons()

    def show_failure(self, message: str) -> None:
        self.status_label.setText(message)
        self.status_label.setStyleSheet(f"color: {status_colors(self.palette()).error_text.name()}")

    def show_closed(self) -> None:
        self._connected = False
        self.server_label.setText("—")
        self.instructions_label.setText("—")
        self.capabilities_label.setText("—")
        self._subscribed.clear()
        self._update_buttons()

    def show_reading(self, uri: str) -> None:
        self.summary_label.setText(f"Reading <code>{html.escape(uri)}</code>…")

    def show_read(self, read: RemoteRead) -> None:
        """The contents through the preview's renderers, or the exact error; with the time taken."""
        self.summary_label.setText(f"<code>{html.escape(read.uri)}</code> · {read.elapsed_ms:.1f}&nbsp;ms")
        while self.content_tabs.count():
            view = self.content_tabs.widget(0)
            self.content_tabs.removeTab(0)
            if view is not None:
                view.deleteLater()
        if read.contents is None:
            code = read.error_code
            title = ERROR_NAMES.get(code, "Error") if code is not None else "Error"
            colour = status_colors(self.palette()).error_text.name()
            code_text = f" ({code})" if code is not None else ""
            text = (f"<p style='color:{colour}; font-weight:600'>{html.escape(title)}{code_text}</p>"
                    f"<p>{html.escape(read.error_message)}</p>")  # fmt: skip
            if read.error_data is not None:
                data = json.dumps(read.error_data, indent=2, ensure_ascii=False, default=str)[:64 * 1024]
                text += f"<p>data:</p><pre>{html.escape(data)}</pre>"
            self.error_view.setHtml(text)
            self.output.setCurrentWidget(self.error_view)
            return
        if not read.contents:
            self.error_view.setHtml("<b>The read returned no content.</b>")
            self.output.setCurrentWidget(self.error_view)
            return
        for number, content in enumerate(read.contents, 1):
            view = ContentView(self.content_tabs)
            label = content.uri.rstrip("/").rsplit("/", 1)[-1] or content.uri
            self.content_tabs.addTab(view, f"{number}. {label}")
            view.set_content(content)
        self.output.setCurrentWidget(self.content_tabs)

    def content_views(self) -> list[ContentView]:
        views = [self.content_tabs.widget(i) for i in range(self.content_tabs.count())]
        return [view for view in views if isinstance(view, ContentView)]

    def add_event(self, event: NotificationReceived) -> None:
        when = event.time.astimezone().strftime("%H:%M:%S.%f")[:-3]
        short = event.method.rsplit("/", 1)[-1]
        self.events.addItem(f"{when}  {short}{f'  {event.uri}' if event.uri else ''}")
        while self.events.count() > EVENTS_LIMIT:
            self.events.takeItem(0)
        self.events.scrollToBottom()

    def set_subscribed(self, uri: str, subscribed: bool) -> None:
        if subscribed:
            self._subscribed.add(uri)
        else:
            self._subscribed.discard(uri)
        self._update_buttons()

    def set_completions(self, variable: str, values: list[str]) -> None:
        model = self._completion_models.get(variable)
        edit = self._variable_edits.get(variable)
        if model is None or edit is None:
            return
        model.setStringList(values)
        completer = edit.completer()
        if values and edit.hasFocus() and completer is not None:
            completer.setCompletionPrefix(edit.text())
            completer.complete()

    def variable_edit(self, variable: str) -> QLineEdit | None:
        return self._variable_edits.get(variable)

    def select_key(self, key: str) -> bool:
        """Select the catalogue row at `key` (a URI or template); False if it is not listed."""
        row = self.model.row_of(key)
        if row < 0:
            return False
        self.catalogue.setCurrentIndex(self.model.index(row, 0))
        return True

    # -- template variables ------------------------------------------------------------

    def _show_template(self, template: str) -> None:
        while self._variables_layout.count():
            item = self._variables_layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self._variable_edits, self._completion_models = {}, {}
        self._template_text = template
        try:
            self._template = compile_template(template) if template else None
        except ValidationError:  # a template the studio cannot parse is read by its URI only
            self._template = None
        if self._template is None:
            self.variables.hide()
            return
        for position, variable in enumerate(self._template.variable_names):
            edit, model, completer = add_variable_field(
                self.variables, self._variables_layout, variable=variable, position=position,
                object_name=f"remoteVar_{variable}",
            )
            edit.textEdited.connect(self._on_variable_edited)
            edit.returnPressed.connect(self._on_read_clicked)
            completer.activated.connect(self._on_variable_picked)
            self._variable_edits[variable] = edit
            self._completion_models[variable] = model
        self.variables.setVisible(bool(self._variable_edits))
        self._compose()

    def _compose(self) -> None:
        if self._template is None:
            return
        values = {name: edit.text() for name, edit in self._variable_edits.items() if edit.text()}
        self.uri_edit.setText(self._template.expand(values))

    def _update_buttons(self) -> None:
        uri = self.uri
        self.disconnect_button.setEnabled(self._connected)
        self.read_button.setEnabled(self._connected and bool(uri))
        self.subscribe_button.setEnabled(self._connected and bool(uri))
        self.subscribe_button.setChecked(uri in self._subscribed)
        self.subscribe_button.setText("Unsubscribe" if uri in self._subscribed else "Subscribe")
        has_entry = self._connected and self.selected is not None
        self.import_button.setEnabled(has_entry)
        self.static_button.setEnabled(has_entry)

    # -- slots ---------------------------------------------------------------------------

    @Slot()
    def _on_model_reset(self) -> None:
        self.catalogue.resizeColumnsToContents()
        self._update_buttons()

    @Slot(QModelIndex, QModelIndex)
    def _on_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        entry = current.data(ENTRY_ROLE) if current.isValid() else None
        if not isinstance(entry, RemoteResource):
            return
        if entry.is_template:
            self._show_template(entry.uri_template)
        else:
            self._show_template("")
            self.uri_edit.setText(entry.uri)
        self._update_buttons()

    @Slot(str)
    def _on_uri_changed(self, _text: str) -> None:
        self._update_buttons()

    @Slot()
    def _on_read_clicked(self) -> None:
        if self.uri and self._connected:
            self.read_requested.emit(self.uri)

    @Slot(bool)
    def _on_subscribe_clicked(self, _checked: bool) -> None:
        uri = self.uri
        if uri:
            self.subscribe_requested.emit(uri, uri not in self._subscribed)
        self._update_buttons()  # the button shows the subscription as it is, until the server answers

    @Slot()
    def _on_import_clicked(self) -> None:
        entry = self.selected
        if entry is not None:
            self.import_requested.emit(entry.key, False)

    @Slot()
    def _on_static_clicked(self) -> None:
        entry = self.selected
        if entry is not None:
            self.import_requested.emit(self.uri or entry.key, True)

    @Slot(str)
    def _on_variable_edited(self, text: str) -> None:
        self._compose()
        sender = self.sender()
        for variable, edit in self._variable_edits.items():
            if edit is sender:
                context = {name: e.text() for name, e in self._variable_edits.items() if e.text() and e is not edit}
                self.completion_requested.emit(self._template_text, variable, text, context)

    @Slot(str)
    def _on_variable_picked(self, _value: str) -> None:
        self._compose()
