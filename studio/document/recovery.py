"""Crash recovery: periodic autosave of unsaved edits to a recovery file, and finding it again."""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QObject, QStandardPaths, QTimer, Signal, Slot

from resources_qt.project import write_atomic

logger = logging.getLogger(__name__)

__all__ = ["RECOVERY_DIR_ENV", "Autosaver", "RecoveryCandidate", "RecoveryStore", "default_recovery_dir"]

RECOVERY_DIR_ENV = "RESOURCE_STUDIO_RECOVERY_DIR"
"""A folder to keep recovery files in instead of the user's data folder (tests use a temporary one)."""

_HEADER = "# Resource Studio recovery file for: "


def default_recovery_dir() -> Path:
    override = os.environ.get(RECOVERY_DIR_ENV)
    if override:
        return Path(override)
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppLocalDataLocation)
    if not base:
        base = str(Path.home() / ".local" / "share" / "resource-studio")
    return Path(base) / "recovery"


@dataclass(frozen=True)
class RecoveryCandidate:
    """Unsaved work found after a crash: `text` is the project TOML, `project_path` what it belongs to."""

    recovery_path: Path
    project_path: Path | None
    text: str
    saved_at: datetime


class RecoveryStore:
    """One recovery file per project path (named by the path's hash; one for untitled work)."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_recovery_dir()

    def path_for(self, project_path: str | os.PathLike[str] | None) -> Path:
        if project_path is None:
            return self.directory / "untitled.toml"
        digest = hashlib.sha256(str(Path(project_path).resolve()).encode("utf-8")).hexdigest()[:24]
        return self.directory / f"{digest}.toml"

    def write(self, project_path: str | os.PathLike[str] | None, text: str) -> Path:
        """Write the recovery file atomically and durably, private to the user (it may hold unsaved secrets)."""
        target = self.path_for(project_path)
        origin = str(Path(project_path).resolve()) if project_path is not None else ""
        write_atomic(target, f"{_HEADER}{origin}\n{text}", mode=0o600)
        return target

    def discard(self, project_path: str | os.PathLike[str] | None) -> None:
        self.path_for(project_path).unlink(missing_ok=True)

    def pending(self, project_path: str | os.PathLike[str] | None) -> RecoveryCandidate | None:
        """The recovery file worth offering: newer than the project file and with different content."""
        target = self.path_for(project_path)
        try:
            raw = target.read_text(encoding="utf-8")
            stamp = target.stat().st_mtime
        except (OSError, UnicodeDecodeError):
            return None
        first, _, text = raw.partition("\n")
        if not first.startswith(_HEADER):
            text = raw
        if project_path is not None:
            source = Path(project_path)
            try:
                if source.stat().st_mtime > stamp or source.read_text(encoding="utf-8") == text:
                    return None
            except (OSError, UnicodeDecodeError):
                pass  # the project file is gone: the recovery file is all that is left
        elif not text.strip():
            return None
        return RecoveryCandidate(target, Path(project_path) if project_path else None, text,
                                 datetime.fromtimestamp(stamp))  # fmt: skip


class Autosaver(QObject):
    """Every `interval_s` seconds, writes the project text to its recovery file if it is unsaved.

    `snapshot()` returns `(project_path, text, dirty)`; nothing is written while the
    document is clean or the text has not changed since the last autosave.

    Signals:
        autosaved(str path): a recovery file was written there.
        autosave_failed(str message): writing it failed, and why.
    """

    autosaved = Signal(str)
    autosave_failed = Signal(str)

    def __init__(
        self,
        store: RecoveryStore,
        snapshot: Callable[[], tuple[Path | None, str, bool]],
        *,
        interval_s: float = 30.0,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._store = store
        self._snapshot = snapshot
        self._last: tuple[Path | None, str] | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(max(1, int(interval_s * 1000)))
        self._timer.timeout.connect(self._on_timeout)

    def start(self) -> None:
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def set_interval(self, seconds: float) -> None:
        self._timer.setInterval(max(1, int(seconds * 1000)))

    def forget(self) -> None:
        """Clean state reached (saved or closed): the next dirty snapshot is written again."""
        self._last = None

    @Slot()
    def _on_timeout(self) -> None:
        self.save_now()

    def save_now(self) -> Path | None:
        path, text, dirty = self._snapshot()
        if not dirty or self._last == (path, text):
            return None
        try:
            written = self._store.write(path, text)
        except OSError as exc:
            logger.warning("autosave failed: %s", exc)
            self.autosave_failed.emit(str(exc))
            return None
        self._last = (path, text)
        self.autosaved.emit(str(written))
        return written
