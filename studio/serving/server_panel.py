"""The server panel: start/stop HTTP (beside stdio), capabilities, sessions, notifications, client configurations."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt, Signal, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QBoxLayout,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from resources_qt.notifications import ListChanged, Updated, can_send
from resources_qt.project import AuthConfig
from studio.look.elided_label import ElidedLabel
from studio.look.icons import icon
from studio.serving.client_config import ClientConfigView
from studio.serving.metrics_charts import MetricsCharts
from studio.serving.sessions_view import SessionsModel, SessionsView

__all__ = ["ServerPanel"]


class ServerPanel(QWidget):
    """Controls for the live server; it only asks (signals) and shows (slots), the window wires the facade.

    Start / Stop is HTTP's; a stdio client (the studio launched with --stdio)
    is served beside it by the same server, and shown under the URL. The
    notify buttons work while either transport serves.

    Signals:
        start_requested(str host, int port, str token): the user pressed Start ("" token: none).
        stop_requested(): the user pressed Stop (HTTP; stdio keeps serving).
        capabilities_changed(bool notifications, bool subscriptions): a capability switch flipped.
        announce_edits_changed(bool on): the "announce edits" switch flipped.
        notification_requested(Notification notification): send it: ListChanged() to every session,
            Updated(uri) to every subscriber of uri, Updated(uri, session_id=...) to the selected session only
            (a union Qt cannot name, so `object`).
        url_copied(str url): the server URL went to the clipboard.
        token_changed(str token): the bearer token field changed (stripped; "" for none).
    """

    start_requested = Signal(str, int, str)
    stop_requested = Signal()
    capabilities_changed = Signal(bool, bool)
    announce_edits_changed = Signal(bool)
    notification_requested = Signal(object)
    url_copied = Signal(str)
    token_changed = Signal(str)

    def __init__(self, sessions: SessionsModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("serverPanel")
        self._sessions = sessions
        self._running = False  # HTTP
        self._serving: tuple[str, ...] = ()  # every transport served
        self._busy = False
        self._url = ""
        self._direct_uris: list[str] = []
        self._sample_uris: list[str] = []
        # notifyUri follows the project (the current resource's URI, else the first one offered) until
        # the user types their own text; a URI picked from the list is kept while it is still offered.
        self._typed = False
        self._chosen = ""
        self._current_uri = ""

        # -- HTTP --------------------------------------------------------------------
        self.host_edit = QLineEdit("127.0.0.1")
        self.host_edit.setObjectName("httpHost")
        self.host_edit.setToolTip("Address to listen on; a non-loopback address requires a token")
        self.host_edit.setAccessibleName("Address")
        self.host_edit.setAccessibleDescription("The address to listen on; a non-loopback address requires a token")
        self.port_spin = QSpinBox()
        self.port_spin.setObjectName("httpPort")
        self.port_spin.setRange(0, 65535)
        self.port_spin.setValue(8765)
        self.port_spin.setSpecialValueText("any free")
        self.port_spin.setToolTip("TCP port (0: pick any free port)")
        self.port_spin.setAccessibleName("Port")
        self.port_spin.setAccessibleDescription("The TCP port to listen on; 0 picks any free port")
        self.token_edit = QLineEdit()
        self.token_edit.setObjectName("httpToken")
        self.token_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.token_edit.setPlaceholderText("optional bearer token")
        self.token_edit.setToolTip("When set, clients must send 'Authorization: Bearer <token>'")
        self.bus_edit = QLineEdit()
        self.bus_edit.setObjectName("busUrlEdit")
        self.bus_edit.setPlaceholderText("optional redis://host:6379/0")
        self.bus_edit.setToolTip(
            "Share notifications with a deployed fleet of 'resource-studio serve --bus' replicas: the notify "
            "buttons and announced edits reach every replica's subscribers (applies at start)"
        )
        self.bus_status = QLabel("")
        self.bus_status.setObjectName("busStatus")
        self.bus_status.setWordWrap(True)
        self.start_button = QPushButton()
        self.start_button.setObjectName("startHttpButton")
        self.start_button.setToolTip("Start serving the project over Streamable HTTP (F5)")
        self.url_label = QLabel("Not serving")
        self.url_label.setObjectName("serverUrl")
        self.url_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.url_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.copy_url_button = QToolButton()
        self.copy_url_button.setObjectName("copyUrlButton")
        self.copy_url_button.setIcon(icon("copy"))
        self.copy_url_button.setToolTip("Copy the server URL")
        self.copy_url_button.setAccessibleName("Copy the server URL")
        self.copy_url_button.setAutoRaise(True)
        self.transports_label = QLabel("")
        self.transports_label.setObjectName("servedTransports")
        self.transports_label.setWordWrap(True)
        self.transports_label.setStyleSheet("color: palette(placeholder-text);")
        self.transports_label.setVisible(False)

        endpoint = QHBoxLayout()
        endpoint.addWidget(self.host_edit, 3)
        endpoint.addWidget(QLabel(":"))
        endpoint.addWidget(self.port_spin, 2)
        url_row = QHBoxLayout()
        url_row.addWidget(self.start_button)
        url_row.addWidget(self.url_label, 1)
        url_row.addWidget(self.copy_url_button)
        http_form = QFormLayout()
        http_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        http_form.addRow("Address", endpoint)
        http_form.addRow("Token", self.token_edit)
        http_form.addRow("Bus", self.bus_edit)
        http_form.addRow("", self.bus_status)

        # -- capabilities (advertised at start, so fixed while running) ------------------
        self.notifications_check = QCheckBox("Notifications")
        self.notifications_check.setObjectName("notificationsSwitch")
        self.notifications_check.setToolTip("Advertise resources.listChanged (fixed while the server runs)")
        self.subscriptions_check = QCheckBox("Subscriptions")
        self.subscriptions_check.setObjectName("subscriptionsSwitch")
        self.subscriptions_check.setToolTip("Advertise resources.subscribe (fixed while the server runs)")
        self.announce_check = QCheckBox("Announce edits")
        self.announce_check.setObjectName("announceEditsSwitch")
        self.announce_check.setToolTip(
            "Send 'updated' to subscribers of an edited resource and 'list_changed' when the catalogue\n"
            "changes, as soon as the edit is applied"
        )
        caps = QHBoxLayout()
        for check in (self.notifications_check, self.subscriptions_check):
            caps.addWidget(check)
        caps.addStretch(1)

        http_box = QGroupBox("Streamable HTTP")
        http_layout = QVBoxLayout(http_box)
        http_layout.addLayout(http_form)
        http_layout.addLayout(url_row)
        http_layout.addWidget(self.transports_label)
        http_layout.addLayout(caps)
        http_layout.addWidget(self.announce_check)

        # -- sessions and notifications ------------------------------------------------------
        self.sessions_view = SessionsView(sessions)
        self.sessions_view.setMinimumHeight(70)
        self.sessions_view.setAccessibleName("Sessions")
        self.sessions_view.setAccessibleDescription(
            "Connected clients: client, protocol, transport, when it connected and its subscriptions; "
            "select one to send it an update on its own"
        )
        self.notify_uri = QComboBox()
        self.notify_uri.setObjectName("notifyUri")
        self.notify_uri.setEditable(True)
        self.notify_uri.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        uri_line = self.notify_uri.lineEdit()
        assert uri_line is not None  # editable combo boxes have one
        uri_line.setPlaceholderText("URI to announce as updated")
        uri_line.textEdited.connect(self._on_notify_uri_typed)
        self.notify_uri.activated.connect(self._on_notify_uri_chosen)
        self.notify_uri.setToolTip(
            "A resource URI: every subscribed URI, the direct resources and the templates' samples are listed"
        )
        self.notify_uri.setAccessibleName("URI to notify")
        self.notify_uri.setAccessibleDescription("The resource URI that Updated and To selected announce")
        self.notify_uri.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.notify_uri.setMinimumContentsLength(16)
        self.notify_updated_button = QPushButton(icon("notify-updated"), "Updated")
        self.notify_updated_button.setObjectName("notifyUpdatedButton")
        self.notify_updated_button.setToolTip(
            "Send notifications/resources/updated for the URI to every subscriber"
        )
        self.notify_session_button = QPushButton(icon("notify-updated"), "To selected")
        self.notify_session_button.setObjectName("notifySessionButton")
        self.notify_session_button.setToolTip(
            "Send notifications/resources/updated to the selected session only"
        )
        self.notify_list_button = QPushButton(icon("notify-list-changed"), "List changed")
        self.notify_list_button.setObjectName("notifyListChangedButton")
        self.notify_list_button.setToolTip(
            "Send notifications/resources/list_changed to every session (Ctrl+Shift+L)"
        )
        # One line, always there (cut with its tooltip when long): a result appearing moves nothing.
        self.notify_result = ElidedLabel()
        self.notify_result.setObjectName("notifyResult")
        self.notify_result.setStyleSheet("color: palette(placeholder-text);")
        # Why a notify button is disabled and what enables it, above the URI: what comes and goes there only
        # moves the table's bottom edge, never the row of buttons under the pointer.
        self.notify_hint = QLabel()
        self.notify_hint.setObjectName("notifyHint")
        self.notify_hint.setWordWrap(True)
        self.notify_hint.setStyleSheet("color: palette(placeholder-text);")
        buttons = QHBoxLayout()
        buttons.addWidget(self.notify_updated_button)
        buttons.addWidget(self.notify_session_button)
        buttons.addWidget(self.notify_list_button)
        sessions_box = QGroupBox("Sessions and notifications")
        sessions_layout = QVBoxLayout(sessions_box)
        sessions_layout.addWidget(self.sessions_view, 1)
        sessions_layout.addWidget(self.notify_hint)
        sessions_layout.addWidget(self.notify_uri)
        sessions_layout.addLayout(buttons)
        sessions_layout.addWidget(self.notify_result)

        # -- client configurations ---------------------------------------------------------
        self.client_config = ClientConfigView()
        self.client_config.set_endpoint(self.host_edit.text(), self.port_spin.value())
        self.client_config.setMinimumHeight(90)
        config_box = QGroupBox("Client configuration")
        config_layout = QVBoxLayout(config_box)
        config_layout.addWidget(self.client_config)

        # The endpoint over the client configuration at the left, the sessions taking the rest of the
        # page: no column left mostly empty, whatever the window's size. Stacked in a narrow dock.
        http_box.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        left = QWidget(self)
        left.setObjectName("serverPanelLeft")
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(http_box)
        left_layout.addWidget(config_box, 1)
        self.metrics_charts = MetricsCharts(self)  # live reads/s, latency and errors (the presenter feeds it)
        # The charts share the column's height with the client configuration (a few lines of JSON).
        left_layout.addWidget(self.metrics_charts, 1)
        self._boxes = QBoxLayout(QBoxLayout.Direction.LeftToRight, self)
        self._boxes.setContentsMargins(4, 4, 4, 4)
        self._boxes.addWidget(left, 2)
        self._boxes.addWidget(sessions_box, 3)

        self.start_button.clicked.connect(self._on_start_clicked)
        self.host_edit.textChanged.connect(self._on_endpoint_changed)
        self.port_spin.valueChanged.connect(self._on_endpoint_changed)
        self.token_edit.textChanged.connect(self._on_token_text_changed)
        self.copy_url_button.clicked.connect(self._on_copy_url_clicked)
        self.notifications_check.toggled.connect(self._on_capability_toggled)
        self.subscriptions_check.toggled.connect(self._on_capability_toggled)
        self.announce_check.toggled.connect(self.announce_edits_changed)
        self.notify_updated_button.clicked.connect(self._on_notify_updated_clicked)
        self.notify_session_button.clicked.connect(self._on_notify_session_clicked)
        self.notify_list_button.clicked.connect(self._on_notify_list_clicked)
        self.notify_uri.editTextChanged.connect(self._on_notify_uri_edited)
        self.sessions_view.session_selected.connect(self._on_session_selected)
        sessions.subscriptions_changed.connect(self._on_subscriptions_changed)
        sessions.rowsRemoved.connect(self._on_sessions_removed)
        self._update_enabled()

    # -- state in (called by the window) -------------------------------------------------

    @property
    def is_running(self) -> bool:
        """HTTP is served."""
        return self._running

    @property
    def is_serving(self) -> bool:
        """Some transport (HTTP or stdio) is served: notifications can go out."""
        return bool(self._serving) or self._running

    def set_serving(self, transports: Iterable[str]) -> None:
        """Every transport served now ("http", "stdio"); the notify buttons and the stdio note follow it."""
        self._serving = tuple(transports)
        stdio = "stdio" in self._serving
        if not self._running and not self.url_label.toolTip():
            # No failure to show: say what is (not) served.
            self.url_label.setText("HTTP not started" if stdio else "Not serving")
        self.transports_label.setText(
            "Also serving the stdio client that launched the studio (it keeps serving when HTTP stops)"
            if stdio and self._running
            else "Serving the stdio client that launched the studio; Start adds HTTP beside it"
            if stdio
            else ""
        )
        self.transports_label.setVisible(stdio)
        self._update_enabled()

    @property
    def url(self) -> str:
        return self._url

    def set_capabilities(self, notifications: bool, subscriptions: bool) -> None:
        for check, value in (
            (self.notifications_check, notifications),
            (self.subscriptions_check, subscriptions),
        ):
            check.blockSignals(True)
            check.setChecked(value)
            check.blockSignals(False)
        self._update_enabled()

    def set_announce_edits(self, value: bool) -> None:
        self.announce_check.blockSignals(True)
        self.announce_check.setChecked(value)
        self.announce_check.blockSignals(False)

    def endpoint(self) -> tuple[str, int, str]:
        """(host, port, token) as Start would ask for them: loopback when the host is empty, "" for no token."""
        return self.host_edit.text().strip() or "127.0.0.1", self.port_spin.value(), self.token_edit.text().strip()

    def notify_uri_text(self) -> str:
        """The URI the notify buttons would announce ("" when the field is empty)."""
        return self.notify_uri.currentText().strip()

    def update_client_config(
        self, *, server_name: str, url: str | None, project_path: str | Path | None, auth: AuthConfig | None = None
    ) -> None:
        """Refresh the ready-to-copy client configurations (they carry the token typed here; with `[server.auth]`
        they name the resource URL and no credentials)."""
        self.client_config.update_config(
            server_name=server_name, url=url, token=self.endpoint()[2] or None, project_path=project_path, auth=auth
        )

    def bus_url(self) -> str:
        """The bus URL typed in the panel ("" for none)."""
        return self.bus_edit.text().strip()

    def set_bus_state(self, connected: bool, url: str) -> None:
        """Show whether the notification bus is connected ("" url: no bus)."""
        if not url:
            self.bus_status.setText("")
        elif connected:
            self.bus_status.setText(f"Bus connected: {url}")
        else:
            self.bus_status.setText(f"Bus not connected: {url} (retrying; notifications reach local clients only)")

    def set_endpoint(self, host: str, port: int) -> None:
        self.host_edit.setText(host)
        self.port_spin.setValue(port)

    def set_busy(self) -> None:
        """Between asking the facade to start/stop and hearing back."""
        self._busy = True
        self._update_enabled()

    def set_running(self, url: str) -> None:
        """HTTP serves at `url`."""
        self._running, self._busy, self._url = True, False, url
        self.url_label.setText(url if url.startswith("http") else f"serving over {url}")
        self.url_label.setToolTip(url)
        self.set_serving(self._serving)

    def set_stopped(self, message: str = "") -> None:
        """HTTP is not served (`message`: why, when it failed)."""
        self._running, self._busy, self._url = False, False, ""
        self.url_label.setText(message or "Not serving")
        self.url_label.setToolTip(message)
        self.set_serving(self._serving)

    def set_direct_uris(
        self, uris: Iterable[str], *, samples: Iterable[str] = (), reset: bool = False
    ) -> None:
        """The project's URIs offered in `notifyUri`: direct resources, then template samples.

        Subscribed URIs come from the sessions and are listed first. `reset` (another project
        was opened) drops what the field showed, so no URI of the previous project lingers.
        """
        offered_before = set(self._direct_uris) | set(self._sample_uris)
        self._direct_uris = list(uris)
        self._sample_uris = [uri for uri in samples if uri not in self._direct_uris]
        if reset:
            self.notify_uri.setEditText("")
            self._typed, self._chosen, self._current_uri = False, "", ""
        elif offered_before:
            # An address (or a template's default sample) that just appeared is the one being edited:
            # the box follows it, as it follows `set_current_uri`.
            fresh = [uri for uri in (*self._direct_uris, *self._sample_uris) if uri not in offered_before]
            if len(fresh) == 1:
                self._current_uri = fresh[0]
        self._refill_notify_uris()

    def set_current_uri(self, uri: str) -> None:
        """The shown resource's URI (or a template's first sample): notifyUri offers it until the user types."""
        if uri != self._current_uri:
            self._current_uri = uri
            self._refill_notify_uris()

    def set_stacked(self, stacked: bool) -> None:
        """Stack the sections (for a side dock) or put them side by side (for a bottom dock)."""
        direction = QBoxLayout.Direction.TopToBottom if stacked else QBoxLayout.Direction.LeftToRight
        if self._boxes.direction() != direction:
            self._boxes.setDirection(direction)

    @property
    def is_stacked(self) -> bool:
        return self._boxes.direction() == QBoxLayout.Direction.TopToBottom

    def show_notification_result(self, method: str, uri: str, recipients: int) -> None:
        short = method.rsplit("/", 1)[-1]
        target = f" for {uri}" if uri else ""
        people = "1 recipient" if recipients == 1 else f"{recipients} recipients"
        self.notify_result.setText(f"Sent {short}{target} to {people}")

    # -- internals -----------------------------------------------------------------------

    def _refill_notify_uris(self) -> None:
        text = self.notify_uri.currentText()
        subscribed = self._sessions.subscribed_uris()
        offered = set(subscribed)
        items = list(subscribed)
        for uris in (self._direct_uris, self._sample_uris):
            for uri in uris:
                if uri not in offered:
                    offered.add(uri)
                    items.append(uri)
        samples = set(self._sample_uris)
        self.notify_uri.blockSignals(True)
        self.notify_uri.clear()
        for uri in items:
            kind = "notify-updated" if uri in subscribed else ("template" if uri in samples else "resource")
            self.notify_uri.addItem(icon(kind), uri)
        self.notify_uri.setEditText(self._followed_text(text, items))
        self.notify_uri.blockSignals(False)
        self._update_enabled()

    def _followed_text(self, text: str, items: list[str]) -> str:
        if self._typed and text.strip():
            return text  # the user's own URI stays, offered or not
        self._typed = False
        if self._chosen and self._chosen == text and text in items:
            return text
        self._chosen = ""
        if self._current_uri and self._current_uri in items:
            return self._current_uri
        return items[0] if items else ""

    @Slot()
    def _update_enabled(self) -> None:
        stopped = not self._running and not self._busy
        # Capabilities and the bus are the whole server's, fixed while any transport serves.
        idle = stopped and not self._serving
        serving = self.is_serving
        self.start_button.setEnabled(not self._busy)
        self.start_button.setText("Stop" if self._running else "Start")
        self.start_button.setIcon(icon("stop-server" if self._running else "start-server"))
        self.start_button.setToolTip(
            "Stop serving HTTP (F5)" if self._running else "Start serving the project over Streamable HTTP (F5)"
        )
        endpoint: tuple[QWidget, ...] = (self.host_edit, self.port_spin, self.token_edit)
        for widget in endpoint:
            widget.setEnabled(stopped)
        whole_server: tuple[QWidget, ...] = (self.bus_edit, self.notifications_check, self.subscriptions_check)
        for widget in whole_server:
            widget.setEnabled(idle)
        self.copy_url_button.setEnabled(self._running and self._url.startswith("http"))
        has_uri = bool(self.notify_uri.currentText().strip())
        subscriptions = self.subscriptions_check.isChecked()
        switches = {"running": serving, "notifications": self.notifications_check.isChecked(),
                    "subscriptions": subscriptions}  # fmt: skip
        updated = can_send(Updated, **switches) and has_uri
        self.notify_updated_button.setEnabled(updated)
        self.notify_session_button.setEnabled(updated and bool(self.sessions_view.selected_session_id()))
        self.notify_list_button.setEnabled(can_send(ListChanged, **switches))
        self._update_hint(has_uri=has_uri, subscriptions=subscriptions)

    def _update_hint(self, *, has_uri: bool, subscriptions: bool) -> None:
        reasons: list[str] = []
        if not self.is_serving:
            reasons.append("Start the server first to send notifications.")
        else:
            if not subscriptions:
                reasons.append(
                    "“Updated” needs subscriptions: turn on Subscriptions in Project settings and restart the server."
                )
            elif not has_uri:
                reasons.append("“Updated” needs a URI: type one or pick it from the list.")
            elif not self.sessions_view.selected_session_id():
                reasons.append("Select a session to send it “To selected”.")
            if not self.notifications_check.isChecked():
                reasons.append(
                    "“List changed” needs notifications: turn on Notifications in Project settings and restart"
                    " the server."
                )
        self.notify_hint.setText(" ".join(reasons))
        self.notify_hint.setVisible(bool(reasons))

    @Slot()
    def _on_start_clicked(self) -> None:
        if self._running:
            self.stop_requested.emit()
        else:
            self.start_requested.emit(*self.endpoint())

    @Slot()
    def _on_copy_url_clicked(self) -> None:
        if self._url:
            QGuiApplication.clipboard().setText(self._url)
            self.url_copied.emit(self._url)

    @Slot(bool)
    def _on_capability_toggled(self, _checked: bool) -> None:
        self._update_enabled()
        self.capabilities_changed.emit(
            self.notifications_check.isChecked(), self.subscriptions_check.isChecked()
        )

    @Slot()
    def _on_notify_list_clicked(self) -> None:
        self.notification_requested.emit(ListChanged())

    @Slot()
    def _on_notify_updated_clicked(self) -> None:
        uri = self.notify_uri_text()
        if uri:
            self.notification_requested.emit(Updated(uri))

    @Slot()
    def _on_notify_session_clicked(self) -> None:
        uri = self.notify_uri_text()
        session = self.sessions_view.selected_session_id()
        if uri and session:
            self.notification_requested.emit(Updated(uri, session_id=session))

    @Slot(str)
    def _on_notify_uri_edited(self, _text: str) -> None:
        self._update_enabled()

    @Slot(str)
    def _on_notify_uri_typed(self, _text: str) -> None:
        self._typed = True

    @Slot(int)
    def _on_notify_uri_chosen(self, _index: int) -> None:
        self._typed = False
        self._chosen = self.notify_uri.currentText()

    @Slot(str)
    def _on_token_text_changed(self, text: str) -> None:
        self.token_changed.emit(text.strip())

    @Slot()
    def _on_endpoint_changed(self) -> None:
        self.client_config.set_endpoint(self.host_edit.text(), self.port_spin.value())

    @Slot(str)
    def _on_session_selected(self, session_id: str) -> None:
        row = self._sessions.session(session_id) if session_id else None
        subscriptions = row.subscriptions if row is not None else set()
        if subscriptions and self.notify_uri.currentText() not in subscriptions:
            self._typed, self._chosen = False, min(subscriptions)
            self.notify_uri.setEditText(self._chosen)
        self._update_enabled()

    @Slot(QModelIndex, int, int)
    def _on_sessions_removed(self, _parent: QModelIndex, _first: int, _last: int) -> None:
        self._update_enabled()

    @Slot()
    def _on_subscriptions_changed(self) -> None:
        self._refill_notify_uris()
