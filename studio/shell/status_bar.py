"""The main window's status bar: the server's state, the resources with errors, and passing notes."""

from __future__ import annotations

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QLabel, QStatusBar

from studio.document.snippet_sweep import SnippetSweep
from studio.look.icons import pixmap
from studio.look.theme import status_colors
from studio.serving.server_sync import ServerSync

__all__ = ["WindowStatus"]

_TIP_NAMES = 20


class WindowStatus(QObject):
    """Fills a window's status bar: the server state (`server_label`, `status_icon`), the count of resources
    with errors (`errors_label`), and notes that pass (`show_message`).

    The count comes from `ServerSync`: declarations held back, and served resources whose snippets fail
    among those already checked; `recount` starts the `SnippetSweep` that checks the rest a slice at a
    time, and the count is taken again when it is done (`refresh_errors`). No signals.
    """

    def __init__(
        self, bar: QStatusBar, *, sync: ServerSync, sweep: SnippetSweep, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._bar = bar
        self._sync = sync
        self._sweep = sweep
        self.server_label = QLabel()
        self.server_label.setObjectName("serverStatus")
        self.server_label.setToolTip("Server state")
        self.errors_label = QLabel()
        self.errors_label.setObjectName("errorStatus")
        self.errors_label.setToolTip("Resources whose form or snippet has errors")
        self.status_icon = QLabel()
        self.status_icon.setObjectName("serverStatusIcon")
        bar.addPermanentWidget(self.errors_label)
        bar.addPermanentWidget(self.status_icon)
        bar.addPermanentWidget(self.server_label)
        self.apply_colors()
        sweep.swept.connect(self.refresh_errors)

    @Slot(str, int)
    def show_message(self, text: str, timeout_ms: int) -> None:
        self._bar.showMessage(text, timeout_ms)

    @Slot(str)
    def show_progress(self, text: str) -> None:
        """A start or stop under way, until the server's next state."""
        self.server_label.setText(text)

    def show_server_status(self, text: str, icon: str) -> None:
        """The server's state line and the name of its icon ("" for none)."""
        self.server_label.setText(text)
        ratio = self._bar.window().devicePixelRatioF()
        self.status_icon.setPixmap(pixmap(icon, 14, device_pixel_ratio=ratio) if icon else QPixmap())

    @Slot()
    def recount(self) -> None:
        """Count the resources with errors from what is checked, and sweep the rest (the count grows to the
        full one as the sweep checks them)."""
        self.refresh_errors()
        self._sweep.start()

    @Slot()
    def refresh_errors(self) -> None:
        held, failing = self._sync.unserved_and_failing()
        parts = ([f"{len(held)} with errors (not served)"] if held else []) + (
            [f"{len(failing)} with snippet errors (failing)"] if failing else []
        )
        self.errors_label.setText(" · ".join(parts))
        tips = (["Not served until the form is fixed (the last valid one is):", *held[:_TIP_NAMES]] if held else []) + (
            ["Served, but reads fail with the snippet's error:", *failing[:_TIP_NAMES]] if failing else []
        )
        self.errors_label.setToolTip("\n".join(tips))

    def apply_colors(self) -> None:
        """Colour the error count from the window's palette (the window calls it again when that changes)."""
        css = f"QLabel#errorStatus {{ color: {status_colors(self._bar.window().palette()).error_text.name()}; }}"
        if self.errors_label.styleSheet() != css:
            self.errors_label.setStyleSheet(css)

    @Slot(str)
    def note_apply_failed(self, message: str) -> None:
        self.show_message(f"Not served: {message}", 8000)

    @Slot(str)
    def note_autosave_failed(self, message: str) -> None:
        self.show_message(f"Autosave failed: {message}", 8000)

    @Slot(int, int)
    def note_tests_run(self, passed: int, failed: int) -> None:
        self.show_message(f"Tests: {passed} passed, {failed} failed", 8000)
