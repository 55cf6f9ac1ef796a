"""Tab order from a widget's layout: top to bottom as laid out, whatever order the widgets were made in."""

from __future__ import annotations

import itertools
from typing import cast

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QGridLayout, QLayout, QLayoutItem, QWidget

__all__ = ["follow_layout", "laid_out_widgets"]


def _items(layout: QLayout) -> list[QLayoutItem]:
    """The layout's items in reading order: rows of a form or a grid, else the layout's own order."""
    if isinstance(layout, QFormLayout):
        roles = (QFormLayout.ItemRole.LabelRole, QFormLayout.ItemRole.FieldRole, QFormLayout.ItemRole.SpanningRole)
        return [item for row in range(layout.rowCount()) for role in roles
                if (item := layout.itemAt(row, role)) is not None]  # fmt: skip
    items = [item for index in range(layout.count()) if (item := layout.itemAt(index)) is not None]
    if isinstance(layout, QGridLayout):
        places = {id(item): cast("tuple[int, int, int, int]", layout.getItemPosition(index))[:2]
                  for index, item in enumerate(items)}  # fmt: skip
        items.sort(key=lambda item: places[id(item)])
    return items


def laid_out_widgets(layout: QLayout) -> list[QWidget]:
    """The widgets Tab can stop at under `layout`, in reading order (into nested layouts and widgets' own)."""
    found: list[QWidget] = []
    for item in _items(layout):
        widget, inner = item.widget(), item.layout()
        if inner is not None:
            found.extend(laid_out_widgets(inner))
        elif widget is not None:
            if widget.focusPolicy() & Qt.FocusPolicy.TabFocus and widget.focusProxy() is None:
                found.append(widget)
            own = widget.layout()
            if own is not None:
                found.extend(laid_out_widgets(own))
    return found


def follow_layout(root: QWidget) -> None:
    """Make Tab go through `root`'s widgets in the order of its layout (call again after adding rows)."""
    layout = root.layout()
    if layout is None:
        return
    widgets = laid_out_widgets(layout)
    for first, second in itertools.pairwise(widgets):
        QWidget.setTabOrder(first, second)
