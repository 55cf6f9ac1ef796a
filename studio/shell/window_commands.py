"""The main window's commands as QActions, and the menus and toolbar that offer them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QAction, QActionGroup, QKeySequence, QUndoStack
from PySide6.QtWidgets import QMainWindow, QMenu, QMessageBox, QSizePolicy, QToolButton, QWidget

from resources_qt import __version__
from studio.look.icons import icon

__all__ = ["WindowCommands"]

_Keys = QKeySequence.StandardKey | str | None

PAGES = (("editor", "&Editor", "resource"), ("server", "Ser&ver", "start-server"),
         ("traffic", "&Traffic", "export"), ("settings", "&Project Settings", "settings"),
         ("tests", "Te&sts", "tests"), ("remote", "Re&mote", "open"))  # fmt: skip
"""(key, text, icon) of the window's pages, in the order of their Ctrl+1… shortcuts."""
THEME_NAMES = (("system", "&System"), ("light", "&Light"), ("dark", "&Dark"))


class WindowCommands(QObject):
    """Text, icon, shortcut and tooltip of every window command; the window connects what they do
    (Help > About, which lists the shortcuts, is the commands' own).

    The catalogue's add/duplicate/delete actions and the undo stack's actions are
    reused, so the menus, the toolbar and the catalogue's own buttons stay in step.

    Signals:
        recent_file_chosen(str path): an entry of File > Open Recent was picked.
        recent_files_cleared(): File > Open Recent > Clear was picked.
        page_chosen(str key): one of the window's pages (see PAGES) was picked.
        theme_chosen(str name): View > Theme > System / Light / Dark was picked.
    """

    recent_file_chosen = Signal(str)
    recent_files_cleared = Signal()
    page_chosen = Signal(str)
    theme_chosen = Signal(str)

    def __init__(
        self,
        window: QMainWindow,
        *,
        undo_stack: QUndoStack,
        catalogue_actions: Sequence[QAction],
    ) -> None:
        super().__init__(window)
        self._window = window
        keys = QKeySequence.StandardKey
        self.new = self._make("&New", "new", "Start a new project", keys.New)
        self.open = self._make("&Open…", "open", "Open a project file", keys.Open)
        self.save = self._make("&Save", "save", "Save the project", keys.Save)
        self.save_as = self._make("Save &As…", "save-as", "Save the project under a new name", keys.SaveAs)
        # Some platforms (and the offscreen one) bind no key to the standard Quit.
        quit_keys = keys.Quit if not QKeySequence(keys.Quit).isEmpty() else "Ctrl+Q"
        self.quit = self._make("&Quit", None, "Quit Resource Studio", quit_keys)
        self.connect_remote = self._make("&Connect to Server…", "open",
                                         "Read, subscribe to and import from any MCP server")  # fmt: skip
        self.connect_remote.setObjectName("connectRemoteAction")

        self.undo = undo_stack.createUndoAction(window, "&Undo")
        self.redo = undo_stack.createRedoAction(window, "&Redo")
        for action, name, shortcut, tip in (
            (self.undo, "undo", keys.Undo, "Undo the last edit"),
            (self.redo, "redo", keys.Redo, "Redo the last undone edit"),
        ):
            action.setIcon(icon(name))
            self._describe(action, tip, shortcut)
            window.addAction(action)

        # The adds get window-wide shortcuts; duplicate and delete stay with the catalogue's focus.
        self.add_resource, self.add_template, self.duplicate, self.delete = catalogue_actions
        adds: tuple[tuple[QAction, str], ...] = ((self.add_resource, "Ctrl+Shift+N"),
                                                 (self.add_template, "Ctrl+Shift+T"))  # fmt: skip
        for action, keys_text in adds:
            self._describe(action, action.toolTip(), keys_text)
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            window.addAction(action)

        self.preview = self._make("&Read / Preview", "preview", "Read the preview URI like a client",
                                  "Ctrl+R")  # fmt: skip
        self.server = self._make("&Start HTTP Server", "start-server",
                                 "Start or stop serving over Streamable HTTP", "F5")  # fmt: skip
        self.list_changed = self._make("Notify &list_changed", "notify-list-changed",
                                       "Send notifications/resources/list_changed to every session",
                                       "Ctrl+Shift+L")  # fmt: skip
        self.updated = self._make("Notify &updated", "notify-updated",
                                  "Send notifications/resources/updated for the notify URI to subscribers",
                                  "Ctrl+Shift+U")  # fmt: skip
        self.reset_layout = self._make("&Reset Layout", None, "Put the panels back where they were")
        self.builder = self._make("&Builder Form", "template", "Show or hide the builder form beside the code",
                                  "Ctrl+B")  # fmt: skip
        self.builder.setCheckable(True)
        self.focus_mode = self._make("&Distraction-Free", None, "Only the code editor: hide everything else",
                                     "F11")  # fmt: skip
        self.focus_mode.setShortcuts([QKeySequence("F11"), QKeySequence("Ctrl+Shift+M")])
        self.focus_mode.setCheckable(True)
        self.word_wrap = self._make("&Word Wrap", None, "Wrap long lines in the snippet editors", "Alt+Z")
        self.word_wrap.setCheckable(True)
        self.next_pane = self._make("Ne&xt Pane", None, "Move the focus to the next pane: catalogue, builder, "
                                    "code, preview", "F6")  # fmt: skip
        self.previous_pane = self._make("Pre&vious Pane", None, "Move the focus to the previous pane",
                                        "Shift+F6")  # fmt: skip
        self._pages = QActionGroup(self)
        self._pages.setExclusive(True)
        self.page_actions: dict[str, QAction] = {}
        for number, (key, text, icon_name) in enumerate(PAGES, 1):
            action = self._make(text, icon_name, f"Show the {text.replace('&', '').lower()} page",
                                f"Ctrl+{number}")  # fmt: skip
            action.setCheckable(True)
            action.setData(key)
            action.setObjectName(f"{key}PageAction")
            action.triggered.connect(self._on_page_triggered)
            self._pages.addAction(action)
            self.page_actions[key] = action
        self._themes = QActionGroup(self)
        self._themes.setExclusive(True)
        self.theme_actions: dict[str, QAction] = {}
        for key, text in THEME_NAMES:
            action = QAction(text, self._window)
            action.setCheckable(True)
            action.setData(key)
            action.setObjectName(f"{key}ThemeAction")
            action.setStatusTip(f"Use the {key} theme (remembered)")
            action.triggered.connect(self._on_theme_triggered)
            self._themes.addAction(action)
            self.theme_actions[key] = action
        self.about = self._make("&About Resource Studio", "app", "Version and keyboard shortcuts")
        self.about.triggered.connect(self._on_about_triggered)
        self.recent_menu = QMenu("Open &Recent", window)
        self.recent_menu.setObjectName("recentMenu")

    def _make(self, text: str, icon_name: str | None, tip: str, shortcut: _Keys = None) -> QAction:
        action = QAction(text, self._window)
        if icon_name:
            action.setIcon(icon(icon_name))
        self._describe(action, tip, shortcut)
        self._window.addAction(action)
        return action

    @staticmethod
    def _describe(action: QAction, tip: str, shortcut: _Keys) -> None:
        if shortcut is not None:
            keys = QKeySequence(shortcut)
            action.setShortcut(keys)
            tip = f"{tip} ({keys.toString(QKeySequence.SequenceFormat.NativeText)})"
        action.setToolTip(tip)
        action.setStatusTip(tip)

    def set_serving(self, serving: bool) -> None:
        self.server.setText("&Stop Server" if serving else "&Start HTTP Server")
        self.server.setIcon(icon("stop-server" if serving else "start-server"))
        tip = "Stop the server" if serving else "Start serving over Streamable HTTP"
        self._describe(self.server, tip, "F5")

    def install(self) -> None:
        """Build the menu bar and the toolbar of the window."""
        bar = self._window.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addActions([self.new, self.open])
        file_menu.addMenu(self.recent_menu)
        file_menu.addSeparator()
        file_menu.addActions([self.save, self.save_as])
        file_menu.addSeparator()
        file_menu.addAction(self.connect_remote)
        file_menu.addSeparator()
        file_menu.addAction(self.quit)

        edit_menu = bar.addMenu("&Edit")
        edit_menu.addActions([self.undo, self.redo])
        edit_menu.addSeparator()
        edit_menu.addActions([self.add_resource, self.add_template, self.duplicate, self.delete])
        edit_menu.addSeparator()
        edit_menu.addAction(self.preview)

        server_menu = bar.addMenu("&Server")
        server_menu.addAction(self.server)
        server_menu.addSeparator()
        server_menu.addActions([self.list_changed, self.updated])

        self.view_menu = view_menu = bar.addMenu("&View")
        view_menu.addActions(list(self.page_actions.values()))
        view_menu.addSeparator()
        view_menu.addActions([self.builder, self.focus_mode, self.word_wrap])
        view_menu.addActions([self.next_pane, self.previous_pane])
        theme_menu = view_menu.addMenu("T&heme")
        theme_menu.setObjectName("themeMenu")
        theme_menu.addActions(list(self.theme_actions.values()))
        view_menu.addSeparator()
        view_menu.addAction(self.reset_layout)

        help_menu = bar.addMenu("&Help")
        help_menu.addAction(self.about)

        toolbar = self._window.addToolBar("Main")
        toolbar.setObjectName("mainToolbar")
        toolbar.setMovable(False)
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        for group in (
            (self.new, self.open, self.save),
            (self.undo, self.redo),
            (self.add_resource, self.add_template, self.duplicate, self.delete),
            (self.builder, self.preview),
            (self.server, self.list_changed, self.updated),
        ):
            toolbar.addActions(list(group))
            toolbar.addSeparator()
        # The pages sit at the right end, with their names: one click away, and no height taken from the code.
        spacer = QWidget(toolbar)
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        toolbar.addWidget(spacer)
        for action in self.page_actions.values():
            toolbar.addAction(action)
            button = toolbar.widgetForAction(action)
            if isinstance(button, QToolButton):
                button.setObjectName(f"{action.data()}PageButton")
                button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toolbar = toolbar

    def set_page(self, key: str) -> None:
        """Check the action of the page shown (without emitting page_chosen)."""
        action = self.page_actions.get(key)
        if action is not None:
            action.setChecked(True)

    def set_theme(self, name: str) -> None:
        action = self.theme_actions.get(name)
        if action is not None:
            action.setChecked(True)

    def shortcuts(self) -> list[tuple[str, str]]:
        """(command, keys) of every command with a shortcut, for the About box."""
        native = QKeySequence.SequenceFormat.NativeText
        return [(action.text().replace("&", ""), action.shortcut().toString(native))
                for action in self._window.actions() if not action.shortcut().isEmpty()]  # fmt: skip

    @Slot(list)
    def rebuild_recent_menu(self, files: list[str]) -> None:
        self.recent_menu.clear()
        for path in files:
            action = self.recent_menu.addAction(Path(path).name)
            action.setToolTip(path)
            action.setStatusTip(path)
            action.setData(path)
            action.triggered.connect(self._on_recent_triggered)
        if files:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear Recent Files").triggered.connect(self.recent_files_cleared)
        self.recent_menu.setEnabled(bool(files))

    @Slot()
    def _on_about_triggered(self) -> None:
        rows = "".join(f"<tr><td>{text}</td><td>&nbsp;&nbsp;<b>{keys}</b></td></tr>"
                       for text, keys in self.shortcuts())  # fmt: skip
        QMessageBox.about(self._window, "About Resource Studio",
                          f"<h3>Resource Studio {__version__}</h3><p>Design and live-serve MCP resources.</p>"
                          f"<table>{rows}</table>")  # fmt: skip

    @Slot()
    def _on_page_triggered(self) -> None:
        action = self.sender()
        if isinstance(action, QAction):
            self.page_chosen.emit(str(action.data()))

    @Slot()
    def _on_theme_triggered(self) -> None:
        action = self.sender()
        if isinstance(action, QAction):
            self.theme_chosen.emit(str(action.data()))

    @Slot()
    def _on_recent_triggered(self) -> None:
        action = self.sender()
        if isinstance(action, QAction) and action.data():
            self.recent_file_chosen.emit(str(action.data()))
