"""The serving feature's presenter: the server page, the sessions and the traffic log follow the controller."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtGui import QAction

from resources_qt.notifications import ListChanged, Updated, can_send
from resources_qt.qt.protocol import StudioController
from studio.document.document import ProjectDocument
from studio.preferences.settings import StudioSettings
from studio.serving.server_control import ServerControl
from studio.serving.server_panel import ServerPanel
from studio.serving.sessions_view import SessionsModel, caller_text
from studio.serving.traffic_log import TrafficLog

if TYPE_CHECKING:
    from resources_qt.qt import SessionInfo

logger = logging.getLogger(__name__)

__all__ = ["NOTIFY_URI_LIMIT", "REFRESH_DEBOUNCE_MS", "ServingPresenter"]

NOTIFY_URI_LIMIT = 500
"""Addresses and samples offered to notify, each; a project may have thousands."""
REFRESH_DEBOUNCE_MS = 150


class ServingPresenter(QObject):
    """Wires the serving feature: the server panel, the sessions model and the traffic log follow the
    controller; the panel's requests reach the document and the controller.

    It follows the controller's sessions, subscriptions, notifications, traffic and notification bus,
    sends the panel's and the Server menu's notifications, and keeps the capabilities the document's
    `[server]` declares: advertised at start, so the controller gets them only while stopped. The panel's
    notify URIs and client configurations follow the project, rebuilt once per burst of edits.

    Signals:
        status_changed(str text, str icon, bool running): the server status line ("Serving … · 2 sessions",
            "Stopped", "Failed: …"), the name of its icon ("" for none), and whether anything is served.
        project_views_refreshed(): the server page was brought up to date with the project (once per burst
            of edits, and whenever what is served changes).
        message_posted(str text, int timeout_ms): a note for the status bar.
    """

    status_changed = Signal(str, str, bool)
    project_views_refreshed = Signal()
    message_posted = Signal(str, int)

    def __init__(
        self,
        *,
        document: ProjectDocument,
        controller: StudioController,
        control: ServerControl,
        panel: ServerPanel,
        sessions: SessionsModel,
        traffic_log: TrafficLog,
        settings: StudioSettings,
        server_action: QAction,
        list_changed_action: QAction,
        updated_action: QAction,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._document = document
        self._controller = controller
        self._control = control
        self._panel = panel
        self._sessions = sessions
        self._traffic_log = traffic_log
        self._settings = settings
        self._list_changed_action = list_changed_action
        self._updated_action = updated_action
        self._session_count = 0
        self._project_switched = False  # the next refresh of the notify URIs forgets the old project's
        # The notify URI choices change with the catalogue: rebuilt once per burst of edits.
        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(REFRESH_DEBOUNCE_MS)
        self._refresh_timer.timeout.connect(self.refresh)
        self._wire(server_action)

        panel.set_endpoint(settings.http_host(), settings.http_port())
        announce = settings.announce_edits()
        panel.set_announce_edits(announce)
        controller.announce_edits = announce

    def _wire(self, server_action: QAction) -> None:
        doc, ctl, panel, sessions = self._document, self._controller, self._panel, self._sessions
        doc.project_reset.connect(self._on_settings_changed)
        doc.project_reset.connect(self._on_project_reset)
        doc.settings_changed.connect(self._on_settings_changed)
        for signal in (doc.project_reset, doc.resource_added, doc.resource_removed, doc.resource_changed,
                       doc.settings_changed):  # fmt: skip
            signal.connect(self._on_catalogue_edited)
        doc.path_changed.connect(self._on_path_changed)

        # panel -> facade (Start / Stop go through ServerControl, which also remembers the endpoint)
        panel.capabilities_changed.connect(self._on_capabilities_changed)
        panel.announce_edits_changed.connect(self._on_announce_edits_changed)
        panel.notification_requested.connect(ctl.notify)
        panel.token_changed.connect(self._on_token_changed)
        server_action.triggered.connect(self._on_server_action_triggered)
        self._list_changed_action.triggered.connect(self._on_list_changed_triggered)
        self._updated_action.triggered.connect(self._on_updated_triggered)

        # facade -> views
        self._control.state_changed.connect(self._on_server_state_changed)
        ctl.session_opened.connect(self._on_session_opened)
        ctl.session_closed.connect(self._on_session_closed)
        ctl.subscription_added.connect(sessions.add_subscription)
        ctl.subscription_removed.connect(sessions.remove_subscription)
        ctl.traffic_logged.connect(self._traffic_log.add_entries)
        ctl.notification_sent.connect(self._on_notification_sent)
        ctl.bus_state_changed.connect(panel.set_bus_state)
        ctl.metrics_sampled.connect(panel.metrics_charts.add_sample)
        panel.metrics_charts.second_clicked.connect(self._traffic_log.scroll_to_time)

    # -- API for the window ------------------------------------------------------------

    @Slot()
    def refresh(self) -> None:
        """Bring the server page up to date with the project, then the status line."""
        document, panel = self._document, self._panel
        server = document.project.server
        panel.set_capabilities(server.notifications, server.subscriptions)
        resources = document.project.resources
        direct = [spec.uri for spec in resources if spec.uri]
        samples = [uri for spec in resources if spec.uri_template for uri in spec.samples]
        panel.set_direct_uris(direct[:NOTIFY_URI_LIMIT], samples=samples[:NOTIFY_URI_LIMIT],
                              reset=self._project_switched)  # fmt: skip
        self._project_switched = False
        panel.update_client_config(server_name=server.name, url=self._control.http_url or None,
                                   project_path=document.path, auth=server.auth)  # fmt: skip
        self.project_views_refreshed.emit()
        self.refresh_status()

    def refresh_status(self) -> None:
        """Emit the status line, and enable the notify actions the running server's capabilities allow."""
        control = self._control
        running = control.running
        if running:
            count = self._session_count
            text = f"Serving {control.where()} · {count} session{'s' if count != 1 else ''}"
        else:
            text = f"Failed: {control.failure}" if control.failure else "Stopped"
        self.status_changed.emit(text, "start-server" if running else ("error" if control.failure else ""),
                                 running)  # fmt: skip
        server = self._document.project.server
        # The same rule as the Server page's buttons (resources_qt.notifications.can_send).
        switches = {"running": running, "notifications": server.notifications, "subscriptions": server.subscriptions}
        self._list_changed_action.setEnabled(can_send(ListChanged, **switches))
        self._updated_action.setEnabled(can_send(Updated, **switches))

    @Slot(str)
    def set_current_resource(self, name: str) -> None:
        """The notify field offers what is being edited: its address, or a template's first sample."""
        spec = self._document.spec(name) if name else None
        samples = spec.sample_uris() if spec is not None else []
        self._panel.set_current_uri(spec.uri or (samples[0] if samples else "") if spec is not None else "")
        self._panel.metrics_charts.set_resource(name if spec is not None else "")

    @Slot()
    def restart(self) -> None:
        """Restart the server with the project's settings (the settings page asks); a note when it is stopped."""
        if not self._control.restart():
            self.message_posted.emit("The server is not running: the settings apply when it starts", 5000)

    # -- slots: document and panel -------------------------------------------------------

    @Slot()
    def _on_project_reset(self) -> None:
        self._project_switched = True

    @Slot()
    def _on_catalogue_edited(self) -> None:
        self._refresh_timer.start()

    @Slot(str)
    def _on_path_changed(self, _path: str) -> None:
        self._refresh_timer.start()  # the stdio client configurations name the project file

    @Slot(str)
    def _on_token_changed(self, _token: str) -> None:
        self._refresh_timer.start()  # the HTTP client configurations carry the token

    @Slot()
    def _on_settings_changed(self) -> None:
        # The settings reach the controller once, through ServerSync (apply_project: capabilities follow the
        # project while stopped, as they are advertised at start); this only shows them.
        server = self._document.project.server
        self._panel.set_capabilities(server.notifications, server.subscriptions)

    @Slot(bool, bool)
    def _on_capabilities_changed(self, notifications: bool, subscriptions: bool) -> None:
        server = self._document.project.server
        self._document.set_server_settings(replace(server, notifications=notifications, subscriptions=subscriptions))

    @Slot(bool)
    def _on_announce_edits_changed(self, value: bool) -> None:
        self._controller.announce_edits = value
        self._settings.set_announce_edits(value)

    @Slot()
    def _on_server_action_triggered(self) -> None:
        self._control.toggle_http()

    @Slot()
    def _on_list_changed_triggered(self) -> None:
        self._controller.notify(ListChanged())

    @Slot()
    def _on_updated_triggered(self) -> None:
        uri = self._panel.notify_uri_text()
        if uri:
            self._controller.notify(Updated(uri))
        else:
            self.message_posted.emit("Choose a URI to announce in the server panel first", 5000)

    # -- slots: facade -------------------------------------------------------------------

    @Slot()
    def _on_server_state_changed(self) -> None:
        if not self._control.running:
            self._session_count = 0
            self._sessions.clear()
        self.refresh()

    @Slot(object)
    def _on_session_opened(self, info: SessionInfo) -> None:
        self._sessions.add_session(info)
        label = " · ".join(part for part in (info.client_name, caller_text(info)) if part)
        if label:
            self._traffic_log.set_session_label(info.id, label)
        self._session_count = self._sessions.rowCount()
        self.refresh_status()

    @Slot(str)
    def _on_session_closed(self, session_id: str) -> None:
        self._sessions.remove_session(session_id)
        self._session_count = self._sessions.rowCount()
        self.refresh_status()

    @Slot(str, str, int)
    def _on_notification_sent(self, method: str, uri: str, recipients: int) -> None:
        self._panel.show_notification_result(method, uri, recipients)
