"""The `[server]` settings as typed form fields: which widget edits a key, how its text parses, what applies live."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QPlainTextEdit, QWidget

from resources_qt.errors import ValidationError
from resources_qt.project import ServerSettings

__all__ = [
    "LIVE_KEYS",
    "SettingField",
    "SettingSpec",
    "available_specs",
    "settings_problem",
]

LIVE_KEYS = frozenset({
    "name", "version", "instructions", "reader_timeout", "workers", "memory_limit_mb", "page_size",
    "cache_ttl_ms", "cache_scope",
})  # fmt: skip
"""Keys a running server takes at once (name, version and instructions reach the next sessions); the rest
(capabilities are advertised at start, limits are set up when the server starts) need a restart."""


@dataclass(frozen=True)
class SettingSpec:
    """How the view shows one key: its section, label, object name and help."""

    key: str
    section: str
    label: str
    object_name: str
    tip: str


_SPECS = (
    SettingSpec("name", "Identity", "&Name", "serverNameEdit", "The server name clients see (serverInfo.name)"),
    SettingSpec("version", "Identity", "&Version", "serverVersionEdit", "The server version clients see"),
    SettingSpec("instructions", "Identity", "&Instructions", "serverInstructionsEdit",
                "Sent to clients at initialization: how to use this server's resources"),
    SettingSpec("notifications", "Capabilities", "Notifications", "settingsNotifications",
                "Advertise and send resources/list_changed"),
    SettingSpec("subscriptions", "Capabilities", "Subscriptions", "settingsSubscriptions",
                "Accept resources/subscribe and subscriptions/listen"),
    SettingSpec("reader_timeout", "Readers", "Reader &timeout (s)", "readerTimeoutEdit",
                "Seconds a read may take, waiting included"),
    SettingSpec("workers", "Readers", "&Workers", "workersEdit", "Snippet worker processes"),
    SettingSpec("memory_limit_mb", "Readers", "&Memory limit (MB)", "memoryLimitEdit", "Memory per worker"),
    SettingSpec("page_size", "Listing and cache", "&Page size", "pageSizeEdit",
                "Entries per resources/list page"),
    SettingSpec("cache_ttl_ms", "Listing and cache", "Cache &TTL (ms)", "cacheTtlEdit",
                "Default cache hint for reads; empty: no hint"),
    SettingSpec("cache_scope", "Listing and cache", "Cache &scope", "cacheScopeCombo",
                "Who may cache a read: one client (private) or shared caches (public)"),
    SettingSpec("max_queued_reads", "Limits", "Queued reads", "maxQueuedReadsEdit",
                "Reads waiting for a worker before new ones are answered 'busy' (-32000)"),
    SettingSpec("resource_concurrency", "Limits", "Reads per resource", "resourceConcurrencyEdit",
                "Reads of one resource running at once"),
    SettingSpec("max_processes", "Limits", "Processes per worker", "maxProcessesEdit",
                "RLIMIT_NPROC for worker processes"),
    SettingSpec("max_file_size_mb", "Limits", "File size (MB)", "maxFileSizeEdit",
                "RLIMIT_FSIZE for worker processes"),
    SettingSpec("max_subscriptions", "Limits", "Subscriptions per session", "maxSubscriptionsEdit",
                "Subscriptions one session may hold"),
    SettingSpec("max_uri_length", "Limits", "URI length", "maxUriLengthEdit",
                "Longest URI a client may send"),
    SettingSpec("max_sessions", "Limits", "Sessions", "maxSessionsEdit", "Sessions at once"),
    SettingSpec("session_idle_timeout", "Limits", "Session idle timeout (s)", "sessionIdleTimeoutEdit",
                "Seconds before an idle session without a stream may be evicted"),
    SettingSpec("mask_errors", "Limits", "Mask reader errors", "maskErrorsSwitch",
                "Clients get a generic message for reader failures; the full text stays here and in the log"),
)  # fmt: skip


def available_specs() -> list[SettingSpec]:
    """The specs of the keys `ServerSettings` has (limit keys appear once the model defines them)."""
    names = {f.name for f in fields(ServerSettings)}
    return [spec for spec in _SPECS if spec.key in names]


def settings_problem(settings: ServerSettings) -> tuple[str, str] | None:
    """The model's verdict: the first invalid key and its message, or None."""
    try:
        settings.validate()
    except ValidationError as exc:
        key = getattr(exc, "field", None)
        if not isinstance(key, str) or not key:
            # Before errors carried their field, the model named it through problem().
            problem = getattr(settings, "problem", None)
            found = problem() if callable(problem) else None
            key = str(found[0]) if isinstance(found, tuple) else ""
        message = exc.message.removeprefix("[server] ")
        return key.removeprefix("server."), message
    return None


def _kind_of(key: str) -> tuple[type, bool]:
    """(value type, whether empty means None) from the model's annotation."""
    annotation = str(next(f.type for f in fields(ServerSettings) if f.name == key))
    optional = "None" in annotation
    for kind in (bool, float, int):
        if kind.__name__ in annotation:
            return kind, optional
    return str, optional


class SettingField:
    """One key's widget: shows a value, and parses what the user typed (raising ValueError naming the key)."""

    def __init__(self, spec: SettingSpec, parent: QWidget) -> None:
        self.spec = spec
        self.key = spec.key
        self.kind, self.optional = _kind_of(spec.key)
        widget: QWidget
        if self.kind is bool:
            widget = QCheckBox(spec.label.replace("&", ""), parent)
        elif spec.key == "cache_scope":
            combo = QComboBox(parent)
            combo.addItems(["private", "public"])
            widget = combo
        elif spec.key == "instructions":
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
            return raw.strip() if self.key != "instructions" else raw
        text = raw.strip().replace("_", "")
        if not text:
            if self.optional:
                return None
            raise ValueError(f"{self.key} must not be empty")
        if self.kind is int:
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
