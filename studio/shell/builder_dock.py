"""Where the editor's builder form sits: a column left of the code, or a tab over the preview when room is short."""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSplitter,
    QTabBar,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from studio.builder.resource_form import ResourceForm

logger = logging.getLogger(__name__)

__all__ = ["BUILDER_WIDTH", "MIN_CODE_COLUMNS", "MIN_SIDE_WIDTH", "BuilderDock"]

BUILDER_WIDTH, MIN_SIDE_WIDTH = 340, 330
MIN_CODE_COLUMNS = 60
"""The code keeps room for this many columns with the builder open: the builder has a column of its own where
the editor is wide enough for builder, code and preview, and a "Builder" tab over the preview where it is not."""


class BuilderDock(QObject):
    """The builder panel (title, close button, the scrolling form) and its place in the editor.

    `splitter` holds `slot` (left of the code), the code and `side_tabs` (the preview's column). Open, the
    panel is in `slot` when `fits_beside()`, else a tab of `side_tabs`; `relayout()` moves it when the
    editor's width crosses that line. `code_min_width()` is what the code column needs for
    `MIN_CODE_COLUMNS` columns; `focus_code()` takes the focus when the builder closes with it.

    Signals:
        shown_changed(bool shown): the builder came on screen or left it (opened, closed, its tab or the
            preview's chosen, distraction-free mode).
    """

    shown_changed = Signal(bool)

    def __init__(
        self,
        form: ResourceForm,
        *,
        splitter: QSplitter,
        side_tabs: QTabWidget,
        preview_page: QWidget,
        code_min_width: Callable[[], int],
        focus_code: Callable[[], None],
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self.form = form
        self._splitter = splitter
        self._tabs = side_tabs
        self._preview_page = preview_page
        self._code_min_width = code_min_width
        self._focus_code = focus_code
        self._open = False
        self._focus_mode = False
        self._shown = False  # what shown_changed last said

        scroll = QScrollArea(parent)
        scroll.setObjectName("formScroll")
        scroll.setWidget(form)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setAccessibleName("Builder form")
        # A narrow builder scrolls sideways rather than cutting the fields off.
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        # Always there, so a taller form (a template's completions, more icons) does not narrow the fields.
        scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        # The scroll area passes Tab on to the form's fields rather than stopping on itself.
        scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.form_scroll = scroll
        self.slot = QWidget(parent)
        self.slot.setObjectName("builderSlot")
        self._slot_layout = QVBoxLayout(self.slot)
        self._slot_layout.setContentsMargins(0, 0, 0, 0)
        self.panel = QWidget(self.slot)
        self.panel.setObjectName("builderPanel")
        self.panel.setMinimumWidth(300)
        self._slot_layout.addWidget(self.panel)
        close = QToolButton()
        close.setObjectName("closeBuilderButton")
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip("Hide the builder form (Ctrl+B)")
        close.setAccessibleName("Hide the builder")
        close.clicked.connect(self._on_close_clicked)
        # In a tab, the tab names the builder and closes it: the header is for the column.
        self._header = QWidget(self.panel)
        header = QHBoxLayout(self._header)
        header.setContentsMargins(4, 0, 0, 0)
        header.addWidget(QLabel("<b>Builder</b>", self._header))
        header.addStretch(1)
        header.addWidget(close)
        layout = QVBoxLayout(self.panel)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self._header)
        layout.addWidget(scroll, 1)
        self.slot.hide()
        side_tabs.currentChanged.connect(self._on_side_tab_changed)
        side_tabs.tabCloseRequested.connect(self._on_tab_close_requested)

    @property
    def shown(self) -> bool:
        """The builder is on screen (in its column, or its tab is the one shown over the preview)."""
        if not self._open or self._focus_mode:
            return False
        return not self.in_tab or self._tabs.currentWidget() is self.panel

    @property
    def in_tab(self) -> bool:
        """The open builder is a tab over the preview (the editor is too narrow for its own column)."""
        return self._tabs.indexOf(self.panel) >= 0

    def set_shown(self, shown: bool) -> None:
        """Open the builder (its tab comes to the front) and focus its name field, or close it."""
        if shown == self.shown:
            return
        if shown:
            sizes = self._splitter.sizes()
            self._open = True
            self._place()
            self._tabs.setCurrentWidget(self.panel if self.in_tab else self._preview_page)
            if self._splitter.isVisible() and sum(sizes) > 0:
                self._make_room(sizes)
            self.focus()
            self._announce()
        else:
            self.close()

    def close(self) -> None:
        """Close the builder, its tab too (shown or behind the preview's)."""
        focused = QApplication.focusWidget()
        self._open = False
        self._place()
        if focused is not None and self.panel.isAncestorOf(focused):
            self._focus_code()  # not left to wherever Qt would put it
        self._announce()

    def set_focus_mode(self, on: bool) -> None:
        """Distraction-free: the builder steps aside (and comes back after, if it was open)."""
        self._focus_mode = on
        self._place()
        self._announce()

    def focus(self) -> None:
        """Put the keyboard focus in the name field, its text selected: typing renames the resource."""
        if self.shown:
            self.form_scroll.ensureWidgetVisible(self.form.name_edit)  # the form may be scrolled down
            self.form.name_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
            self.form.name_edit.selectAll()

    def show_preview(self) -> None:
        """Bring the preview's tab to the front, if the builder's covered it."""
        self._tabs.setCurrentWidget(self._preview_page)

    def relayout(self) -> None:
        """The editor was resized: the open builder moves to its column or its tab if the room changed."""
        if self._open and self._place():
            self._make_room(self._splitter.sizes())
            self._announce()

    def fits_beside(self) -> bool:
        """The editor is wide enough for builder, `MIN_CODE_COLUMNS` of code and the preview side by side."""
        room = self._splitter.width() - 2 * self._splitter.handleWidth()
        return room >= BUILDER_WIDTH + self._code_min_width() + MIN_SIDE_WIDTH

    def _place(self) -> bool:
        """Put the panel where it belongs now (its slot, a tab, or out of sight); True when it moved."""
        panel, tabs = self.panel, self._tabs
        focused = QApplication.focusWidget()
        refocus = focused if focused is not None and panel.isAncestorOf(focused) else None
        want_tab = self._open and not self.fits_beside()
        moved = want_tab != self.in_tab
        tabs.blockSignals(True)  # the tab coming or going is not the user choosing one
        if moved and want_tab:
            tabs.addTab(panel, "Builder")
            tabs.setTabToolTip(tabs.indexOf(panel), "The builder form (Ctrl+B), over the preview while the "
                               "window is too narrow for both beside the code")  # fmt: skip
            tabs.setTabsClosable(True)
            bar = tabs.tabBar()
            for side in (QTabBar.ButtonPosition.LeftSide, QTabBar.ButtonPosition.RightSide):
                bar.setTabButton(tabs.indexOf(self._preview_page), side, None)  # the preview's tab stays
            if self._shown:  # it was on screen in its column: it stays on screen
                tabs.setCurrentWidget(panel)
        elif moved:
            tabs.removeTab(tabs.indexOf(panel))
            tabs.setTabsClosable(False)
            self._slot_layout.addWidget(panel)
            panel.show()
        tabs.blockSignals(False)
        self._header.setVisible(not want_tab)
        self.slot.setVisible(self._open and not want_tab and not self._focus_mode)
        if refocus is not None and moved and self.shown:
            refocus.setFocus(Qt.FocusReason.OtherFocusReason)
        return moved

    def _make_room(self, sizes: list[int]) -> None:
        """The builder's room comes out of the preview's: the code keeps what it had, and at least
        `MIN_CODE_COLUMNS`, as far as it can."""
        room, code_min = sum(sizes), self._code_min_width()
        if self.in_tab:
            code = max(room - max(sizes[2], BUILDER_WIDTH), code_min)
            self._splitter.setSizes([0, code, max(0, room - code)])
        else:
            room -= BUILDER_WIDTH
            code = max(min(sizes[1], room - MIN_SIDE_WIDTH), code_min)
            self._splitter.setSizes([BUILDER_WIDTH, code, max(0, room - code)])

    def _announce(self) -> None:
        shown = self.shown
        if shown != self._shown:
            self._shown = shown
            self.shown_changed.emit(shown)

    @Slot(int)
    def _on_side_tab_changed(self, _index: int) -> None:
        self._announce()  # the user brought the preview to the front, or the builder again

    @Slot()
    def _on_close_clicked(self) -> None:
        self.close()

    @Slot(int)
    def _on_tab_close_requested(self, index: int) -> None:
        if self._tabs.widget(index) is self.panel:
            self.close()
