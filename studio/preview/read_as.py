"""The preview's "Read as": pick or type a scope set and see what a caller with those scopes lists and reads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from resources_qt.project import Project
from resources_qt.project.auth_settings import scopes_problem, split_scopes

__all__ = ["ReadAsBar", "ReadAsTarget"]

_SHOWN_NAMES = 6


class ReadAsTarget(Protocol):
    """What the bar reads as through: the facade (`resources_qt.qt.ServerController`)."""

    @property
    def project(self) -> Project: ...

    def set_read_as(self, scopes: Sequence[str] | None) -> None: ...

    def listed_as(self, scopes: Sequence[str]) -> list[str]: ...


class ReadAsBar(QWidget):
    """Off: the preview reads as the studio (everything). On: as an HTTP caller whose token holds the typed
    scopes, without any token: what such a caller may not see reads as not found, and the summary says
    what it lists (and when `[server.auth]` would refuse it outright for lacking a required scope).

    Signals:
        scopes_changed(object): the scope set reads go by now (a tuple), or None for everything.
    """

    scopes_changed = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("readAsBar")
        self._target: ReadAsTarget | None = None
        self._applied: tuple[str, ...] | None = None
        self.check = QCheckBox("Read as", self)
        self.check.setObjectName("readAsCheck")
        self.check.setToolTip("Read as a caller whose token holds these scopes (no token needed)")
        self.scopes_box = QComboBox(self)
        self.scopes_box.setObjectName("readAsScopes")
        self.scopes_box.setEditable(True)
        self.scopes_box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self._line = QLineEdit(self.scopes_box)
        self.scopes_box.setLineEdit(self._line)
        self._line.setPlaceholderText("scopes, e.g. mcp:read crm:read (pick one from the list to add it)")
        self._line.setAccessibleName("Scopes to read as")
        # Shown once "Read as" is on: an editable combo box reads as its text to assistive technology, so an
        # empty, disabled one would be an unnamed stop on the way through the preview.
        self.scopes_box.setVisible(False)
        self.summary = QLabel(self)
        self.summary.setObjectName("readAsSummary")
        self.summary.setWordWrap(True)
        self.summary.hide()
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.check)
        row.addWidget(self.scopes_box, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(row)
        layout.addWidget(self.summary)
        self.hide()  # until a target is attached: nothing to read as through
        self.check.toggled.connect(self._on_toggled)
        self._typed = ""
        self._line.textEdited.connect(self._on_typed)
        self._line.editingFinished.connect(self.apply)
        self.scopes_box.activated.connect(self._on_picked)

    def attach(self, target: ReadAsTarget) -> None:
        """Read as through `target` from now on (the shell's preview presenter attaches the facade)."""
        self._target = target
        self.show()
        self.refresh()

    @property
    def scopes(self) -> tuple[str, ...] | None:
        """The scope set reads go by (None: as the studio)."""
        return self._applied

    def known_scopes(self) -> list[str]:
        """The scopes to pick from: `[server.auth]`'s required ones and every resource's."""
        if self._target is None:
            return []
        project = self._target.project
        auth = project.server.auth
        found = dict.fromkeys(auth.required_scopes if auth is not None else ())
        for spec in project.resources:
            found.update(dict.fromkeys(spec.scopes))
        return list(found)

    def set_scopes(self, text: str) -> None:
        """Type `text` as the scope set and apply it (for scripts and tests)."""
        self._line.setText(text)
        self._typed = text
        self.apply()

    def refresh(self) -> None:
        """Offer the project's scopes again and say what the current set lists."""
        typed = self._line.text()
        self.scopes_box.blockSignals(True)
        self.scopes_box.clear()
        self.scopes_box.addItems(self.known_scopes())
        self.scopes_box.setCurrentIndex(-1)
        self._line.setText(typed)
        self.scopes_box.blockSignals(False)
        self._show_summary()

    @Slot()
    def apply(self) -> None:
        """Read by what the field says (when on); a set the model refuses is named and not applied."""
        if not self.check.isChecked():
            wanted: tuple[str, ...] | None = None
        else:
            scopes = split_scopes(self._line.text())
            problem = scopes_problem(scopes, "read as")
            if problem is not None:
                self.summary.setText(problem)
                self.summary.show()
                return
            wanted = tuple(scopes)
        if wanted != self._applied:
            self._applied = wanted
            if self._target is not None:
                self._target.set_read_as(wanted)
            self.scopes_changed.emit(wanted)
        self._show_summary()

    def _show_summary(self) -> None:
        scopes = self._applied
        target = self._target
        if scopes is None or target is None:
            self.summary.hide()
            return
        listed = target.listed_as(scopes)
        total = len(target.project.resources)
        names = ", ".join(listed[:_SHOWN_NAMES]) + (", …" if len(listed) > _SHOWN_NAMES else "")
        text = f"Lists {len(listed)} of {total}" + (f": {names}" if names else "")
        auth = target.project.server.auth
        missing = [s for s in (auth.required_scopes if auth is not None else ()) if s not in scopes]
        if missing:
            text += f". Over HTTP such a token is refused (403) without {' '.join(missing)}"
        self.summary.setText(text)
        self.summary.show()

    @Slot(bool)
    def _on_toggled(self, on: bool) -> None:
        self.scopes_box.setVisible(on)
        self.apply()

    @Slot(str)
    def _on_typed(self, text: str) -> None:
        self._typed = text

    @Slot(int)
    def _on_picked(self, index: int) -> None:
        picked = self.scopes_box.itemText(index)
        # Picking adds the scope to what was typed (the combo alone would replace the text with it).
        kept = [scope for scope in split_scopes(self._typed) if scope != picked]
        self._typed = " ".join([*kept, picked])
        self._line.setText(self._typed)
        self.apply()
