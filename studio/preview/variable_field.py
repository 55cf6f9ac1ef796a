"""One template variable's line edit with its completer, placed in a grid: the preview's and the Remote page's."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QStringListModel, Qt
from PySide6.QtWidgets import QCompleter, QGridLayout, QLabel, QLineEdit, QWidget

__all__ = ["VARIABLES_PER_ROW", "add_variable_field"]

VARIABLES_PER_ROW = 3
"""Variables side by side: the content below needs the height more."""


def add_variable_field(
    parent: QWidget, layout: QGridLayout, *, variable: str, position: int, object_name: str,
    values: Sequence[str] = (),
) -> tuple[QLineEdit, QStringListModel, QCompleter]:  # fmt: skip
    """`{variable}`'s label and edit at `position` in `layout`, its completer offering `values` (contains-match)."""
    edit = QLineEdit(parent)
    edit.setObjectName(object_name)
    edit.setPlaceholderText(f"value of {{{variable}}}")
    model = QStringListModel(list(values), edit)
    completer = QCompleter(model, edit)
    completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
    completer.setFilterMode(Qt.MatchFlag.MatchContains)
    edit.setCompleter(completer)
    row, column = divmod(position, VARIABLES_PER_ROW)
    label = QLabel(f"{{{variable}}}", parent)
    label.setBuddy(edit)
    layout.addWidget(label, row, column * 2)
    layout.addWidget(edit, row, column * 2 + 1)
    return edit, model, completer
