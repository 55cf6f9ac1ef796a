"""The `[server]` settings as typed form fields: which widget edits a key, how its text parses, what applies live."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QPlainTextEdit, QWidget

from resources_qt.project import ServerSettings
from resources_qt.project.settings_table import SETTINGS, setting

__all__ = [
    "LIVE_KEYS",
    "SettingField",
    "SettingSpec",
    "available_specs",
    "settings_problem",
]

LIVE_KEYS = frozenset(row.key for row in SETTINGS if row.live)
"""Keys a running server takes at once (name, version and instructions reach the next sessions); the rest
(capabilities are advertised at start, limits are set up when the server starts) need a restart."""


@dataclass(frozen=True)
class SettingSpec:
    """How the view shows one key: its section, label, object name and help (read off its table row)."""

    key: str
    section: str
    label: str
    object_name: str
    tip: str


def available_specs() -> list[SettingSpec]:
    """One spec per `[server]` key, in the table's order (`resources_qt.project.settings_table.SETTINGS`)."""
    return [SettingSpec(row.key, row.section, row.label, row.widget, row.help) for row in SETTINGS]


def settings_problem(settings: ServerSettings) -> tuple[str, str] | None:
    """The model's verdict: the first invalid key and its message, or None."""
    problem = settings.problem()
    return None if problem is None else (problem[0], problem[1])


class SettingField:
    """One key's widget: shows a value, and parses what the user typed (raising ValueError naming the key)."""

    def __init__(self, spec: SettingSpec, parent: QWidget) -> None:
        self.spec = spec
        self.key = spec.key
        row = setting(spec.key)
        self.kind, self.optional = row.kind, row.optional
        widget: QWidget
        if self.kind is bool:
            widget = QCheckBox(spec.label.replace("&", ""), parent)
        elif row.choices:
            combo = QComboBox(parent)
            combo.addItems(list(row.choices))
            widget = combo
        elif row.multiline:
            text = QPlainTextEdit(parent)
            text.setTabChangesFocus(True)
            text.setPlaceholderText("optional: tell clients what these resources are for")
            text.setFixedHeight(text.fontMetrics().lineSpacing() * 3 + 12)
            widget = text
        else:
            line = QLineEdit(parent)
            if self.optional:
                line.setPlaceholderText("not set")
            widget = line
        widget.setObjectName(spec.object_name)
        widget.setToolTip(spec.tip)
        self.widget = widget
        self.default_tip = spec.tip

    def show(self, value: Any) -> None:
        widget = self.widget
        if isinstance(widget, QCheckBox):
            widget.setChecked(bool(value))
        elif isinstance(widget, QComboBox):
            widget.setCurrentText(str(value))
        elif isinstance(widget, QPlainTextEdit):
            if widget.toPlainText() != str(value):
                widget.setPlainText(str(value))
        elif isinstance(widget, QLineEdit):
            widget.setText("" if value is None else str(value))

    def text(self) -> str:
        widget = self.widget
        if isinstance(widget, QPlainTextEdit):
            return widget.toPlainText()
        if isinstance(widget, QLineEdit):
            return widget.text()
        if isinstance(widget, QComboBox):
            return widget.currentText()
        return ""

    def value(self) -> Any:
        """The typed value; raises ValueError with a message naming the key."""
        widget = self.widget
        if isinstance(widget, QCheckBox):
            return widget.isChecked()
        raw = self.text()
        if self.kind is str:
            return raw if setting(self.key).multiline else raw.strip()
        text = raw.strip().replace("_", "")
        if not text:
            if self.optional:
                return None
            raise ValueError(f"{self.key} must not be empty")
        if self.kind is int:
            word = setting(self.key).word
            if word and text == word:
                return word
            try:
                return int(text)
            except ValueError:
                raise ValueError(f"{self.key} must be a whole number, not {raw.strip()!r}") from None
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"{self.key} must be a number, not {raw.strip()!r}") from None
        if not math.isfinite(number):
            raise ValueError(f"{self.key} must be a finite number, not {raw.strip()!r}")
        return number
