"""The builder's `scopes` field: the OAuth scopes a caller's token needs to see or read the resource."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QLineEdit, QWidget

from resources_qt.project import ResourceSpec
from resources_qt.project.auth_settings import scopes_problem, split_scopes

__all__ = ["ScopesField"]


class ScopesField(QObject):
    """One line of space (or comma) separated scopes; `apply` writes them or reports why not (field `scopes`).

    Signals:
        edited(): text was typed (commit after a pause).
        editing_finished(): the field lost focus or Enter was pressed.
    """

    edited = Signal()
    editing_finished = Signal()

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self._loading = False
        self.edit = QLineEdit(parent)
        self.edit.setObjectName("resourceScopesEdit")
        self.edit.setPlaceholderText("none: every caller")
        self.edit.setToolTip(
            "OAuth scopes a caller's token needs to list, read, subscribe to or complete this resource\n"
            "(space separated; HTTP with [server.auth] only: stdio and HTTP without it see everything)"
        )
        self.edit.textEdited.connect(self._on_text_edited)
        self.edit.editingFinished.connect(self._on_editing_finished)

    def load(self, spec: ResourceSpec) -> None:
        self._loading = True
        try:
            text = " ".join(spec.scopes)
            if split_scopes(self.edit.text()) != spec.scopes:
                self.edit.setText(text)
        finally:
            self._loading = False

    def apply(self, spec: ResourceSpec) -> list[tuple[str, str]]:
        """Write the typed scopes into `spec`; [("scopes", message)] when the model refuses them."""
        scopes = split_scopes(self.edit.text())
        problem = scopes_problem(scopes, "scopes")
        if problem is not None:
            return [("scopes", problem)]
        spec.scopes = scopes
        return []

    @Slot(str)
    def _on_text_edited(self, _text: str) -> None:
        if not self._loading:
            self.edited.emit()

    @Slot()
    def _on_editing_finished(self) -> None:
        if not self._loading:
            self.editing_finished.emit()
