"""The main window's layout across runs (geometry, splitters, panels, page) and its warm-up after the first paint."""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QByteArray, QEvent, QObject, QTimer, Slot
from PySide6.QtWidgets import QMainWindow, QSplitter, QWidget

from studio.preferences.settings import StudioSettings
from studio.shell.pages import PAGE_KEYS, WindowPages
from studio.shell.resource_editor import ResourceEditor
from studio.shell.window_commands import WindowCommands

logger = logging.getLogger(__name__)

__all__ = ["WARM_UP_FALLBACK_MS", "WindowLayout"]

WARM_UP_FALLBACK_MS = 3000
"""A window never exposed (minimised at start, some platforms) warms up after this all the same."""
_SPLITTERS = ("main", "editor", "side")


class WindowLayout(QObject):
    """Restores the window's layout from the settings and saves it back; shows and hides the panels the
    view commands ask for; asks for the warm-up once shown.

    Restored: the geometry and toolbar state, which panels show (builder, word wrap, distraction-free),
    the splitter sizes and the page. Splitter sizes wait for the window's first show (`window_shown`):
    restored into an unsized splitter they would be squeezed, then shared out again by the stretch
    factors. The warm-up (`warm_up`: the snippet workers start) runs after the first expose has
    painted the window, so spawning them never competes with the first paint. No signals.
    """

    def __init__(
        self,
        window: QMainWindow,
        *,
        settings: StudioSettings,
        commands: WindowCommands,
        editor: ResourceEditor,
        catalogue: QWidget,
        main_splitter: QSplitter,
        pages: WindowPages,
        show_page: Callable[[str], None],
        warm_up: Callable[[], None],
    ) -> None:
        super().__init__(window)
        self._window = window
        self._settings = settings
        self._commands = commands
        self._editor = editor
        self._catalogue = catalogue
        self._main_splitter = main_splitter
        self._pages = pages
        self._show_page = show_page
        self._warm_up = warm_up
        self._pending_splitters: dict[str, QByteArray] = {}
        self._warm_up_asked = False  # the first show arranges the warm-up
        self._warmed_up = False
        self._stopped = False

    @property
    def warmed_up(self) -> bool:
        """The warm-up ran."""
        return self._warmed_up

    def restore(self) -> None:
        settings, commands, window = self._settings, self._commands, self._window
        geometry, state = settings.window_geometry(), settings.window_state()
        if geometry is not None:
            window.restoreGeometry(geometry)
        if state is not None:
            window.restoreState(state)
        # Which panels show first, then their sizes: showing a panel later would share its room out again.
        commands.builder.setChecked(settings.layout_flag("builder", False))
        self._pending_splitters = {name: value for name in _SPLITTERS
                                   if (value := settings.splitter_state(name)) is not None}  # fmt: skip
        commands.word_wrap.setChecked(settings.layout_flag("word_wrap", False))
        self._editor.set_word_wrap(commands.word_wrap.isChecked())
        commands.focus_mode.setChecked(settings.layout_flag("focus", False))
        page = settings.workspace_page()
        self._show_page(page if page in PAGE_KEYS else "editor")

    def save(self) -> None:
        settings, commands = self._settings, self._commands
        settings.save_window(self._window.saveGeometry(), self._window.saveState())
        settings.set_splitter_state("main", self._main_splitter.saveState())
        for name, value in self._editor.splitter_states().items():
            settings.set_splitter_state(name, value)
        settings.set_layout_flag("builder", commands.builder.isChecked())
        settings.set_layout_flag("word_wrap", commands.word_wrap.isChecked())
        settings.set_layout_flag("focus", commands.focus_mode.isChecked())
        settings.set_workspace_page(self._pages.current_key)

    @Slot()
    def reset(self) -> None:
        """View > Reset Layout: forget the saved layout and put the panels back where they start."""
        self._settings.clear_layout()
        self._commands.focus_mode.setChecked(False)
        self._commands.builder.setChecked(False)
        self._main_splitter.setSizes([250, max(400, self._window.width() - 250)])
        self._editor.reset_splitters()
        self._show_page("editor")

    @Slot(bool)
    def set_word_wrap(self, on: bool) -> None:
        """Wrap the snippet editors' lines (remembered at once)."""
        self._editor.set_word_wrap(on)
        self._settings.set_layout_flag("word_wrap", on)

    @Slot(bool)
    def set_focus_mode(self, on: bool) -> None:
        """Distraction-free (the focus command toggled): the code editor alone, or everything back."""
        self._editor.set_focus_mode(on)
        self._catalogue.setVisible(not on)
        self._commands.toolbar.setVisible(not on)
        self._window.statusBar().setVisible(not on)
        if on:
            self._show_page("editor")
            self._editor.focus_code()

    @Slot(bool)
    def follow_builder(self, visible: bool) -> None:
        """The builder panel was shown or hidden: its command follows, and showing it leaves distraction-free."""
        self._commands.builder.setChecked(visible)
        if visible:
            self._commands.focus_mode.setChecked(False)
            self._show_page("editor")

    def stop(self) -> None:
        """The window shut down: no warm-up from now on."""
        self._stopped = True

    def window_shown(self) -> None:
        """Call from the window's `showEvent`: the splitter sizes, and the first show arranges the warm-up."""
        window = self._window
        if not self._warm_up_asked:
            self._warm_up_asked = True
            handle = window.windowHandle()
            if handle is not None:
                handle.installEventFilter(self)
            QTimer.singleShot(WARM_UP_FALLBACK_MS, self, self._on_warm_up)
        if self._pending_splitters:
            pending, self._pending_splitters = self._pending_splitters, {}
            layout = window.layout()
            if layout is not None:
                layout.activate()
            main = pending.pop("main", None)
            if main is not None:
                self._main_splitter.restoreState(main)
            self._editor.restore_splitter_states(pending)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        handle = self._window.windowHandle()
        if (watched is handle and handle is not None and event.type() == QEvent.Type.Expose
                and handle.isExposed()):  # fmt: skip
            handle.removeEventFilter(self)
            QTimer.singleShot(0, self, self._on_warm_up)  # after this expose has painted the window
        return super().eventFilter(watched, event)

    @Slot()
    def _on_warm_up(self) -> None:
        handle = self._window.windowHandle()
        if handle is not None:
            handle.removeEventFilter(self)  # the fallback timer came first: the expose watch is done too
        if not self._stopped and not self._warmed_up:
            self._warmed_up = True
            self._warm_up()
