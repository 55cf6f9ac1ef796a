"""The window's pages in one stack: editor, server, traffic, and the settings and tests pages built on first use."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QScrollArea, QStackedWidget, QWidget

from studio.document.document import ProjectDocument
from studio.shell.window_commands import PAGES

if TYPE_CHECKING:
    from studio.settings_page.project_settings import ProjectSettingsView
    from studio.tests_page.tests_view import TestsView

logger = logging.getLogger(__name__)

__all__ = ["PAGE_KEYS", "WindowPages"]

PAGE_KEYS = tuple(key for key, _, _ in PAGES)


def _scroll_area(name: str, title: str, widget: QWidget | None = None) -> QScrollArea:
    # The server and settings pages scroll when the window is smaller than what they show.
    scroll = QScrollArea()
    scroll.setObjectName(name)
    scroll.setAccessibleName(title)
    # Tab goes on to the page's fields (the area scrolls to each) rather than stopping on the area itself.
    scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    if widget is not None:
        scroll.setWidget(widget)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QScrollArea.Shape.NoFrame)
    return scroll


class WindowPages(QStackedWidget):
    """The window's pages, in the order of `PAGES`: the editor, server, traffic and remote pages it is given,
    and the Project Settings and Tests pages, built when first shown or asked for.

    The first paint shows neither of the last two, and the Tests page's runner brings the SDK's client
    types. The settings page is also built when a server starts: from then on it marks what needs a
    restart. The Tests page follows the resource being edited (`current_resource`).

    Signals:
        restart_requested(): the settings page asks for the server to restart with the new settings.
        tests_run_finished(int passed, int failed): a run on the Tests page ended.
    """

    restart_requested = Signal()
    tests_run_finished = Signal(int, int)

    def __init__(
        self,
        document: ProjectDocument,
        *,
        editor: QWidget,
        server: QWidget,
        traffic: QWidget,
        remote: QWidget,
        current_resource: Callable[[], str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("workspacePages")
        self._document = document
        self._current_resource = current_resource
        self._tests_view: TestsView | None = None
        self._project_settings: ProjectSettingsView | None = None
        tests_placeholder = QWidget()
        tests_placeholder.setObjectName("testsPagePlaceholder")
        self._page_widgets: dict[str, QWidget] = {
            "editor": editor, "server": _scroll_area("serverPanelScroll", "Server", server), "traffic": traffic,
            "settings": _scroll_area("projectSettingsScroll", "Project settings"), "tests": tests_placeholder,
            "remote": remote,
        }  # fmt: skip
        for key in PAGE_KEYS:
            self.addWidget(self._page_widgets[key])
        document.tests_changed.connect(self._on_tests_changed)

    @property
    def current_key(self) -> str:
        """The key of the page shown ("editor" … "tests")."""
        widget = self.currentWidget()
        return next((key for key, page in self._page_widgets.items() if page is widget), "editor")

    def show_page(self, key: str) -> None:
        """Show one of the pages: "editor", "server", "traffic", "settings", "tests" or "remote"."""
        if key not in self._page_widgets:
            raise ValueError(f"page: expected one of {', '.join(PAGE_KEYS)}, got {key!r}")
        if key == "tests":
            self._build_tests_page()
        elif key == "settings":
            self._build_settings_page()
        self.setCurrentWidget(self._page_widgets[key])

    @property
    def tests_view(self) -> TestsView:
        """The Tests page, built on first use (showing the page, or asking for it)."""
        return self._build_tests_page()

    @property
    def project_settings(self) -> ProjectSettingsView:
        """The Project Settings page, built on first use."""
        return self._build_settings_page()

    @Slot(str)
    def set_current_resource(self, name: str) -> None:
        """The resource being edited changed: the Tests page, if built, selects its tests."""
        if self._tests_view is not None:
            self._tests_view.set_current_resource(name or None)

    def set_server_running(self, running: bool) -> None:
        """A server started or stopped: what it started with is what the settings page compares with."""
        if running or self._project_settings is not None:
            self.project_settings.set_server_running(running)

    def shutdown(self) -> None:
        """Stop a test run of the Tests page, if it was built (errors are logged, not raised)."""
        try:
            if self._tests_view is not None:
                self._tests_view.shutdown()
        except Exception:
            logger.exception("stopping the test run failed")

    @Slot()
    def _on_tests_changed(self) -> None:
        if self._tests_view is not None:  # a page built later reads the tests then
            self._tests_view.refresh()

    def _build_settings_page(self) -> ProjectSettingsView:
        if self._project_settings is None:
            from studio.settings_page.project_settings import ProjectSettingsView

            view = ProjectSettingsView(self._document)
            view.restart_requested.connect(self.restart_requested)
            scroll = self._page_widgets["settings"]
            if isinstance(scroll, QScrollArea):
                scroll.setWidget(view)
            self._project_settings = view
        return self._project_settings

    def _build_tests_page(self) -> TestsView:
        if self._tests_view is None:
            from studio.tests_page.tests_view import TestsView

            view = TestsView(self._document)
            view.set_current_resource(self._current_resource() or None)
            view.run_finished.connect(self.tests_run_finished)
            placeholder = self._page_widgets["tests"]
            shown = self.currentWidget() is placeholder
            self.insertWidget(self.indexOf(placeholder), view)
            self.removeWidget(placeholder)
            placeholder.deleteLater()
            self._page_widgets["tests"] = view
            if shown:
                self.setCurrentWidget(view)
            self._tests_view = view
        return self._tests_view
