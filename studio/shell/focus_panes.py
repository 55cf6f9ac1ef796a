"""The editor page's panes for the keyboard: F6 / Shift+F6 go round them, the focused one is framed."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt, Slot
from PySide6.QtGui import QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QApplication, QWidget

from studio.look.theme import focus_frame_color

logger = logging.getLogger(__name__)

__all__ = ["FOCUS_FRAME_WIDTH", "FocusFrame", "FocusPanes", "Pane"]

FOCUS_FRAME_WIDTH = 2


class FocusFrame(QWidget):
    """A frame in the palette's focus colour over the edge of the pane it belongs to; it never takes a click.

    It covers its pane (kept to its size), drawn over the pane's children. No signals.
    """

    def __init__(self, pane: QWidget) -> None:
        super().__init__(pane)
        self.setObjectName("paneFocusFrame")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.hide()
        pane.installEventFilter(self)

    def show_over(self, on: bool) -> None:
        pane = self.parentWidget()
        if on and pane is not None:
            self.setGeometry(pane.rect())
            self.raise_()  # over children added since
        self.setVisible(on)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        pane = self.parentWidget()
        if watched is pane and pane is not None and event.type() == QEvent.Type.Resize and self.isVisible():
            self.setGeometry(pane.rect())
        return super().eventFilter(watched, event)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        pen = QPen(focus_frame_color(self.palette()))
        pen.setWidth(FOCUS_FRAME_WIDTH)
        pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
        painter.setPen(pen)
        half = FOCUS_FRAME_WIDTH // 2
        painter.drawRect(self.rect().adjusted(half, half, -half, -half))


@dataclass(eq=False)
class Pane:
    """One pane: its widget, its name, and where the focus goes when F6 arrives at it first."""

    name: str
    widget: QWidget
    entry: Callable[[], QWidget | None]
    frame: FocusFrame = field(init=False)
    last: QWidget | None = None  # where the focus last was in the pane (checked alive before use)

    def __post_init__(self) -> None:
        self.frame = FocusFrame(self.widget)


class FocusPanes(QObject):
    """F6 / Shift+F6 move the focus to the next / previous pane shown, in their order on screen (left to
    right, then top to bottom); the focus goes back to where it last was in that pane, else to its entry.
    The pane holding the focus is framed (`FocusFrame`). No signals.
    """

    def __init__(self, panes: Sequence[Pane], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._panes = list(panes)
        self._framed: Pane | None = None
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._on_focus_changed)

    @property
    def panes(self) -> list[Pane]:
        return list(self._panes)

    def shown(self) -> list[Pane]:
        """The panes on screen, in their order on screen."""
        visible = [pane for pane in self._panes if pane.widget.isVisible() and pane.widget.width() > 0]

        def place(pane: Pane) -> tuple[int, int]:
            corner = pane.widget.mapToGlobal(pane.widget.rect().topLeft())
            return corner.x(), corner.y()

        return sorted(visible, key=place)

    def current(self) -> Pane | None:
        """The pane holding the keyboard focus (None: the focus is elsewhere)."""
        return self._pane_of(QApplication.focusWidget())

    @Slot()
    def focus_next(self) -> None:
        self._step(1)

    @Slot()
    def focus_previous(self) -> None:
        self._step(-1)

    def _step(self, step: int) -> None:
        shown = self.shown()
        if not shown:
            return
        current = self.current()
        index = shown.index(current) + step if current in shown else (0 if step > 0 else -1)
        pane = shown[index % len(shown)]
        last = pane.last
        usable = last is not None and shiboken6.isValid(last) and last.isVisible() and last.isEnabled()
        target = last if usable else pane.entry()
        if target is None or not target.isVisible():
            target = pane.widget
        target.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self._frame(pane)

    def _pane_of(self, widget: QWidget | None) -> Pane | None:
        if widget is None:
            return None
        # The innermost pane holding the widget.
        holders = [pane for pane in self._panes if pane.widget is widget or pane.widget.isAncestorOf(widget)]
        return max(holders, key=lambda pane: _depth(pane.widget), default=None)

    def _frame(self, pane: Pane | None) -> None:
        if pane is self._framed:
            if pane is not None:
                pane.frame.show_over(True)
            return
        if self._framed is not None:
            self._framed.frame.show_over(False)
        self._framed = pane
        if pane is not None:
            pane.frame.show_over(True)

    @Slot(QWidget, QWidget)
    def _on_focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        if new is None:
            return  # the window lost the focus: the frame stays where the focus comes back to
        pane = self._pane_of(new)
        if pane is not None:
            pane.last = new
        if new.window() is self._window():
            self._frame(pane)

    def _window(self) -> QWidget | None:
        return self._panes[0].widget.window() if self._panes else None


def _depth(widget: QWidget) -> int:
    depth, parent = 0, widget.parentWidget()
    while parent is not None:
        depth, parent = depth + 1, parent.parentWidget()
    return depth
