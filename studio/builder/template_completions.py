"""The builder's Completions box: the values a template offers for each of its variables, comma-separated."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel, QLineEdit, QWidget

__all__ = ["CompletionsBox"]


class CompletionsBox(QGroupBox):
    """One row per template variable, its values comma-separated ("alpha, beta").

    Values of a variable that left the template stay visible, with a tooltip saying so, so that nothing
    typed is lost; `follow` adds and removes rows as the template changes.

    Signals:
        edited(): a row's text was typed into.
        editing_finished(): a row's editing ended (Enter, or the focus left it).
        rows_rebuilt(): the rows were made again (new fields: the form puts them in its tab order).
    """

    edited = Signal()
    editing_finished = Signal()
    rows_rebuilt = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Completions", parent)
        self.setObjectName("completionsBox")
        self.setToolTip("Values offered for each template variable, comma-separated")
        self._layout = QFormLayout(self)
        self._edits: dict[str, QLineEdit] = {}

    def values(self) -> dict[str, list[str]]:
        """The values typed per variable; a variable without any is left out."""
        result: dict[str, list[str]] = {}
        for variable, edit in self._edits.items():
            values = [value.strip() for value in edit.text().split(",") if value.strip()]
            if values:
                result[variable] = values
        return result

    def rebuild(self, variables: list[str], completions: dict[str, list[str]]) -> None:
        """Rows for the template's `variables`, then for the other variables `completions` has values for."""
        names = variables + [name for name in completions if name not in variables]
        while self._layout.rowCount():
            self._layout.removeRow(0)
        self._edits = {}
        for variable in names:
            edit = QLineEdit(self)
            edit.setObjectName(f"completion_{variable}")
            edit.setPlaceholderText("comma-separated, e.g. alpha, beta")
            edit.setAccessibleName(f"Completions for {{{variable}}}")
            edit.setText(", ".join(completions.get(variable, [])))
            edit.textEdited.connect(self.edited)
            edit.editingFinished.connect(self.editing_finished)
            if variable not in variables:
                edit.setToolTip(f"{{{variable}}} is not in the template any more")
            self._edits[variable] = edit
            self._layout.addRow(f"{{{variable}}}", edit)
        if not names:
            self._layout.addRow(QLabel("The template has no variables yet.", self))
        self.rows_rebuilt.emit()

    def follow(self, variables: list[str]) -> None:
        """Rows for a template that now has `variables`, keeping every value typed."""
        current = self.values()
        wanted = variables + [name for name in current if name not in variables]
        if wanted != list(self._edits):
            self.rebuild(variables, {**{name: [] for name in wanted}, **current})
