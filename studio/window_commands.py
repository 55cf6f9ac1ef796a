"""The main window's commands as QActions, and the menus and toolbar that offer them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence, QUndoStack
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu

from studio.icons import icon

__all__ = ["WindowCommands"]

_Keys = QKeySequence.StandardKey | str | None


class WindowCommands(QObject):
    """Text, icon, shortcut and tooltip of every window command; the window connects what they do.

    The catalogue's add/duplicate/delete actions and the undo stack's actions are
    reused, so the menus, the toolbar and the catalogue's own buttons stay in step.

    Signals:
        recent_file_chosen(str path): an entry of File > Open Recent was picked.
        recent_files_cleared(): File > Open Recent > Clear was picked.
    """

    recent_file_chosen = Signal(str)
    recent_files_cleared = Signal()

    def __init__(
        self,
        window: QMainWindow,
        *,
        undo_stack: QUndoStack,
        catalogue_actions: Sequence[QAction],
        docks: Sequence[QDockWidget],
    ) -> None:
        super().__init__(window)
        self._window = window
        self._docks = list(docks)
        keys = QKeySequence.StandardKey
        self.new = self._make("&New", "new", "Start a new project", keys.New)
        self.open = self._make("&Open…", "open", "Open a project file", keys.Open)
        self.save = self._make("&Save", "save", "Save the project", keys.Save)
        self.save_as = self._make("Save &As…", "save-as", "Save the project under a new name", keys.SaveAs)
        # Some platforms (and the offscreen one) bind no key to the standard Quit.
        quit_keys = keys.Quit if not QKeySequence(keys.Quit).isEmpty() else "Ctrl+Q"
        self.quit = self._make("&Quit", None, "Quit Resource Studio", quit_keys)

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
        for action, shortcut in ((self.add_resource, "Ctrl+Shift+N"),
                                 (self.add_template, "Ctrl+Shift+T")):  # fmt: skip
            self._describe(action, action.toolTip(), shortcut)
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
        self.about = self._make("&About Resource Studio", "app", "Version and keyboard shortcuts")
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

        view_menu = bar.addMenu("&View")
        for number, dock in enumerate(self._docks, 1):
            toggle = dock.toggleViewAction()
            self._describe(toggle, f"Show or hide the {dock.windowTitle().lower()} panel", f"Ctrl+{number}")
            view_menu.addAction(toggle)
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
            (self.preview,),
            (self.server, self.list_changed, self.updated),
        ):
            toolbar.addActions(list(group))
            toolbar.addSeparator()

    def shortcuts(self) -> list[tuple[str, str]]:
        """(command, keys) of every command with a shortcut, for the About box."""
        native = QKeySequence.SequenceFormat.NativeText
        return [(action.text().replace("&", ""), action.shortcut().toString(native))
                for action in self._window.actions() if not action.shortcut().isEmpty()]  # fmt: skip

    @Slot(list)
    def rebuild_recent_menu(self, files: list) -> None:
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
    def _on_recent_triggered(self) -> None:
        action = self.sender()
        if isinstance(action, QAction) and action.data():
            self.recent_file_chosen.emit(str(action.data()))
