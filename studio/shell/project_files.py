"""Opening, saving and recovering the document's project file, with recent files and autosave."""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections.abc import Callable
from dataclasses import replace
from importlib import resources
from pathlib import Path

from PySide6.QtCore import QMimeData, QObject, Signal, Slot
from PySide6.QtGui import QAction

from resources_qt.errors import ValidationError
from resources_qt.project import ProjectError, dumps_project, loads_project
from studio.document.document import ProjectDocument
from studio.document.recovery import Autosaver, RecoveryCandidate, RecoveryStore
from studio.preferences.settings import StudioSettings
from studio.shell.prompts import Prompts, UnsavedChoice

logger = logging.getLogger(__name__)

__all__ = ["DEFAULT_EXAMPLE", "ProjectFiles", "bundled_example"]

DEFAULT_EXAMPLE = "support_desk.toml"
_SOURCE_EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_untitled = itertools.count(1)
"""Numbers of this process's new projects: each is "Untitled N" until its first save names it after its file, so
two of them never share a server name, nor the key a client configuration files them under."""


def bundled_example(name: str = DEFAULT_EXAMPLE) -> Path | None:
    """The example project shipped in the `resource_studio_examples` data package, if present."""
    candidates: list[Path] = []
    with contextlib.suppress(ModuleNotFoundError, TypeError):  # not pip-installed
        candidates.append(Path(str(resources.files("resource_studio_examples"))) / name)
    candidates.append(_SOURCE_EXAMPLES / name)  # a checkout that is not pip-installed
    return next((path for path in candidates if path.is_file()), None)


class ProjectFiles(QObject):
    """The file side of one `ProjectDocument`: every question goes through `prompts`.

    Signals:
        project_opened(): a project was opened, created, restored or taken from an example.
        label_changed(): the name shown for the project changed (e.g. an example was saved).
        message_posted(str text, int timeout_ms): a line for the status bar.
    """

    project_opened = Signal()
    label_changed = Signal()
    message_posted = Signal(str, int)

    def __init__(
        self,
        document: ProjectDocument,
        *,
        settings: StudioSettings,
        recovery: RecoveryStore,
        prompts: Prompts,
        flush_edits: Callable[[], None] = lambda: None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.document = document
        self.settings = settings
        self.recovery = recovery
        self.prompts = prompts
        self._flush_edits = flush_edits
        self._example_name = ""
        self._untitled_name = ""  # the server name a new project was given, until its first save
        self.autosaver = Autosaver(recovery, self.snapshot, interval_s=settings.autosave_seconds(),
                                   parent=self)  # fmt: skip

    def label(self) -> str:
        """The project's name for titles and prompts."""
        if self.document.path is not None:
            return self.document.path.name
        if self._example_name:
            return f"{self._example_name} (example)"
        return self._untitled_name or "Untitled"

    def _set_example_name(self, name: str) -> None:
        if name != self._example_name:
            self._example_name = name
            self.label_changed.emit()

    def offer_commands(self, *, new: QAction, open_: QAction, save: QAction, save_as: QAction) -> None:
        """Do what File > New, Open…, Save and Save As… ask (the window's actions)."""
        for action, slot in ((new, self._on_new_triggered), (open_, self._on_open_triggered),
                             (save, self._on_save_triggered), (save_as, self._on_save_as_triggered)):  # fmt: skip
            action.triggered.connect(slot)

    @Slot()
    def _on_new_triggered(self) -> None:
        self.new_project()

    @Slot()
    def _on_open_triggered(self) -> None:
        self.ask_and_open()

    @Slot()
    def _on_save_triggered(self) -> None:
        self.save()

    @Slot()
    def _on_save_as_triggered(self) -> None:
        self.save_as()

    # -- opening -------------------------------------------------------------------------

    def open_initial(self, path: Path | None) -> None:
        """At start-up: the given project, else the last one, else the bundled example (untitled).

        Unsaved untitled work left by a crash is offered too, unless the opened
        project's own recovery file was just restored.
        """
        if path is not None:
            opened = self.open_project(path)
        else:
            last = self.settings.last_project()
            opened = bool(last and Path(last).is_file() and self.open_project(last))
        if not opened and path is None:
            example = bundled_example()
            if example is not None:
                self.open_example(example)
        if not self.document.is_dirty:
            self.offer_untitled_recovery()

    def open_project(self, path: str | Path, *, ask_to_save: bool = True) -> bool:
        """Open a project file (offering its recovery file after a crash); False if cancelled or failed."""
        if ask_to_save and not self.maybe_save():
            return False
        path = Path(path)
        try:
            self.document.load(path)
        except ProjectError as exc:
            self.prompts.report_error("Cannot open project", exc.message)
            return False
        self._set_example_name("")
        self._untitled_name = ""
        self.settings.add_recent_file(path)
        self.settings.set_last_project(path)
        self.autosaver.forget()
        candidate = self.recovery.pending(path)
        if candidate is not None and self.prompts.ask_restore(candidate):
            self._restore(candidate, path)
        elif candidate is not None:
            self.recovery.discard(path)
        self.project_opened.emit()
        return True

    @Slot(str)
    def open_recent(self, path: str) -> bool:
        """Open an entry of File > Open Recent; one whose file is gone leaves the list, with an error."""
        if not Path(path).is_file():
            self.settings.remove_recent_file(path)
            self.prompts.report_error("Cannot open project", f"{path} no longer exists")
            return False
        return self.open_project(path)

    def ask_and_open(self) -> bool:
        if not self.maybe_save():
            return False
        start = str(self.document.path.parent) if self.document.path else str(Path.home())
        path = self.prompts.ask_open_path(start)
        return path is not None and bool(path) and self.open_project(path, ask_to_save=False)

    def open_example(self, path: Path) -> bool:
        """Open a bundled example as an untitled project, so saving asks where to put it."""
        try:
            project = loads_project(path.read_text(encoding="utf-8"), source=str(path))
        except (OSError, ProjectError) as exc:
            self.prompts.report_error("Cannot open the example", str(exc))
            return False
        self.document.set_project(project, None)
        self.document.set_origin(path)  # its recorded snapshots still lie beside the example
        self._untitled_name = ""
        self._set_example_name(path.stem)
        self.project_opened.emit()
        return True

    def offer_untitled_recovery(self) -> bool:
        candidate = self.recovery.pending(None)
        if candidate is None:
            return False
        if self.prompts.ask_restore(candidate):
            return self._restore(candidate, None)
        self.recovery.discard(None)
        return False

    def _restore(self, candidate: RecoveryCandidate, path: Path | None) -> bool:
        try:
            project = loads_project(candidate.text, source=str(candidate.recovery_path), strict=False)
        except ProjectError as exc:
            self.prompts.report_error("Cannot restore the recovered work", exc.message)
            return False
        self.document.set_project(project, path, dirty=True)
        self.message_posted.emit("Restored unsaved work from the recovery file", 8000)
        self.project_opened.emit()
        return True

    def new_project(self) -> bool:
        if not self.maybe_save():
            return False
        self.discard_recovery()
        self.document.new_project()
        name = f"Untitled {next(_untitled)}"
        project = self.document.project
        self.document.set_project(replace(project, server=replace(project.server, name=name)), None)
        self._untitled_name = name
        self._set_example_name("")
        self.label_changed.emit()
        self.project_opened.emit()
        return True

    # -- saving --------------------------------------------------------------------------

    def save(self) -> bool:
        if self.document.path is None:
            return self.save_as()
        return self._save_to(self.document.path)

    def save_as(self, path: str | Path | None = None) -> bool:
        if path is None:
            suggestion = str(self.document.path or Path.home() / f"{self._example_name or 'untitled'}.toml")
            chosen = self.prompts.ask_save_path(suggestion)
            if not chosen:
                return False
            path = chosen
        return self._save_to(Path(path))

    def _save_to(self, path: Path) -> bool:
        self._flush_edits()
        previous = self.document.path
        server = self.document.project.server
        named = previous is None and bool(self._untitled_name) and server.name == self._untitled_name
        if named:
            # A new project's first save names its server after the file (a name the user typed stays).
            self.document.set_server_settings(replace(server, name=path.stem))
        try:
            written = self.document.save(path)
        except (OSError, ValidationError) as exc:
            if named:
                self.document.undo_stack.undo()  # not saved: still untitled
            self.prompts.report_error("Cannot save the project", str(exc))
            return False
        self.recovery.discard(previous)
        self.recovery.discard(written)
        self.autosaver.forget()
        self.settings.add_recent_file(written)
        self.settings.set_last_project(written)
        self._untitled_name = ""
        self._set_example_name("")
        invalid = self.document.invalid_names()
        if invalid:
            # Saved as written so nothing is lost; `serve` refuses the file until fixed.
            self.message_posted.emit(
                f"Saved {written}; {len(invalid)} resource(s) still have errors: {', '.join(invalid)}", 10000
            )
        else:
            self.message_posted.emit(f"Saved {written}", 4000)
        return True

    def maybe_save(self) -> bool:
        """Ask about unsaved changes; True when it is fine to go on (saved or discarded)."""
        # Typing still inside the editor's debounce counts as a change too.
        self._flush_edits()
        if not self.document.is_dirty:
            return True
        choice = self.prompts.ask_unsaved(self.label())
        if choice is UnsavedChoice.SAVE:
            return self.save()
        if choice is UnsavedChoice.DISCARD:
            self.discard_recovery()
            return True
        return False

    def discard_recovery(self) -> None:
        """Clean state reached (saved, discarded or closed): no recovery file to offer."""
        self.recovery.discard(self.document.path)
        self.autosaver.forget()

    def snapshot(self) -> tuple[Path | None, str, bool]:
        """What the autosaver writes: (project path, project text, whether unsaved)."""
        try:
            text = dumps_project(self.document.project)
        except (TypeError, ValueError) as exc:  # a half-typed value that TOML cannot hold yet
            logger.debug("autosave skipped: %s", exc)
            return self.document.path, "", False
        return self.document.path, text, self.document.is_dirty


def dropped_project(data: QMimeData) -> Path | None:
    """The project file dragged onto the window: exactly one local `.toml` file, else None."""
    urls = [url for url in data.urls() if url.isLocalFile()] if data.hasUrls() else []
    if len(urls) == 1 and urls[0].toLocalFile().endswith(".toml"):
        return Path(urls[0].toLocalFile())
    return None
