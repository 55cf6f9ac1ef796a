"""The resource form's detail fields: size, annotations.lastModified (with "Now"), the cache hint, unchecked values."""

from __future__ import annotations

from dataclasses import fields, replace
from datetime import UTC, datetime

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLayout,
    QLineEdit,
    QPushButton,
    QWidget,
)

from resources_qt.errors import ValidationError
from resources_qt.project import ResourceSpec
from resources_qt.resource import Annotations, CacheHint
from studio.builder.scopes_field import ScopesField

__all__ = ["HAS_UNCHECKED_VALUES", "ResourceDetails", "now_iso"]

HAS_UNCHECKED_VALUES = "unchecked_values" in {f.name for f in fields(ResourceSpec)}
"""Whether the model knows the per-resource opt-out of the template value checks."""

_NO_CACHE = "no hint"


def now_iso() -> str:
    """The current time as ISO 8601 UTC to the second, e.g. 2026-12-01T10:30:00Z."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _parse_iso(text: str) -> None:
    try:
        datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"annotations.lastModified must be an ISO 8601 date and time such as {now_iso()}, not {text!r}"
        ) from None


def _whole(text: str, key: str) -> int | None:
    """The field's number, None when empty; ValueError naming `key` otherwise."""
    text = text.strip().replace("_", "")
    if not text:
        return None
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{key} must be a whole number, not {text!r}") from None
    if value < 0:
        raise ValueError(f"{key} must not be negative, not {value}")
    return value


class ResourceDetails(QObject):
    """Size, last modified, cache hint and (for templates) the unchecked-values switch of one resource.

    Its widgets belong to the form (`parent`), which lays out `rows()` with its own
    fields so the labels line up.

    `apply(spec)` writes the fields into a spec and returns what it could not take
    as (field, message) pairs; the untaken values stay typed and the spec keeps its
    old ones, so nothing invalid reaches the document and nothing typed is lost.

    Signals:
        edited(): text was typed (commit after a pause).
        changed(): a switch or choice flipped (commit now).
        editing_finished(): a text field lost focus or Enter was pressed.
    """

    edited = Signal()
    changed = Signal()
    editing_finished = Signal()

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self._loading = False
        self.size_edit = QLineEdit(parent)
        self.size_edit.setObjectName("sizeEdit")
        self.size_edit.setPlaceholderText("bytes, if known")
        self.size_edit.setToolTip("The resource's size in bytes, sent in resources/list (empty: not declared)")
        self.last_modified_edit = QLineEdit(parent)
        self.last_modified_edit.setObjectName("lastModifiedEdit")
        self.last_modified_edit.setPlaceholderText("ISO 8601 time")
        self.last_modified_edit.setToolTip(
            "annotations.lastModified: when the content last changed, ISO 8601, e.g. 2026-01-31T12:00:00Z"
        )
        self.now_button = QPushButton("Now", parent)
        self.now_button.setObjectName("lastModifiedNowButton")
        self.now_button.setToolTip("Set lastModified to the current time (UTC)")
        self.cache_ttl_edit = QLineEdit(parent)
        self.cache_ttl_edit.setObjectName("resourceCacheTtlEdit")
        self.cache_ttl_edit.setPlaceholderText("ttl in ms")
        self.cache_ttl_edit.setToolTip(
            "How long a client may reuse a read of this resource, in milliseconds; empty: the project's default"
        )
        self.cache_scope_combo = QComboBox(parent)
        self.cache_scope_combo.setObjectName("resourceCacheScope")
        self.cache_scope_combo.addItems(["private", "public"])
        self.cache_scope_combo.setToolTip("Who may cache a read: one client (private) or shared caches (public)")
        self.unchecked_check = QCheckBox("Skip the value checks", parent)
        self.unchecked_check.setObjectName("uncheckedValuesCheck")
        self.unchecked_check.setToolTip(
            "Opt out of the value checks: by default a value with '/' in a simple {var}, a '..' segment,\n"
            "a NUL byte or an absolute path is refused (-32602). Only for readers that check paths themselves."
        )
        self.unchecked_check.setVisible(False)
        self.scopes = ScopesField(parent)  # `scopes`: studio/builder/scopes_field.py
        self.scopes.edited.connect(self.edited)
        self.scopes.editing_finished.connect(self.editing_finished)

        self._modified_row = QHBoxLayout()
        self._modified_row.setContentsMargins(0, 0, 0, 0)
        self._modified_row.addWidget(self.last_modified_edit, 1)
        self._modified_row.addWidget(self.now_button)
        self._cache_row = QHBoxLayout()
        self._cache_row.setContentsMargins(0, 0, 0, 0)
        self._cache_row.addWidget(self.cache_ttl_edit, 1)
        self._cache_row.addWidget(self.cache_scope_combo)

        for edit in (self.size_edit, self.last_modified_edit, self.cache_ttl_edit):
            edit.textEdited.connect(self._on_text_edited)
            edit.editingFinished.connect(self._on_editing_finished)
        self.cache_scope_combo.activated.connect(self._on_choice)
        self.unchecked_check.toggled.connect(self._on_toggled)
        self.now_button.clicked.connect(self._on_now_clicked)

    def rows(self) -> list[tuple[str, QWidget | QLayout, QWidget]]:
        """(label, field, the label's buddy) rows for the form's layout."""
        return [
            ("Si&ze", self.size_edit, self.size_edit),
            ("&Last modified", self._modified_row, self.last_modified_edit),
            ("&Cache hint", self._cache_row, self.cache_ttl_edit),
            ("Sc&opes", self.scopes.edit, self.scopes.edit),
            ("", self.unchecked_check, self.unchecked_check),
        ]

    def markable(self) -> dict[str, QWidget]:
        """The widgets by the field names errors carry."""
        return {
            "size": self.size_edit,
            "annotations.lastModified": self.last_modified_edit,
            "annotations.last_modified": self.last_modified_edit,
            "cache": self.cache_ttl_edit,
            "cache.ttl_ms": self.cache_ttl_edit,
            "cache.scope": self.cache_scope_combo,
            "unchecked_values": self.unchecked_check,
            "scopes": self.scopes.edit,
        }

    def set_template(self, template: bool) -> None:
        self.unchecked_check.setVisible(template and HAS_UNCHECKED_VALUES)

    def load(self, spec: ResourceSpec) -> None:
        self._loading = True
        try:
            self.size_edit.setText("" if spec.size is None else str(spec.size))
            modified = spec.annotations.last_modified if spec.annotations else None
            self.last_modified_edit.setText(modified or "")
            self.cache_ttl_edit.setText("" if spec.cache is None else str(spec.cache.ttl_ms))
            self.cache_scope_combo.setCurrentText(spec.cache.scope if spec.cache else "private")
            self.unchecked_check.setChecked(bool(getattr(spec, "unchecked_values", False)))
            self.set_template(spec.is_template)
            self.scopes.load(spec)
        finally:
            self._loading = False

    def apply(self, spec: ResourceSpec, *, template: bool) -> list[tuple[str, str]]:
        """Write the fields into `spec` (in place); returns the (field, message) of values not taken."""
        problems: list[tuple[str, str]] = []
        try:
            spec.size = _whole(self.size_edit.text(), "size")
        except ValueError as exc:
            problems.append(("size", str(exc)))
        modified = self.last_modified_edit.text().strip() or None
        try:
            if modified is not None:
                _parse_iso(modified)
            annotations = spec.annotations or Annotations()
            updated = replace(annotations, last_modified=modified)
            spec.annotations = None if updated.is_empty else updated
        except ValueError as exc:
            problems.append(("annotations.lastModified", str(exc)))
        try:
            ttl = _whole(self.cache_ttl_edit.text(), "cache.ttl_ms")
            public = self.cache_scope_combo.currentText() == "public"
            spec.cache = None if ttl is None else CacheHint(ttl, "public" if public else "private")
        except (ValueError, ValidationError) as exc:
            problems.append(("cache.ttl_ms", str(exc)))
        problems += self.scopes.apply(spec)
        if HAS_UNCHECKED_VALUES:
            # Only templates have values to check; a direct resource never carries the switch.
            setattr(spec, "unchecked_values", template and self.unchecked_check.isChecked())  # noqa: B010
        return problems

    @Slot(str)
    def _on_text_edited(self, _text: str) -> None:
        if not self._loading:
            self.edited.emit()

    @Slot()
    def _on_editing_finished(self) -> None:
        if not self._loading:
            self.editing_finished.emit()

    @Slot(int)
    def _on_choice(self, _index: int) -> None:
        if not self._loading:
            self.changed.emit()

    @Slot(bool)
    def _on_toggled(self, _checked: bool) -> None:
        if not self._loading:
            self.changed.emit()

    @Slot()
    def _on_now_clicked(self) -> None:
        self.last_modified_edit.setText(now_iso())
        self.changed.emit()
