"""The questions the studio asks the user, as plain callables so tests can answer them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from studio.document.recovery import RecoveryCandidate

__all__ = ["FILE_FILTER", "Prompts", "UnsavedChoice", "dialog_prompts"]

FILE_FILTER = "Resource Studio projects (*.toml);;All files (*)"


class UnsavedChoice(Enum):
    SAVE = "save"
    DISCARD = "discard"
    CANCEL = "cancel"


@dataclass
class Prompts:
    """`ask_unsaved(label)`, `ask_restore(candidate)`, `ask_open_path(start_dir)`,
    `ask_save_path(suggestion)` and `report_error(title, message)`."""

    ask_unsaved: Callable[[str], UnsavedChoice]
    ask_restore: Callable[[RecoveryCandidate], bool]
    ask_open_path: Callable[[str], str | None]
    ask_save_path: Callable[[str], str | None]
    report_error: Callable[[str, str], None]


def dialog_prompts(parent: QWidget) -> Prompts:
    """The real thing: modal message boxes and file dialogs over `parent`."""

    def ask_unsaved(label: str) -> UnsavedChoice:
        buttons = QMessageBox.StandardButton
        answer = QMessageBox.question(
            parent, "Unsaved changes", f"Save the changes to {label}?",
            buttons.Save | buttons.Discard | buttons.Cancel, buttons.Save,
        )  # fmt: skip
        if answer == buttons.Save:
            return UnsavedChoice.SAVE
        return UnsavedChoice.DISCARD if answer == buttons.Discard else UnsavedChoice.CANCEL

    def ask_restore(candidate: RecoveryCandidate) -> bool:
        name = candidate.project_path.name if candidate.project_path else "an untitled project"
        answer = QMessageBox.question(
            parent, "Restore unsaved work?",
            f"Resource Studio found unsaved changes to {name} from "
            f"{candidate.saved_at:%Y-%m-%d %H:%M}, probably left by a crash.\n\nRestore them?",
        )  # fmt: skip
        return answer == QMessageBox.StandardButton.Yes

    def ask_open_path(start: str) -> str | None:
        path, _ = QFileDialog.getOpenFileName(parent, "Open project", start, FILE_FILTER)
        return path or None

    def ask_save_path(suggestion: str) -> str | None:
        path, _ = QFileDialog.getSaveFileName(parent, "Save project as", suggestion, FILE_FILTER)
        if path and not Path(path).suffix:
            path += ".toml"
        return path or None

    def report_error(title: str, message: str) -> None:
        QMessageBox.warning(parent, title, message)

    return Prompts(ask_unsaved, ask_restore, ask_open_path, ask_save_path, report_error)
