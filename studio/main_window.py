"""The studio's main window: the one place that wires the document, the server facade and the views."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QMimeData, Qt, QTimer, Slot
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QPixmap
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow, QMessageBox, QScrollArea, QSplitter, QWidget

from resources_qt import __version__
from resources_qt.project import Project
from studio.document import ProjectDocument
from studio.icons import pixmap
from studio.project_files import ProjectFiles
from studio.prompts import UnsavedChoice, dialog_prompts
from studio.recovery import RecoveryCandidate, RecoveryStore
from studio.server_sync import ServerSync
from studio.settings import StudioSettings
from studio.widgets.catalogue import CatalogueView
from studio.widgets.resource_editor import ResourceEditor
from studio.widgets.server_panel import ServerPanel
from studio.widgets.sessions_view import SessionsModel
from studio.widgets.traffic_log import TrafficLog
from studio.window_commands import WindowCommands

logger = logging.getLogger(__name__)

__all__ = ["MainWindow", "UnsavedChoice"]

_NOTIFY_URI_LIMIT = 500


def _default_controller(project: Project) -> Any:
    from resources_qt.qt import ServerController  # noqa: PLC0415 - the engine loads with the window

    return ServerController(project=project)


class MainWindow(QMainWindow):
    """Catalogue, resource editor, server panel and traffic log around one `ProjectDocument`.

    Every prompt is injectable (`ask_unsaved`, `ask_restore`, `ask_open_path`, `ask_save_path`,
    `report_error`) so tests drive the real window without modal dialogs.
    """

    def __init__(
        self,
        *,
        settings: StudioSettings | None = None,
        recovery: RecoveryStore | None = None,
        controller: Any = None,
        ask_unsaved: Callable[[str], UnsavedChoice] | None = None,
        ask_restore: Callable[[RecoveryCandidate], bool] | None = None,
        ask_open_path: Callable[[str], str | None] | None = None,
        ask_save_path: Callable[[str], str | None] | None = None,
        report_error: Callable[[str, str], None] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.settings = settings if settings is not None else StudioSettings(parent=self)
        self.recovery = recovery if recovery is not None else RecoveryStore()
        self._shut_down = False
        self._session_count = 0
        self._server_url = ""
        self._server_failure = ""
        self._completion_serial = 0
        self._completion_requests: dict[str, tuple[str, str]] = {}
        self._project_switched = False  # the next refresh of the notify URIs forgets the old project's

        # -- logic objects ---------------------------------------------------------------
        self.document = ProjectDocument(parent=self)
        self.controller = controller if controller is not None else _default_controller(Project())
        if hasattr(self.controller, "setParent") and self.controller.parent() is None:
            self.controller.setParent(self)
        self.sync = ServerSync(self.document, self.controller, self)
        self.sessions = SessionsModel(self)
        prompts = dialog_prompts(self)
        for field, answer in (("ask_unsaved", ask_unsaved), ("ask_restore", ask_restore),
                              ("ask_open_path", ask_open_path), ("ask_save_path", ask_save_path),
                              ("report_error", report_error)):  # fmt: skip
            if answer is not None:
                setattr(prompts, field, answer)
        self.prompts = prompts

        # -- views --------------------------------------------------------------------------
        self.catalogue = CatalogueView(self.document)
        self.editor = ResourceEditor(self.document)
        self.files = ProjectFiles(
            self.document, settings=self.settings, recovery=self.recovery, prompts=prompts,
            flush_edits=self.editor.flush, parent=self,
        )  # fmt: skip
        self.autosaver = self.files.autosaver

        self.server_panel = ServerPanel(self.sessions)
        self.traffic_log = TrafficLog()
        self._build_layout()
        self._build_commands()
        self._build_status_bar()
        self._wire()

        self.server_panel.set_endpoint(self.settings.http_host(), self.settings.http_port())
        announce = self.settings.announce_edits()
        self.server_panel.set_announce_edits(announce)
        self.controller.announce_edits = announce
        self.resize(1280, 800)
        self.setAcceptDrops(True)
        self._restore_layout()
        self._on_server_dock_moved(self.dockWidgetArea(self.server_dock))
        self._refresh_title()
        self._refresh_server_status()
        self._refresh_project_views()
        self.autosaver.start()

    # -- construction ----------------------------------------------------------------------

    def _build_layout(self) -> None:
        splitter = QSplitter(Qt.Orientation.Horizontal, objectName="mainSplitter")
        splitter.addWidget(self.catalogue)
        splitter.addWidget(self.editor)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([270, 1010])
        splitter.setChildrenCollapsible(False)
        self.setCentralWidget(splitter)

        scroll = QScrollArea(objectName="serverPanelScroll")
        scroll.setWidget(self.server_panel)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.server_dock = QDockWidget("Server", self, objectName="serverDock")
        self.server_dock.setWidget(scroll)
        self.traffic_dock = QDockWidget("Traffic", self, objectName="trafficDock")
        self.traffic_dock.setWidget(self.traffic_log)
        # One bottom tab area keeps the editor wide at 1280x800; docks can still be moved anywhere.
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.server_dock)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.traffic_dock)
        self.tabifyDockWidget(self.server_dock, self.traffic_dock)
        self.server_dock.raise_()
        # Low enough that the preview keeps room at 1280x800; the panel scrolls when it needs more.
        self.resizeDocks([self.server_dock], [215], Qt.Orientation.Vertical)
        self._default_state = self.saveState()

    def _build_commands(self) -> None:
        catalogue = self.catalogue
        self.commands = WindowCommands(
            self, undo_stack=self.document.undo_stack, docks=[self.server_dock, self.traffic_dock],
            catalogue_actions=[catalogue.add_resource_action, catalogue.add_template_action,
                               catalogue.duplicate_action, catalogue.delete_action],
        )  # fmt: skip
        self.commands.install()
        self.commands.rebuild_recent_menu(self.settings.recent_files())

    def _build_status_bar(self) -> None:
        self.status_label = QLabel(objectName="serverStatus")
        self.status_label.setToolTip("Server state")
        self.errors_label = QLabel(objectName="errorStatus")
        self.errors_label.setToolTip("Resources whose form or snippet has errors")
        self.errors_label.setStyleSheet("color: #b71c1c;")
        self.status_icon = QLabel(objectName="serverStatusIcon")
        self.statusBar().addPermanentWidget(self.errors_label)
        self.statusBar().addPermanentWidget(self.status_icon)
        self.statusBar().addPermanentWidget(self.status_label)

    def _wire(self) -> None:
        doc, ctl, panel, editor = self.document, self.controller, self.server_panel, self.editor
        # document -> window / views (the catalogue and editor listen to the document themselves)
        doc.dirty_changed.connect(self._on_dirty_changed)
        doc.path_changed.connect(self._on_path_changed)
        doc.project_reset.connect(self._on_settings_changed)
        doc.project_reset.connect(self._on_project_reset)
        doc.settings_changed.connect(self._on_settings_changed)
        for signal in (doc.project_reset, doc.resource_added, doc.resource_removed, doc.resource_changed,
                       doc.settings_changed):  # fmt: skip
            signal.connect(self._on_catalogue_edited)
        self.catalogue.resource_selected.connect(self._on_resource_selected)
        self.server_dock.dockLocationChanged.connect(self._on_server_dock_moved)
        self.sync.apply_failed.connect(self._on_apply_failed)
        self.settings.recent_files_changed.connect(self.commands.rebuild_recent_menu)
        commands = self.commands
        commands.recent_file_chosen.connect(self._on_recent_file_chosen)
        commands.recent_files_cleared.connect(self.settings.clear_recent_files)
        for action, slot in (
            (commands.new, self._on_new_triggered), (commands.open, self._on_open_triggered),
            (commands.save, self._on_save_triggered), (commands.save_as, self._on_save_as_triggered),
            (commands.quit, self.close), (commands.preview, self._on_preview_triggered),
            (commands.server, self._on_server_action_triggered),
            (commands.list_changed, self._on_list_changed_triggered),
            (commands.updated, self._on_updated_triggered),
            (commands.reset_layout, self._on_reset_layout_triggered),
            (commands.about, self._on_about_triggered),
        ):  # fmt: skip
            action.triggered.connect(slot)
        self.autosaver.autosave_failed.connect(self._on_autosave_failed)
        self.files.project_opened.connect(self._on_project_opened)
        self.files.label_changed.connect(self._on_label_changed)
        self.files.message_posted.connect(self._on_message_posted)

        # editor <-> facade
        editor.preview.preview_requested.connect(ctl.preview)
        editor.preview.completion_requested.connect(self._on_completion_requested)
        ctl.preview_finished.connect(editor.preview.show_outcome)
        ctl.completions_ready.connect(self._on_completions_ready)
        ctl.snippet_output.connect(self._on_snippet_output)

        # server panel -> facade (through the window, which also remembers preferences)
        panel.start_requested.connect(self._on_start_requested)
        panel.stop_requested.connect(self._on_stop_requested)
        panel.capabilities_changed.connect(self._on_capabilities_changed)
        panel.announce_edits_changed.connect(self._on_announce_edits_changed)
        panel.list_changed_requested.connect(ctl.send_resources_changed)
        panel.updated_requested.connect(ctl.send_resource_updated)
        panel.session_updated_requested.connect(ctl.send_resource_updated_for_session)
        panel.token_edit.textChanged.connect(self._on_token_changed)

        # facade -> views
        ctl.server_started.connect(self._on_server_started)
        ctl.server_stopped.connect(self._on_server_stopped)
        ctl.server_failed.connect(self._on_server_failed)
        ctl.session_opened.connect(self._on_session_opened)
        ctl.session_closed.connect(self._on_session_closed)
        ctl.subscription_added.connect(self.sessions.add_subscription)
        ctl.subscription_removed.connect(self.sessions.remove_subscription)
        ctl.traffic_logged.connect(self.traffic_log.add_entries)
        ctl.notification_sent.connect(self._on_notification_sent)

        # notifyUri choices change with the catalogue; rebuild them once per burst of edits
        self._notify_uris_timer = QTimer(self, singleShot=True, interval=150)
        self._notify_uris_timer.timeout.connect(self._on_refresh_project_views)

    # -- projects (the file side lives in ProjectFiles) ---------------------------------

    def open_initial(self, path: Path | None) -> None:
        """At start-up: the given project, else the last one, else the bundled example."""
        self.files.open_initial(path)

    def open_project(self, path: str | Path, *, ask_to_save: bool = True) -> bool:
        """Open a project file (offering its recovery file after a crash); False if cancelled or failed."""
        return self.files.open_project(path, ask_to_save=ask_to_save)

    def open_example(self, path: Path) -> bool:
        return self.files.open_example(path)

    def new_project(self) -> bool:
        return self.files.new_project()

    def save(self) -> bool:
        return self.files.save()

    def save_as(self, path: str | Path | None = None) -> bool:
        return self.files.save_as(path)

    def maybe_save(self) -> bool:
        return self.files.maybe_save()

    # -- server ----------------------------------------------------------------------------

    def start_http(self, host: str = "127.0.0.1", port: int = 8765, token: str | None = None) -> None:
        self.server_panel.set_endpoint(host, port)
        self._on_start_requested(host, port, token or "")

    def start_stdio(self) -> None:
        """Serve the client that launched the studio over stdin/stdout while the window is open."""
        self.server_panel.set_busy()
        self.controller.start_stdio()

    def shutdown(self) -> None:
        """Stop the server and the snippet workers (idempotent; the app calls it on exit)."""
        if self._shut_down:
            return
        self._shut_down = True
        self.autosaver.stop()
        try:
            self.controller.shutdown()
        except Exception:
            logger.exception("server shutdown failed")

    # -- window layout -------------------------------------------------------------------

    def _restore_layout(self) -> None:
        geometry, state = self.settings.window_geometry(), self.settings.window_state()
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt override
        if self._dropped_project(event.mimeData()) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt override
        path = self._dropped_project(event.mimeData())
        if path is not None:
            event.acceptProposedAction()
            self.open_project(path)

    @staticmethod
    def _dropped_project(data: QMimeData) -> Path | None:
        urls = [url for url in data.urls() if url.isLocalFile()] if data.hasUrls() else []
        if len(urls) == 1 and urls[0].toLocalFile().endswith(".toml"):
            return Path(urls[0].toLocalFile())
        return None

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        if not self.maybe_save():
            event.ignore()
            return
        self.settings.save_window(self.saveGeometry(), self.saveState())
        if self.document.path is not None:
            self.settings.set_last_project(self.document.path)
        self.files.discard_recovery()
        self.settings.sync()
        self.shutdown()
        event.accept()

    # -- refreshers ----------------------------------------------------------------------

    def _refresh_title(self) -> None:
        self.setWindowTitle(f"{self.files.label()}[*] — Resource Studio")
        self.setWindowModified(self.document.is_dirty)
        if self.document.path is not None:
            self.setWindowFilePath(str(self.document.path))

    def _refresh_server_status(self) -> None:
        running = bool(self._server_url)
        if running:
            where = self._server_url if self._server_url.startswith("http") else f"over {self._server_url}"
            count = self._session_count
            text = f"Serving {where} · {count} session{'s' if count != 1 else ''}"
        else:
            text = f"Failed: {self._server_failure}" if self._server_failure else "Stopped"
        self.status_label.setText(text)
        marker = "start-server" if running else ("error" if self._server_failure else "")
        self.status_icon.setPixmap(pixmap(marker, 14, device_pixel_ratio=self.devicePixelRatioF()) if marker
                                   else QPixmap())  # fmt: skip
        self.commands.set_serving(running)
        server = self.document.project.server
        self.commands.list_changed.setEnabled(running and server.notifications)
        self.commands.updated.setEnabled(running and server.subscriptions)

    def _refresh_project_views(self) -> None:
        server = self.document.project.server
        self.server_panel.set_capabilities(server.notifications, server.subscriptions)
        resources = self.document.project.resources
        direct = [spec.uri for spec in resources if spec.uri]
        samples = [uri for spec in resources if spec.uri_template for uri in spec.samples]
        self.server_panel.set_direct_uris(direct[:_NOTIFY_URI_LIMIT], samples=samples[:_NOTIFY_URI_LIMIT],
                                          reset=self._project_switched)  # fmt: skip
        self._project_switched = False
        self.server_panel.client_config.update_config(
            server_name=server.name,
            url=self._server_url if self._server_url.startswith("http") else None,
            token=self.server_panel.token_edit.text().strip() or None,
            project_path=self.document.path,
        )
        held, failing = self.sync.held_back(), self.sync.failing()
        parts = ([f"{len(held)} with errors (not served)"] if held else []) + (
            [f"{len(failing)} with snippet errors (failing)"] if failing else []
        )
        self.errors_label.setText(" · ".join(parts))
        tips = (["Not served until the form is fixed (the last valid one is):", *held[:20]] if held else []) + (
            ["Served, but reads fail with the snippet's error:", *failing[:20]] if failing else []
        )
        self.errors_label.setToolTip("\n".join(tips))
        self._refresh_server_status()

    # -- slots: document and views -----------------------------------------------------

    @Slot(bool)
    def _on_dirty_changed(self, _dirty: bool) -> None:
        self._refresh_title()

    @Slot(str)
    def _on_path_changed(self, _path: str) -> None:
        self._refresh_title()
        self._notify_uris_timer.start()

    @Slot()
    def _on_project_reset(self) -> None:
        self._project_switched = True

    @Slot()
    def _on_catalogue_edited(self) -> None:
        self._notify_uris_timer.start()

    @Slot(Qt.DockWidgetArea)
    def _on_server_dock_moved(self, area: Qt.DockWidgetArea) -> None:
        sides = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea)
        self.server_panel.set_stacked(area in sides)

    @Slot()
    def _on_project_opened(self) -> None:
        names = self.document.names()
        if names:
            self.catalogue.select(names[0])

    @Slot()
    def _on_label_changed(self) -> None:
        self._refresh_title()

    @Slot(str, int)
    def _on_message_posted(self, text: str, timeout_ms: int) -> None:
        self.statusBar().showMessage(text, timeout_ms)

    @Slot(str)
    def _on_token_changed(self, _token: str) -> None:
        self._notify_uris_timer.start()  # the HTTP client configurations carry the token

    @Slot()
    def _on_refresh_project_views(self) -> None:
        self._refresh_project_views()

    @Slot()
    def _on_settings_changed(self) -> None:
        # Capabilities are advertised at start, so they follow the project only while stopped.
        server = self.document.project.server
        if not self._server_url:
            self.controller.set_capabilities(server.notifications, server.subscriptions)
        self.server_panel.set_capabilities(server.notifications, server.subscriptions)

    @Slot(str)
    def _on_resource_selected(self, name: str) -> None:
        self.editor.show_resource(name)

    @Slot(str, str, str, dict)
    def _on_completion_requested(self, resource: str, variable: str, value: str, context: dict) -> None:
        self._completion_serial += 1
        request_id = str(self._completion_serial)
        self._completion_requests[request_id] = (resource, variable)
        self.controller.complete(request_id, resource, variable, value, context)

    @Slot(str, list)
    def _on_completions_ready(self, request_id: str, values: list) -> None:
        resource, variable = self._completion_requests.pop(request_id, ("", ""))
        # Answers to older requests, or for a resource no longer shown, are stale.
        if resource and resource == self.editor.resource_name and int(request_id) == self._completion_serial:
            self.editor.preview.set_completions(variable, [str(value) for value in values])

    @Slot(str, str)
    def _on_snippet_output(self, key: str, text: str) -> None:
        name = self.editor.resource_name
        spec = self.document.peek(name) if name else None
        if spec is not None and key in (name, spec.key):
            self.editor.append_output(text)

    @Slot(str)
    def _on_apply_failed(self, message: str) -> None:
        self.statusBar().showMessage(f"Not served: {message}", 8000)

    @Slot(str)
    def _on_autosave_failed(self, message: str) -> None:
        self.statusBar().showMessage(f"Autosave failed: {message}", 8000)

    @Slot(str)
    def _on_recent_file_chosen(self, path: str) -> None:
        if not Path(path).is_file():
            self.settings.remove_recent_file(path)
            self.prompts.report_error("Cannot open project", f"{path} no longer exists")
            return
        self.open_project(path)

    @Slot()
    def _on_new_triggered(self) -> None:
        self.new_project()

    @Slot()
    def _on_open_triggered(self) -> None:
        self.files.ask_and_open()

    @Slot()
    def _on_save_triggered(self) -> None:
        self.save()

    @Slot()
    def _on_save_as_triggered(self) -> None:
        self.save_as()

    @Slot()
    def _on_preview_triggered(self) -> None:
        if not self.editor.resource_name:
            self.statusBar().showMessage("Select a resource to preview first", 4000)
            return
        self.editor.bottom_tabs.setCurrentWidget(self.editor.preview)
        self.editor.preview.read_button.click()

    @Slot()
    def _on_about_triggered(self) -> None:
        rows = "".join(f"<tr><td>{text}</td><td>&nbsp;&nbsp;<b>{keys}</b></td></tr>"
                       for text, keys in self.commands.shortcuts())  # fmt: skip
        QMessageBox.about(self, "About Resource Studio",
                          f"<h3>Resource Studio {__version__}</h3><p>Design and live-serve MCP resources.</p>"
                          f"<table>{rows}</table>")  # fmt: skip

    @Slot()
    def _on_reset_layout_triggered(self) -> None:
        self.restoreState(self._default_state)
        for dock in (self.server_dock, self.traffic_dock):
            dock.show()

    # -- slots: server -----------------------------------------------------------------

    @Slot()
    def _on_server_action_triggered(self) -> None:
        if self._server_url or self.server_panel.is_running:
            self._on_stop_requested()
        else:
            panel = self.server_panel
            self._on_start_requested(panel.host_edit.text().strip() or "127.0.0.1", panel.port_spin.value(),
                                     panel.token_edit.text().strip())  # fmt: skip

    @Slot(str, int, str)
    def _on_start_requested(self, host: str, port: int, token: str) -> None:
        self.settings.save_http_endpoint(host, port)
        self._server_failure = ""
        self.server_panel.set_busy()
        self.status_label.setText(f"Starting on {host}:{port}…")
        self.controller.start_http(host, port, token or None)

    @Slot()
    def _on_stop_requested(self) -> None:
        self.server_panel.set_busy()
        self.status_label.setText("Stopping…")
        self.controller.stop()

    @Slot(bool, bool)
    def _on_capabilities_changed(self, notifications: bool, subscriptions: bool) -> None:
        server = self.document.project.server
        changed = replace(server, notifications=notifications, subscriptions=subscriptions)
        self.document.set_server_settings(changed)

    @Slot(bool)
    def _on_announce_edits_changed(self, value: bool) -> None:
        self.controller.announce_edits = value
        self.settings.set_announce_edits(value)

    @Slot()
    def _on_list_changed_triggered(self) -> None:
        self.controller.send_resources_changed()

    @Slot()
    def _on_updated_triggered(self) -> None:
        uri = self.server_panel.notify_uri.currentText().strip()
        if uri:
            self.controller.send_resource_updated(uri)
        else:
            self.statusBar().showMessage("Choose a URI to announce in the server panel first", 5000)

    @Slot(str)
    def _on_server_started(self, url: str) -> None:
        self._server_url = url
        self._server_failure = ""
        self.server_panel.set_running(url)
        self._refresh_project_views()

    @Slot()
    def _on_server_stopped(self) -> None:
        self._server_url = ""
        self._session_count = 0
        self.sessions.clear()
        self.server_panel.set_stopped()
        self._refresh_server_status()

    @Slot(str)
    def _on_server_failed(self, message: str) -> None:
        self._server_url = ""
        self._server_failure = message
        self._session_count = 0
        self.sessions.clear()
        self.server_panel.set_stopped(message)
        self.statusBar().showMessage(f"Server failed: {message}", 10000)
        self._refresh_server_status()

    @Slot(object)
    def _on_session_opened(self, info: Any) -> None:
        self.sessions.add_session(info)
        if getattr(info, "client_name", ""):
            self.traffic_log.set_session_label(info.id, info.client_name)
        self._session_count = self.sessions.rowCount()
        self._refresh_server_status()

    @Slot(str)
    def _on_session_closed(self, session_id: str) -> None:
        self.sessions.remove_session(session_id)
        self._session_count = self.sessions.rowCount()
        self._refresh_server_status()

    @Slot(str, str, int)
    def _on_notification_sent(self, method: str, uri: str, recipients: int) -> None:
        self.server_panel.show_notification_result(method, uri, recipients)
