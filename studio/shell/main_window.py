"""The studio's main window: the one place that puts the features together (each wires itself inside)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from PySide6.QtCore import QEvent, Qt, Slot
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QShowEvent
from PySide6.QtWidgets import QApplication, QMainWindow, QSplitter, QWidget

from resources_qt.project import Project
from resources_qt.qt.protocol import StudioController
from studio.catalogue.catalogue import CatalogueView
from studio.document.document import ProjectDocument
from studio.document.recovery import RecoveryCandidate, RecoveryStore
from studio.document.snippet_sweep import SnippetSweep
from studio.look.theme import apply_theme
from studio.preferences.settings import StudioSettings
from studio.remote.remote_feature import RemoteFeature
from studio.serving.server_control import ServerControl
from studio.serving.server_panel import ServerPanel
from studio.serving.server_sync import ServerSync
from studio.serving.serving_presenter import ServingPresenter
from studio.serving.sessions_view import SessionsModel
from studio.serving.traffic_log import TrafficLog
from studio.shell.focus_panes import FocusPanes, Pane
from studio.shell.pages import WindowPages
from studio.shell.preview_presenter import PreviewPresenter
from studio.shell.problems_dock import ProblemsDock
from studio.shell.project_files import ProjectFiles, dropped_project
from studio.shell.prompts import UnsavedChoice, dialog_prompts
from studio.shell.resource_editor import ResourceEditor
from studio.shell.status_bar import WindowStatus
from studio.shell.window_commands import WindowCommands
from studio.shell.window_layout import WindowLayout

if TYPE_CHECKING:
    from studio.settings_page.project_settings import ProjectSettingsView
    from studio.tests_page.tests_view import TestsView

logger = logging.getLogger(__name__)

__all__ = ["MainWindow", "UnsavedChoice"]


def _default_controller(project: Project) -> StudioController:
    from resources_qt.qt.controller import ServerController

    return ServerController(project=project)


class MainWindow(QMainWindow):
    """Five pages around one `ProjectDocument`: the editor (catalogue, code, preview), server, traffic, settings
    and tests; the builder on demand (Ctrl+B), Problems at the bottom (F8). Pages switch with Ctrl+1…5; F11
    leaves only the code. Every prompt is injectable (`ask_unsaved`, `ask_restore`, `ask_open_path`,
    `ask_save_path`, `report_error`) so tests drive the real window without modal dialogs.

    The window builds the features and connects them to one another; what each does with the controller and
    the document is its own: `ServingPresenter` (server page, sessions, traffic), `PreviewPresenter`,
    `WindowPages`, `WindowLayout` (layout across runs, warm-up), `WindowStatus`, `ProblemsDock`, `FocusPanes`.
    No signals of its own.
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

        # -- logic objects ---------------------------------------------------------------
        self.document = ProjectDocument(parent=self)
        self.controller = controller if controller is not None else _default_controller(Project())
        if self.controller.parent() is None:
            self.controller.setParent(self)
        self.sync = ServerSync(self.document, self.controller, self)
        self.snippet_sweep = SnippetSweep(self.document, self)
        self.sessions = SessionsModel(self)
        self.prompts = prompts = dialog_prompts(self)
        for name, answer in (("ask_unsaved", ask_unsaved), ("ask_restore", ask_restore),
                             ("ask_open_path", ask_open_path), ("ask_save_path", ask_save_path),
                             ("report_error", report_error)):  # fmt: skip
            if answer is not None:
                setattr(prompts, name, answer)
        # The prompt is looked up per call: tests and embedders replace `prompts.report_error` later.
        report = lambda title, message: self.prompts.report_error(title, message)  # noqa: E731, PLW0108

        # -- views and the features' presenters -------------------------------------------
        self.catalogue = CatalogueView(self.document)
        self.editor = ResourceEditor(self.document)
        self.files = ProjectFiles(self.document, settings=self.settings, recovery=self.recovery, prompts=prompts,
                                  flush_edits=self.editor.flush, parent=self)  # fmt: skip
        self.autosaver = self.files.autosaver
        self.server_panel = ServerPanel(self.sessions)
        # Which transports are served (HTTP, stdio, both), starting, stopping and restarting them.
        self.server_control = ServerControl(controller=self.controller, panel=self.server_panel,
                                            settings=self.settings, report_error=report, parent=self)  # fmt: skip
        self.traffic_log = TrafficLog()
        # Client mode: the Remote page; its traffic goes to the same log, under the session "remote".
        self.remote = RemoteFeature(document=self.document, settings=self.settings, window=self,
                                    log_traffic=self.traffic_log.add_entries,
                                    label_session=self.traffic_log.set_session_label)  # fmt: skip
        self.main_splitter = splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setObjectName("mainSplitter")
        splitter.addWidget(self.catalogue)
        splitter.addWidget(self.editor)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([250, 1030])
        splitter.setChildrenCollapsible(False)
        self.pages = WindowPages(self.document, editor=splitter, server=self.server_panel, traffic=self.traffic_log,
                                 remote=self.remote.page,
                                 current_resource=lambda: self.editor.resource_name)  # fmt: skip
        self.setCentralWidget(self.pages)
        catalogue = self.catalogue
        self.commands = commands = WindowCommands(
            self, undo_stack=self.document.undo_stack,
            catalogue_actions=[catalogue.add_resource_action, catalogue.add_template_action,
                               catalogue.duplicate_action, catalogue.delete_action],
        )  # fmt: skip
        commands.install()
        commands.rebuild_recent_menu(self.settings.recent_files())
        commands.set_theme(self.settings.theme())
        commands.set_page("editor")
        self.status = WindowStatus(self.statusBar(), sync=self.sync, sweep=self.snippet_sweep, parent=self)
        self.status_label, self.errors_label = self.status.server_label, self.status.errors_label
        self.status_icon = self.status.status_icon
        self.serving = ServingPresenter(
            document=self.document, controller=self.controller, control=self.server_control,
            panel=self.server_panel, sessions=self.sessions, traffic_log=self.traffic_log, settings=self.settings,
            server_action=commands.server, list_changed_action=commands.list_changed,
            updated_action=commands.updated, parent=self,
        )  # fmt: skip
        self.previewing = PreviewPresenter(document=self.document, controller=self.controller, editor=self.editor,
                                           report_error=report, parent=self)  # fmt: skip
        self.catalogue.follow_server(self.controller)
        self.controller.data_changed.connect(self.editor.form.live.note_data_changed)  # the builder's "changed …"
        self.problems = ProblemsDock(self.document, select=catalogue.select, mark=catalogue.set_lint_warnings,
                                     open_builder=lambda: self.editor.set_builder_visible(True), parent=self)
        commands.view_menu.addAction(self.problems.toggle_action)
        self.window_layout = WindowLayout(self, settings=self.settings, commands=commands, editor=self.editor,
                                          catalogue=self.catalogue, main_splitter=splitter, pages=self.pages,
                                          show_page=self.show_page, warm_up=self.controller.warm_up)  # fmt: skip
        editor = self.editor
        self.panes = FocusPanes([
            Pane("catalogue", self.catalogue, self.catalogue.focus_target),
            Pane("builder", editor.builder_panel, lambda: editor.form.name_edit),
            Pane("code", editor.snippet_tabs, editor.current_code_editor),
            Pane("preview", editor.side_splitter, lambda: editor.preview.uri_box),
        ], parent=self)  # fmt: skip
        self._wire()

        self.resize(1280, 800)
        self.setAcceptDrops(True)
        self.window_layout.restore()
        self._on_title_changed()
        self.serving.refresh()
        self.autosaver.start()

    def _wire(self) -> None:
        doc, commands, files, status = self.document, self.commands, self.files, self.status
        doc.dirty_changed.connect(self._on_title_changed)
        doc.path_changed.connect(self._on_title_changed)
        files.label_changed.connect(self._on_title_changed)
        files.project_opened.connect(self._on_project_opened)
        self.catalogue.resource_selected.connect(self._on_resource_selected)
        self.editor.builder_toggled.connect(self.window_layout.follow_builder)
        # A new resource needs a name and an address first: adding one opens the builder.
        self.catalogue.add_resource_action.triggered.connect(self._on_resource_created)
        self.catalogue.add_template_action.triggered.connect(self._on_resource_created)
        self.settings.recent_files_changed.connect(commands.rebuild_recent_menu)
        commands.recent_file_chosen.connect(files.open_recent)
        commands.recent_files_cleared.connect(self.settings.clear_recent_files)
        files.offer_commands(new=commands.new, open_=commands.open, save=commands.save, save_as=commands.save_as)
        commands.quit.triggered.connect(self.close)
        commands.preview.triggered.connect(self._on_preview_triggered)
        commands.reset_layout.triggered.connect(self.window_layout.reset)
        commands.builder.toggled.connect(self.editor.set_builder_visible)
        commands.focus_mode.toggled.connect(self.window_layout.set_focus_mode)
        commands.word_wrap.toggled.connect(self.window_layout.set_word_wrap)
        commands.next_pane.triggered.connect(self.panes.focus_next)
        commands.previous_pane.triggered.connect(self.panes.focus_previous)
        commands.page_chosen.connect(self.show_page)
        commands.theme_chosen.connect(self.set_theme)
        self.pages.restart_requested.connect(self.serving.restart)
        self.server_control.state_changed.connect(self._on_server_state_changed)

        # -- the status bar ------------------------------------------------------------------
        self.sync.apply_failed.connect(status.note_apply_failed)
        self.autosaver.autosave_failed.connect(status.note_autosave_failed)
        self.pages.tests_run_finished.connect(status.note_tests_run)
        for model in (self.catalogue.resource_model, self.catalogue.template_model):  # marks of failing tests
            self.pages.tests_run_finished.connect(
                lambda *_, m=model: m.set_failing_tests(self.tests_view.model.failing_resources()))
        self.server_control.progress.connect(status.show_progress)
        self.serving.status_changed.connect(self._on_server_status_changed)
        self.serving.project_views_refreshed.connect(status.recount)
        commands.connect_remote.triggered.connect(self._on_connect_remote_triggered)
        for source in (files, self.server_control, self.serving, self.previewing, self.remote.presenter):
            source.message_posted.connect(status.show_message)

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

    # -- server (ServerControl) ----------------------------------------------------------

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

    # -- client mode (the Remote page: studio/remote) -----------------------------------------

    def connect_remote(self, target: str, *, token: str = "", era: str = "auto") -> None:
        """Connect to another MCP server: a URL (Streamable HTTP) or a command line (stdio); shows the Remote page."""
        self.show_page("remote")
        self.remote.presenter.connect_to(target, token=token, era=era)

    def read_remote(self, uri: str) -> None:
        """Read `uri` from the connected server into the Remote page's preview."""
        self.remote.presenter.read(uri)

    def subscribe_remote(self, uri: str) -> None:
        """Subscribe to `uri` in the connected server's era; its updates re-read it while shown."""
        self.remote.presenter.subscribe(uri)

    def import_remote(self, uri_or_template: str, *, static: bool = False) -> str | None:
        """Add a remote resource or template to the project (`static`: a copy of its content); its name."""
        return self.remote.presenter.import_remote(uri_or_template, static=static)

    # -- pages, modes and theme ------------------------------------------------------------

    @property
    def current_page(self) -> str:
        return self.pages.current_key

    @Slot(str)
    def show_page(self, key: str) -> None:
        """Show one of the window's pages: "editor", "server", "traffic", "settings", "tests" or "remote"."""
        self.pages.show_page(key)
        self.commands.set_page(key)

    @property
    def tests_view(self) -> TestsView:
        """The Tests page, built on first use (showing the page, or asking for it)."""
        return self.pages.tests_view

    @property
    def project_settings(self) -> ProjectSettingsView:
        """The Project Settings page, built on first use."""
        return self.pages.project_settings

    @property
    def focus_mode(self) -> bool:
        return self.commands.focus_mode.isChecked()

    def set_focus_mode(self, on: bool) -> None:
        """Distraction-free: the code editor alone (F11 or Ctrl+Shift+M toggles it)."""
        self.commands.focus_mode.setChecked(on)

    @Slot(str)
    def set_theme(self, name: str, *, remember: bool = True) -> None:
        """Apply "system", "light" or "dark" to the application (and remember it for the next start)."""
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, name)
        self.commands.set_theme(name)
        if remember:
            self.settings.set_theme(name)

    @property
    def _completion_requests(self) -> Mapping[str, tuple[str, str]]:
        """The preview's completion requests not answered yet (`PreviewPresenter.pending_completions`)."""
        return self.previewing.pending_completions

    @property
    def _warmed_up(self) -> bool:
        """The warm-up after the first paint ran (`WindowLayout.warmed_up`)."""
        return self.window_layout.warmed_up

    def shutdown(self) -> None:
        """Stop the server and the snippet workers (idempotent; the app calls it on exit)."""
        if self._shut_down:
            return
        self._shut_down = True
        self.window_layout.stop()
        self.autosaver.stop()
        self.pages.shutdown()
        self.problems.shutdown()
        self.remote.shutdown()
        try:
            self.controller.shutdown()
        except Exception:
            logger.exception("server shutdown failed")

    # -- window events -----------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.window_layout.window_shown()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self.status.apply_colors()

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if dropped_project(event.mimeData()) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        path = dropped_project(event.mimeData())
        if path is not None:
            event.acceptProposedAction()
            self.open_project(path)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.maybe_save():
            event.ignore()
            return
        self.window_layout.save()
        if self.document.path is not None:
            self.settings.set_last_project(self.document.path)
        self.files.discard_recovery()
        self.settings.sync()
        self.shutdown()
        event.accept()

    # -- slots: between the features -------------------------------------------------------

    @Slot()
    def _on_title_changed(self) -> None:
        self.setWindowTitle(f"{self.files.label()}[*] — Resource Studio")
        self.setWindowModified(self.document.is_dirty)
        if self.document.path is not None:
            self.setWindowFilePath(str(self.document.path))

    @Slot()
    def _on_project_opened(self) -> None:
        names = self.document.names()
        if names:
            self.catalogue.select(names[0])

    @Slot(str)
    def _on_resource_selected(self, name: str) -> None:
        self.editor.show_resource(name)
        self.pages.set_current_resource(name)
        self.serving.set_current_resource(name)

    @Slot()
    def _on_server_state_changed(self) -> None:
        self.pages.set_server_running(self.server_control.running)

    @Slot(str, str, bool)
    def _on_server_status_changed(self, text: str, icon: str, running: bool) -> None:
        self.status.show_server_status(text, icon)
        self.commands.set_serving(running)

    @Slot()
    def _on_connect_remote_triggered(self) -> None:
        self.show_page("remote")
        self.remote.presenter.ask_and_connect()

    @Slot()
    def _on_preview_triggered(self) -> None:
        if not self.editor.resource_name:
            self.status.show_message("Select a resource to preview first", 4000)
            return
        self.show_page("editor")
        self.editor.show_preview()
        self.editor.preview.read()

    @Slot()
    def _on_resource_created(self) -> None:
        # Typing names the new resource, wherever the focus was and whether the builder was open or not.
        self.show_page("editor")
        self.editor.set_builder_visible(True)
        self.editor.focus_builder()
