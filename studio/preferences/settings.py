"""The studio's persistent preferences: window layout, theme, recent files, last project, server defaults."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QObject, QSettings, Signal

__all__ = ["MAX_RECENT_FILES", "MAX_RECENT_TARGETS", "SETTINGS_ENV", "StudioSettings"]

SETTINGS_ENV = "RESOURCE_STUDIO_SETTINGS"
"""An INI file to use instead of the platform's settings store (tests point it at a temporary file)."""

MAX_RECENT_FILES = 10
MAX_RECENT_TARGETS = 10
"""Remote servers (URLs and command lines) File > Connect to Server… offers again; tokens are never kept."""


class StudioSettings(QObject):
    """Typed access to `QSettings`, so keys and defaults live in one place.

    Signals:
        recent_files_changed(list paths): `list[str]`, the recent project files now, most recent first.
    """

    recent_files_changed = Signal(list)

    def __init__(self, path: str | os.PathLike[str] | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        location = path if path is not None else os.environ.get(SETTINGS_ENV)
        if location:
            self._store = QSettings(str(location), QSettings.Format.IniFormat)
        else:
            self._store = QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope,
                                    "Resource Studio", "resource-studio")  # fmt: skip

    @property
    def file_name(self) -> str:
        return self._store.fileName()

    # -- recent files / last project ------------------------------------------------

    def recent_files(self) -> list[str]:
        value = self._store.value("files/recent", [])
        if isinstance(value, str):  # QSettings collapses one-element lists in INI files
            value = [value]
        items = value if isinstance(value, (list, tuple)) else []
        return [str(item) for item in items if item]

    def add_recent_file(self, path: str | os.PathLike[str]) -> None:
        entry = str(Path(path).resolve())
        files = [entry] + [item for item in self.recent_files() if item != entry]
        self._set_recent(files[:MAX_RECENT_FILES])

    def remove_recent_file(self, path: str | os.PathLike[str]) -> None:
        entry = str(Path(path).resolve())
        self._set_recent([item for item in self.recent_files() if item != entry])

    def clear_recent_files(self) -> None:
        self._set_recent([])

    def _set_recent(self, files: list[str]) -> None:
        self._store.setValue("files/recent", files)
        self.recent_files_changed.emit(list(files))

    def last_project(self) -> str | None:
        value = self._store.value("files/last_project", "")
        return str(value) if value else None

    def set_last_project(self, path: str | os.PathLike[str] | None) -> None:
        self._store.setValue("files/last_project", str(Path(path).resolve()) if path else "")

    # -- client mode: recent remote targets ------------------------------------------------

    def recent_targets(self) -> list[str]:
        """URLs and command lines connected to, most recent first (never a token)."""
        value = self._store.value("remote/recent", [])
        if isinstance(value, str):  # QSettings collapses one-element lists in INI files
            value = [value]
        items = value if isinstance(value, (list, tuple)) else []
        return [str(item) for item in items if item]

    def add_recent_target(self, target: str) -> None:
        entry = target.strip()
        targets = [entry] + [item for item in self.recent_targets() if item != entry]
        self._store.setValue("remote/recent", targets[:MAX_RECENT_TARGETS])

    def remote_era(self) -> str:
        """The era last chosen in Connect to Server…: "auto", "handshake" or "2026-07-28"."""
        value = str(self._store.value("remote/era", "auto"))
        return value if value in ("auto", "handshake", "2026-07-28") else "auto"

    def set_remote_era(self, era: str) -> None:
        self._store.setValue("remote/era", era)

    # -- window layout ------------------------------------------------------------------

    def window_geometry(self) -> QByteArray | None:
        return self._bytes("window/geometry")

    def window_state(self) -> QByteArray | None:
        return self._bytes("window/state")

    def save_window(self, geometry: QByteArray, state: QByteArray) -> None:
        self._store.setValue("window/geometry", geometry)
        self._store.setValue("window/state", state)

    def splitter_state(self, name: str) -> QByteArray | None:
        """The saved sizes of the named splitter (None: use the defaults)."""
        return self._bytes(f"layout/{name}")

    def set_splitter_state(self, name: str, state: QByteArray) -> None:
        self._store.setValue(f"layout/{name}", state)

    def layout_flag(self, name: str, default: bool) -> bool:
        """A remembered on/off choice of the layout (builder shown, word wrap, distraction-free)."""
        return self._bool(f"layout/{name}", default)

    def set_layout_flag(self, name: str, value: bool) -> None:
        self._store.setValue(f"layout/{name}", bool(value))

    def workspace_page(self) -> str:
        return str(self._store.value("layout/page", "editor"))

    def set_workspace_page(self, page: str) -> None:
        self._store.setValue("layout/page", page)

    def theme(self) -> str:
        """The remembered theme: "system", "light" or "dark"."""
        value = str(self._store.value("appearance/theme", "system"))
        return value if value in ("system", "light", "dark") else "system"

    def set_theme(self, name: str) -> None:
        self._store.setValue("appearance/theme", name)

    def clear_layout(self) -> None:
        """Forget every remembered layout choice (View > Reset Layout)."""
        self._store.remove("layout")

    def _bytes(self, key: str) -> QByteArray | None:
        value = self._store.value(key)
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    # -- server panel defaults -------------------------------------------------------

    def http_host(self) -> str:
        return str(self._store.value("server/host", "127.0.0.1"))

    def http_port(self) -> int:
        return self._int("server/port", 8765)

    def save_http_endpoint(self, host: str, port: int) -> None:
        self._store.setValue("server/host", host)
        self._store.setValue("server/port", int(port))

    def announce_edits(self) -> bool:
        return self._bool("server/announce_edits", True)

    def set_announce_edits(self, value: bool) -> None:
        self._store.setValue("server/announce_edits", bool(value))

    def autosave_seconds(self) -> int:
        return max(5, self._int("files/autosave_seconds", 30))

    def set_autosave_seconds(self, seconds: int) -> None:
        self._store.setValue("files/autosave_seconds", int(seconds))

    def _int(self, key: str, default: int) -> int:
        value = self._store.value(key, default)
        try:
            return int(value) if isinstance(value, (int, float, str)) else default
        except ValueError:
            return default

    def _bool(self, key: str, default: bool) -> bool:
        value = self._store.value(key, default)
        if isinstance(value, str):  # INI files store booleans as text
            return value.lower() in ("true", "1", "yes")
        return bool(value)

    def sync(self) -> None:
        self._store.sync()
