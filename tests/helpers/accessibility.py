"""What assistive technology reads of a page: its focusable widgets and the share of them that have a name."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import QWidget

__all__ = ["NameCoverage", "accessible_description", "accessible_name", "focusable_widgets", "name_coverage"]


def accessible_name(widget: QWidget) -> str:
    """The name a screen reader announces: the accessible name, a label buddy's text, a button's text…"""
    interface = QAccessible.queryAccessibleInterface(widget)
    return interface.text(QAccessible.Text.Name).strip() if interface is not None else ""


def accessible_description(widget: QWidget) -> str:
    interface = QAccessible.queryAccessibleInterface(widget)
    return interface.text(QAccessible.Text.Description).strip() if interface is not None else ""


def focusable_widgets(page: QWidget) -> list[QWidget]:
    """The widgets of `page` that can take the keyboard focus now (by Tab or a click): shown, with a focus
    policy, and not handing the focus on to another (a widget with a focus proxy is counted as the proxy).
    """
    return [widget for widget in (page, *page.findChildren(QWidget))
            if widget.isVisible() and widget.focusProxy() is None
            and widget.focusPolicy() != Qt.FocusPolicy.NoFocus]  # fmt: skip


@dataclass(frozen=True)
class NameCoverage:
    """How many of a page's focusable widgets have an accessible name, and which have none."""

    total: int
    unnamed: tuple[str, ...]  # "ClassName#objectName" of each widget without a name

    @property
    def share(self) -> float:
        return 1.0 if self.total == 0 else (self.total - len(self.unnamed)) / self.total

    def __str__(self) -> str:
        return f"{self.share:.0%} of {self.total} named; unnamed: {', '.join(self.unnamed) or 'none'}"


def name_coverage(page: QWidget) -> NameCoverage:
    widgets = focusable_widgets(page)
    unnamed = tuple(f"{type(w).__name__}#{w.objectName()}" for w in widgets if not accessible_name(w))
    return NameCoverage(total=len(widgets), unnamed=unnamed)
