"""The studio's main window: the one place that wires the document, the server facade and the views."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from PySide6.QtCore import QByteArray, QEvent, QMimeData, QObject, Qt, QTimer, Slot
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QPixmap, QShowEvent
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QWidget,
)

from resources_qt import __version__
from resources_qt.errors import ValidationError
from resources_qt.project import Project
from resources_qt.qt.protocol import StudioController
from studio.catalogue.catalogue import CatalogueView
from studio.document.document import ProjectDocument
from studio.document.project_files import ProjectFiles
from studio.document.recovery import RecoveryCandidate, RecoveryStore
from studio.document.snippet_sweep import SnippetSweep
from studio.look.icons import pixmap
from studio.look.theme import apply_theme, status_colors
from studio.preview.snippet_output import OutputBlock
from studio.serving.server_control import ServerControl
from studio.serving.server_panel import ServerPanel
from studio.serving.server_sync import ServerSync
from studio.serving.sessions_view import SessionsModel
from studio.serving.traffic_log import TrafficLog
from studio.shell.prompts import UnsavedChoice, dialog_prompts
from studio.shell.resource_editor import ResourceEditor
from studio.shell.settings import StudioSettings
from studio.shell.window_commands import PAGES, WindowCommands

if TYPE_CHECKING:
    from resources_qt.qt import PreviewOutcome, SessionInfo
    from studio.settings_page.project_settings import ProjectSettingsView
    from studio.tests_page.tests_view import TestsView

logger = logging.getLogger(__name__)

__all__ = ["MainWindow", "UnsavedChoice"]

_NOTIFY_URI_LIMIT = 500
_WARM_UP_FALLBACK_MS = 3000
_PAGE_KEYS = tuple(key for key, _, _ in PAGES)


def _default_controller(project: Project) -> StudioController:
    from resources_qt.qt.controller import ServerController

    return ServerController(project=project)


class MainWindow(QMainWindow):
    """Five pages around one `ProjectDocument`: the editor (catalogue, code, preview), server, traffic, settings
    and tests.

    The editor page gives the code the centre: the catalogue at the left, the
    snippet editors in the middle, the preview and snippet output at the right,
    and the builder form as a panel shown on demand (Ctrl+B). The pages switch
    from the toolbar's right end or with Ctrl+1…5; F11 / Ctrl+Shift+M leaves
    only the code. Every prompt is injectable (`ask_unsaved`, `ask_restore`,
    `ask_open_path`, `ask_save_path`, `report_error`) so tests drive the real
    window without modal dialogs. No signals of its own.
    """

    def __init__(
        self,
        *,
        settings: StudioSettings | None = None,
        recovery: RecoveryStore | None = None,
        controller: StudioController | None = None,
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
        self._completion_serial = 0
        self._completion_requests: dict[str, tuple[str, str]] = {}
        self._project_switched = False  # the next refresh of the notify URIs forgets the old project's
        self._pending_splitters: dict[str, QByteArray] = {}
        self._warm_up_asked = False  # the first show arranges the warm-up
        self._warmed_up = False

        # -- logic objects ---------------------------------------------------------------
        self.document = ProjectDocument(parent=self)
        self.controller = controller if controller is not None else _default_controller(Project())
        if self.controller.parent() is None:
            self.controller.setParent(self)
        self.sync = ServerSync(self.document, self.controller, self)
        self.snippet_sweep = SnippetSweep(self.document, self)
        self.sessions = SessionsModel(self)
        prompts = dialog_prompts(self)
        if ask_unsaved is not None:
            prompts.ask_unsaved = ask_unsaved
        if ask_restore is not None:
            prompts.ask_restore = ask_restore
        if ask_open_path is not None:
            prompts.ask_open_path = ask_open_path
        if ask_save_path is not None:
            prompts.ask_save_path = ask_save_path
        if report_error is not None:
            prompts.report_error = report_error
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
        # Which transports are served (HTTP, stdio, both), starting, stopping and restarting them.
        # The prompt is looked up per call: tests and embedders replace `prompts.report_error` later.
        report = lambda title, message: self.prompts.report_error(title, message)  # noqa: E731, PLW0108
        self.server_control = ServerControl(controller=self.controller, panel=self.server_panel,
                                            settings=self.settings, report_error=report, parent=self)  # fmt: skip
        self.traffic_log = TrafficLog()
        # The Tests and Project Settings pages are built when first shown or asked for (the settings
        # page also when a server starts: it marks what needs a restart from then on). The first
        # paint shows neither, and the Tests page's runner brings the SDK's client types.
        self._tests_view: TestsView | None = None
        self._project_settings: ProjectSettingsView | None = None
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
        self._refresh_title()
        self._refresh_server_status()
        self._refresh_project_views()
        self.autosaver.start()

    # -- construction ----------------------------------------------------------------------

    def _build_layout(self) -> None:
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setObjectName("mainSplitter")
        splitter.addWidget(self.catalogue)
        splitter.addWidget(self.editor)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([250, 1030])
        splitter.setChildrenCollapsible(False)
        self.main_splitter = splitter

        # The server and settings pages scroll when the window is smaller than what they show.
        server_scroll = QScrollArea()
        server_scroll.setObjectName("serverPanelScroll")
        server_scroll.setWidget(self.server_panel)
        server_scroll.setWidgetResizable(True)
        server_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        settings_scroll = QScrollArea()
        settings_scroll.setObjectName("projectSettingsScroll")
        settings_scroll.setWidgetResizable(True)
        settings_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        tests_placeholder = QWidget()
        tests_placeholder.setObjectName("testsPagePlaceholder")
        self.pages = QStackedWidget()
        self.pages.setObjectName("workspacePages")
        self._page_widgets: dict[str, QWidget] = {
            "editor": splitter, "server": server_scroll, "traffic": self.traffic_log, "settings": settings_scroll,
            "tests": tests_placeholder,
        }  # fmt: skip
        for key in _PAGE_KEYS:
            self.pages.addWidget(self._page_widgets[key])
        self.setCentralWidget(self.pages)

    def _build_commands(self) -> None:
        catalogue = self.catalogue
        self.commands = WindowCommands(
            self, undo_stack=self.document.undo_stack,
            catalogue_actions=[catalogue.add_resource_action, catalogue.add_template_action,
                               catalogue.duplicate_action, catalogue.delete_action],
        )  # fmt: skip
        self.commands.install()
        self.commands.rebuild_recent_menu(self.settings.recent_files())
        self.commands.set_theme(self.settings.theme())
        self.commands.set_page("editor")

    def _build_status_bar(self) -> None:
        self.status_label = QLabel()
        self.status_label.setObjectName("serverStatus")
        self.status_label.setToolTip("Server state")
        self.errors_label = QLabel()
        self.errors_label.setObjectName("errorStatus")
        self.errors_label.setToolTip("Resources whose form or snippet has errors")
        self.status_icon = QLabel()
        self.status_icon.setObjectName("serverStatusIcon")
        self.statusBar().addPermanentWidget(self.errors_label)
        self.statusBar().addPermanentWidget(self.status_icon)
        self.statusBar().addPermanentWidget(self.status_label)
        self._apply_colors()

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
        self.editor.builder_toggled.connect(self._on_builder_toggled)
        # A new resource needs a name and an address first: adding one opens the builder.
        self.catalogue.add_resource_action.triggered.connect(self._on_resource_created)
        self.catalogue.add_template_action.triggered.connect(self._on_resource_created)
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
        commands.builder.toggled.connect(self.editor.set_builder_visible)
        commands.focus_mode.toggled.connect(self._on_focus_mode_toggled)
        commands.word_wrap.toggled.connect(self._on_word_wrap_toggled)
        commands.page_chosen.connect(self.show_page)
        commands.theme_chosen.connect(self._on_theme_chosen)
        self.autosaver.autosave_failed.connect(self._on_autosave_failed)
        self.files.project_opened.connect(self._on_project_opened)
        self.files.label_changed.connect(self._on_label_changed)
        self.files.message_posted.connect(self._on_message_posted)

        # editor <-> facade
        editor.preview.preview_requested.connect(ctl.preview)
        editor.preview.completion_requested.connect(self._on_completion_requested)
        editor.preview.add_test_requested.connect(self._on_add_test_requested)
        self.document.tests_changed.connect(self._on_tests_changed)
        ctl.preview_finished.connect(editor.preview.show_outcome)
        ctl.completions_ready.connect(self._on_completions_ready)
        # One block per read (time, URI, streams in order); the plain snippet_output stream is for scripts.
        ctl.read_output.connect(self._on_read_output)

        # server panel -> facade (Start / Stop go through ServerControl, which also remembers the endpoint)
        panel.capabilities_changed.connect(self._on_capabilities_changed)
        panel.announce_edits_changed.connect(self._on_announce_edits_changed)
        panel.list_changed_requested.connect(ctl.send_resources_changed)
        panel.updated_requested.connect(ctl.send_resource_updated)
        panel.session_updated_requested.connect(ctl.send_resource_updated_for_session)
        panel.token_changed.connect(self._on_token_changed)

        # facade -> views
        self.server_control.state_changed.connect(self._on_server_state_changed)
        self.server_control.progress.connect(self.status_label.setText)
        self.server_control.message_posted.connect(self._on_message_posted)
        ctl.session_opened.connect(self._on_session_opened)
        ctl.session_closed.connect(self._on_session_closed)
        ctl.subscription_added.connect(self.sessions.add_subscription)
        ctl.subscription_removed.connect(self.sessions.remove_subscription)
        ctl.traffic_logged.connect(self.traffic_log.add_entries)
        ctl.notification_sent.connect(self._on_notification_sent)
        ctl.data_changed.connect(self.catalogue.note_data_changed)
        ctl.bus_state_changed.connect(self.server_panel.set_bus_state)
        ctl.instances_failed.connect(self.catalogue.note_instances_failed)
        ctl.instances_listed.connect(self.catalogue.note_instances_listed)

        # notifyUri choices change with the catalogue; rebuild them once per burst of edits
        self._notify_uris_timer = QTimer(self)
        self._notify_uris_timer.setSingleShot(True)
        self._notify_uris_timer.setInterval(150)
        self._notify_uris_timer.timeout.connect(self._on_refresh_project_views)
        self.snippet_sweep.swept.connect(self._on_snippets_swept)

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
        """Serve HTTP (beside stdio, if it is served)."""
        self.server_panel.set_endpoint(host, port)
        self.server_control.start_http(host, port, token or "")

    def start_stdio(self, *, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        """Serve the client that launched the studio over stdin/stdout (or the given pipes) while the window is open.

        HTTP can be started beside it from the Server page; stopping HTTP leaves stdio serving.
        """
        self.server_control.start_stdio(stdin=stdin, stdout=stdout)

    def restart_server(self) -> bool:
        """Stop the server and start every transport it served again, HTTP on the same host and port.

        False if not running.
        """
        return self.server_control.restart()

    # -- pages and layout ------------------------------------------------------------

    @property
    def current_page(self) -> str:
        widget = self.pages.currentWidget()
        return next((key for key, page in self._page_widgets.items() if page is widget), "editor")

    @Slot(str)
    def show_page(self, key: str) -> None:
        """Show one of the window's pages: "editor", "server", "traffic", "settings" or "tests"."""
        if key not in self._page_widgets:
            raise ValueError(f"page: expected one of {', '.join(_PAGE_KEYS)}, got {key!r}")
        if key == "tests":
            self._build_tests_page()
        elif key == "settings":
            self._build_settings_page()
        self.pages.setCurrentWidget(self._page_widgets[key])
        self.commands.set_page(key)

    @property
    def tests_view(self) -> TestsView:
        """The Tests page, built on first use (showing the page, or asking for it)."""
        return self._build_tests_page()

    @property
    def project_settings(self) -> ProjectSettingsView:
        """The Project Settings page, built on first use."""
        return self._build_settings_page()

    def _build_settings_page(self) -> ProjectSettingsView:
        if self._project_settings is None:
            from studio.settings_page.project_settings import ProjectSettingsView

            view = ProjectSettingsView(self.document)
            view.restart_requested.connect(self._on_restart_requested)
            scroll = self._page_widgets["settings"]
            if isinstance(scroll, QScrollArea):
                scroll.setWidget(view)
            self._project_settings = view
        return self._project_settings

    def _build_tests_page(self) -> TestsView:
        if self._tests_view is None:
            from studio.tests_page.tests_view import TestsView

            view = TestsView(self.document)
            view.set_current_resource(self.editor.resource_name or None)
            view.run_finished.connect(self._on_tests_run_finished)
            placeholder = self._page_widgets["tests"]
            shown = self.pages.currentWidget() is placeholder
            self.pages.insertWidget(self.pages.indexOf(placeholder), view)
            self.pages.removeWidget(placeholder)
            placeholder.deleteLater()
            self._page_widgets["tests"] = view
            if shown:
                self.pages.setCurrentWidget(view)
            self._tests_view = view
        return self._tests_view

    @property
    def focus_mode(self) -> bool:
        return self.commands.focus_mode.isChecked()

    def set_focus_mode(self, on: bool) -> None:
        """Distraction-free: the code editor alone (F11 or Ctrl+Shift+M toggles it)."""
        self.commands.focus_mode.setChecked(on)

    def set_theme(self, name: str, *, remember: bool = True) -> None:
        """Apply "system", "light" or "dark" to the application (and remember it for the next start)."""
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, name)
        self.commands.set_theme(name)
        if remember:
            self.settings.set_theme(name)

    def shutdown(self) -> None:
        """Stop the server and the snippet workers (idempotent; the app calls it on exit)."""
        if self._shut_down:
            return
        self._shut_down = True
        self.autosaver.stop()
        try:
            if self._tests_view is not None:
                self._tests_view.shutdown()
        except Exception:
            logger.exception("stopping the test run failed")
        try:
            self.controller.shutdown()
        except Exception:
            logger.exception("server shutdown failed")

    # -- window layout -------------------------------------------------------------------

    def _restore_layout(self) -> None:
        settings = self.settings
        geometry, state = settings.window_geometry(), settings.window_state()
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state)
        # Which panels show first, then their sizes: showing a panel later would share its room out again.
        self.commands.builder.setChecked(settings.layout_flag("builder", False))
        # Splitter sizes are restored once the window has its size (see showEvent): restored into an
        # unsized splitter, they would be squeezed and then shared out again by the stretch factors.
        self._pending_splitters = {name: value for name in ("main", "editor", "side")
                                   if (value := settings.splitter_state(name)) is not None}  # fmt: skip
        self.commands.word_wrap.setChecked(settings.layout_flag("word_wrap", False))
        self.editor.set_word_wrap(self.commands.word_wrap.isChecked())
        self.commands.focus_mode.setChecked(settings.layout_flag("focus", False))
        page = settings.workspace_page()
        self.show_page(page if page in _PAGE_KEYS else "editor")

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._warm_up_asked:
            # After the first paint: the snippet workers start while the user looks, not on the first
            # Read, and not before the window is on screen (spawning them competes with the paint).
            self._warm_up_asked = True
            handle = self.windowHandle()
            if handle is not None:
                handle.installEventFilter(self)
            # A window that is never exposed (minimised at start, some platforms) warms up anyway.
            QTimer.singleShot(_WARM_UP_FALLBACK_MS, self, self._on_warm_up)
        if self._pending_splitters:
            pending, self._pending_splitters = self._pending_splitters, {}
            layout = self.layout()
            if layout is not None:
                layout.activate()
            main = pending.pop("main", None)
            if main is not None:
                self.main_splitter.restoreState(main)
            self.editor.restore_splitter_states(pending)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        handle = self.windowHandle()
        if (watched is handle and handle is not None and event.type() == QEvent.Type.Expose
                and handle.isExposed()):  # fmt: skip
            handle.removeEventFilter(self)
            QTimer.singleShot(0, self, self._on_warm_up)  # after this expose has painted the window
        return super().eventFilter(watched, event)

    @Slot()
    def _on_warm_up(self) -> None:
        handle = self.windowHandle()
        if handle is not None:
            handle.removeEventFilter(self)  # the fallback timer came first: the expose watch is done too
        if not self._shut_down and not self._warmed_up:
            self._warmed_up = True
            self.controller.warm_up()

    def _save_layout(self) -> None:
        settings = self.settings
        settings.save_window(self.saveGeometry(), self.saveState())
        settings.set_splitter_state("main", self.main_splitter.saveState())
        for name, value in self.editor.splitter_states().items():
            settings.set_splitter_state(name, value)
        settings.set_layout_flag("builder", self.commands.builder.isChecked())
        settings.set_layout_flag("word_wrap", self.commands.word_wrap.isChecked())
        settings.set_layout_flag("focus", self.focus_mode)
        settings.set_workspace_page(self.current_page)

    def _apply_colors(self) -> None:
        css = f"QLabel#errorStatus {{ color: {status_colors(self.palette()).error_text.name()}; }}"
        if self.errors_label.styleSheet() != css:
            self.errors_label.setStyleSheet(css)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._apply_colors()

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if self._dropped_project(event.mimeData()) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
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

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.maybe_save():
            event.ignore()
            return
        self._save_layout()
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
        control = self.server_control
        running = control.running
        if running:
            count = self._session_count
            text = f"Serving {control.where()} · {count} session{'s' if count != 1 else ''}"
        else:
            text = f"Failed: {control.failure}" if control.failure else "Stopped"
        self.status_label.setText(text)
        marker = "start-server" if running else ("error" if control.failure else "")
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
        self.server_panel.update_client_config(
            server_name=server.name,
            url=self.server_control.http_url or None,
            project_path=self.document.path,
        )
        self._refresh_errors_status()
        self.snippet_sweep.start()  # the count above grows to the full one as the sweep checks the rest
        self._refresh_server_status()

    def _refresh_errors_status(self) -> None:
        held, failing = self.sync.unserved_and_failing()
        parts = ([f"{len(held)} with errors (not served)"] if held else []) + (
            [f"{len(failing)} with snippet errors (failing)"] if failing else []
        )
        self.errors_label.setText(" · ".join(parts))
        tips = (["Not served until the form is fixed (the last valid one is):", *held[:20]] if held else []) + (
            ["Served, but reads fail with the snippet's error:", *failing[:20]] if failing else []
        )
        self.errors_label.setToolTip("\n".join(tips))

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
    def _on_snippets_swept(self) -> None:
        self._refresh_errors_status()

    @Slot()
    def _on_settings_changed(self) -> None:
        # Capabilities are advertised at start, so they follow the project only while stopped.
        server = self.document.project.server
        if not self.server_control.running:
            self.controller.set_capabilities(server.notifications, server.subscriptions)
        self.server_panel.set_capabilities(server.notifications, server.subscriptions)

    @Slot(str)
    def _on_resource_selected(self, name: str) -> None:
        self.editor.show_resource(name)
        if self._tests_view is not None:
            self._tests_view.set_current_resource(name or None)
        spec = self.document.spec(name) if name else None
        samples = spec.sample_uris() if spec is not None else []
        # The notify field offers what is being edited: its address, or a template's first sample.
        self.server_panel.set_current_uri(spec.uri or (samples[0] if samples else "") if spec is not None else "")

    @Slot(str, str, str, dict)
    def _on_completion_requested(self, resource: str, variable: str, value: str, context: Mapping[str, str]) -> None:
        self._completion_serial += 1
        request_id = str(self._completion_serial)
        self._completion_requests[request_id] = (resource, variable)
        self.controller.complete(request_id, resource, variable, value, context)

    @Slot(str, list)
    def _on_completions_ready(self, request_id: str, values: list[object]) -> None:
        resource, variable = self._completion_requests.pop(request_id, ("", ""))
        # Answers to older requests, or for a resource no longer shown, are stale.
        if resource and resource == self.editor.resource_name and int(request_id) == self._completion_serial:
            self.editor.preview.set_completions(variable, [str(value) for value in values])

    def _shows_key(self, key: str) -> bool:
        name = self.editor.resource_name
        spec = self.document.peek(name) if name else None
        return spec is not None and key in (name, spec.key)

    @Slot(object)
    def _on_read_output(self, output: OutputBlock) -> None:
        if self._shows_key(output.key):
            self.editor.add_output_block(OutputBlock(output.key, output.uri, output.started, tuple(output.chunks)))

    @Slot(object)
    def _on_add_test_requested(self, outcome: PreviewOutcome) -> None:
        from studio.preview.recorded_tests import add_test_from_outcome  # the SDK's types, for the first recording only

        try:
            spec = add_test_from_outcome(self.document, outcome)
        except (ValidationError, OSError) as exc:
            self.prompts.report_error("Add as test", str(exc))
            return
        self.statusBar().showMessage(f"Added test {spec.name!r}; it runs on the Tests page (Ctrl+5)", 8000)

    @Slot()
    def _on_tests_changed(self) -> None:
        if self._tests_view is not None:  # a page built later reads the tests then
            self._tests_view.refresh()

    @Slot(int, int)
    def _on_tests_run_finished(self, passed: int, failed: int) -> None:
        self.statusBar().showMessage(f"Tests: {passed} passed, {failed} failed", 8000)

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
        self.show_page("editor")
        self.editor.show_preview()
        self.editor.preview.read()

    @Slot()
    def _on_about_triggered(self) -> None:
        rows = "".join(f"<tr><td>{text}</td><td>&nbsp;&nbsp;<b>{keys}</b></td></tr>"
                       for text, keys in self.commands.shortcuts())  # fmt: skip
        QMessageBox.about(self, "About Resource Studio",
                          f"<h3>Resource Studio {__version__}</h3><p>Design and live-serve MCP resources.</p>"
                          f"<table>{rows}</table>")  # fmt: skip

    @Slot()
    def _on_reset_layout_triggered(self) -> None:
        self.settings.clear_layout()
        self.commands.focus_mode.setChecked(False)
        self.commands.builder.setChecked(False)
        self.main_splitter.setSizes([250, max(400, self.width() - 250)])
        self.editor.reset_splitters()
        self.show_page("editor")

    @Slot()
    def _on_resource_created(self) -> None:
        self.editor.set_builder_visible(True)

    @Slot(bool)
    def _on_builder_toggled(self, visible: bool) -> None:
        self.commands.builder.setChecked(visible)
        if visible:
            self.commands.focus_mode.setChecked(False)
            self.show_page("editor")

    @Slot(bool)
    def _on_focus_mode_toggled(self, on: bool) -> None:
        self.editor.set_focus_mode(on)
        self.catalogue.setVisible(not on)
        self.commands.toolbar.setVisible(not on)
        self.statusBar().setVisible(not on)
        if on:
            self.show_page("editor")
            self.editor.focus_code()

    @Slot(bool)
    def _on_word_wrap_toggled(self, on: bool) -> None:
        self.editor.set_word_wrap(on)
        self.settings.set_layout_flag("word_wrap", on)

    @Slot(str)
    def _on_theme_chosen(self, name: str) -> None:
        self.set_theme(name)

    # -- slots: server -----------------------------------------------------------------

    @Slot()
    def _on_server_action_triggered(self) -> None:
        self.server_control.toggle_http()

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
        uri = self.server_panel.notify_uri_text()
        if uri:
            self.controller.send_resource_updated(uri)
        else:
            self.statusBar().showMessage("Choose a URI to announce in the server panel first", 5000)

    @Slot()
    def _on_restart_requested(self) -> None:
        if not self.restart_server():
            self.statusBar().showMessage("The server is not running: the settings apply when it starts", 5000)

    @Slot()
    def _on_server_state_changed(self) -> None:
        running = self.server_control.running
        if not running:
            self._session_count = 0
            self.sessions.clear()
        if running or self._project_settings is not None:  # a running server's start is what it compares with
            self.project_settings.set_server_running(running)
        self._refresh_project_views()

    @Slot(object)
    def _on_session_opened(self, info: SessionInfo) -> None:
        self.sessions.add_session(info)
        if info.client_name:
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
