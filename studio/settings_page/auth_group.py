"""The settings page's "Authorization" group: `[server.auth]` typed field by field, checked by the model."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QTimer, Signal, Slot
from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel, QLineEdit, QWidget

from resources_qt.project import AuthConfig, ServerSettings
from resources_qt.project.auth_settings import AUTH_KEYS, auth_key, split_scopes
from studio.document.document import ProjectDocument
from studio.look.marks import invalid_style, note_style

__all__ = ["AuthSettingsGroup", "config_of_texts", "texts_of_config"]

_HINT = "Leave issuer and resource URL empty to serve HTTP without OAuth (a --token still works then)."


def texts_of_config(config: AuthConfig | None) -> dict[str, str]:
    """What each field shows for `config` (all empty for None)."""
    texts: dict[str, str] = {}
    for row in AUTH_KEYS:
        value = getattr(config, row.key) if config is not None else None
        if row.kind == "scopes":
            texts[row.key] = " ".join(value or ())
        else:
            texts[row.key] = value or ""
    return texts


def config_of_texts(texts: dict[str, str]) -> AuthConfig | None:
    """The `AuthConfig` the fields say (None when every field is empty), not yet checked."""
    stripped = {key: text.strip() for key, text in texts.items()}
    if not any(stripped.values()):
        return None
    values: dict[str, object] = {}
    for row in AUTH_KEYS:
        text = stripped.get(row.key, "")
        if row.kind == "scopes":
            values[row.key] = tuple(split_scopes(text))
        elif row.required:
            values[row.key] = text
        else:
            values[row.key] = text or None
    return AuthConfig(**values)  # type: ignore[arg-type]


class AuthSettingsGroup(QGroupBox):
    """One line per `[server.auth]` key; a complete, valid table is written to the document (one undo step
    per key typed), anything else stays typed with the model's message naming the key.

    Signals:
        committed(): the document took a new `[server.auth]`.
    """

    committed = Signal()

    def __init__(self, document: ProjectDocument, parent: QWidget | None = None, *, debounce_ms: int = 400) -> None:
        super().__init__("Authorization", parent)
        self.setObjectName("settingsAuthorizationBox")
        self._document = document
        self._loading = False
        self._shown: AuthConfig | None = None
        self.error = ""
        self.form = QFormLayout(self)
        self.labels: list[QLabel] = []
        self._edits: dict[str, QLineEdit] = {}
        for row in AUTH_KEYS:
            edit = QLineEdit(self)
            edit.setObjectName(row.widget)
            edit.setPlaceholderText(row.placeholder)
            edit.setToolTip(row.help)
            label = QLabel(row.label, self)
            label.setBuddy(edit)
            self.labels.append(label)
            self.form.addRow(label, edit)
            self._edits[row.key] = edit
            edit.textEdited.connect(self._on_edited)
            edit.editingFinished.connect(self._on_editing_finished)
        self.hint = QLabel(_HINT, self)
        self.hint.setObjectName("authSettingsHint")
        self.hint.setWordWrap(True)
        self.form.addRow("", self.hint)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self.commit)
        self.load(document.project.server.auth)

    def field(self, key: str) -> QLineEdit:
        """The line editing `[server.auth] key` (KeyError for another key)."""
        auth_key(key)
        return self._edits[key]

    @property
    def shown(self) -> AuthConfig | None:
        """The table the fields last showed or wrote."""
        return self._shown

    def texts(self) -> dict[str, str]:
        return {key: edit.text() for key, edit in self._edits.items()}

    def load(self, config: AuthConfig | None) -> None:
        """Show `config` (the document's), dropping what was typed and refused."""
        self._timer.stop()
        self._loading = True
        try:
            for key, text in texts_of_config(config).items():
                if self._edits[key].text() != text:
                    self._edits[key].setText(text)
        finally:
            self._loading = False
        self._shown = config
        problem = config.problem() if config is not None else None
        self._show_error(problem)  # a hand-edited file may hold a value the model refuses: it is marked

    def commit(self) -> None:
        """Write what the fields say to the document if the model takes it; otherwise mark the key at fault."""
        self._timer.stop()
        if self._loading:
            return
        config = config_of_texts(self.texts())
        problem = config.problem() if config is not None else None
        self._show_error(problem)
        if problem is not None:
            return
        current: ServerSettings = self._document.project.server
        if config != current.auth:
            self._document.set_server_settings(replace(current, auth=config))
            self._shown = config
            self.committed.emit()

    def _show_error(self, problem: tuple[str, str] | None) -> None:
        self.error = problem[1] if problem is not None else ""
        style = invalid_style(self.palette())
        at_fault = problem[0].partition(".")[2] if problem is not None else ""
        for key, edit in self._edits.items():
            edit.setStyleSheet(style if key == at_fault else "")
            edit.setToolTip(self.error if key == at_fault else auth_key(key).help)
        self.hint.setText(self.error or _HINT)
        self.hint.setStyleSheet(note_style(self.palette(), warning=bool(self.error)))

    @Slot()
    def _on_edited(self) -> None:
        if not self._loading:
            self._timer.start()

    @Slot()
    def _on_editing_finished(self) -> None:
        if not self._loading and self._timer.isActive():
            self.commit()
