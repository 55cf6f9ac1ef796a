"""Keeps the served catalogue equal to the document's declarations; no invalid declaration reaches the server."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from PySide6.QtCore import QObject, Signal, Slot

from resources_qt.project import Project, ResourceSpec
from resources_qt.qt.protocol import StudioController
from studio.document.document import ProjectDocument

logger = logging.getLogger(__name__)

__all__ = ["ServerSync"]


class ServerSync(QObject):
    """Forwards document edits to the facade (`apply_project`, `apply_resource`, `set_prelude`).

    A spec whose declaration (form) has errors is held back; the server keeps
    its last valid declaration until the user fixes it, so a half-typed URI or
    name never breaks a client. A snippet error does not hold a spec back: the
    broken snippet is served, and its reads answer -32000 naming the compile
    error and its line, rather than silently serving the old reader.

    Signals:
        apply_failed(str message): the facade refused an edit (it stays unserved).
    """

    apply_failed = Signal(str)

    def __init__(
        self, document: ProjectDocument, controller: StudioController | None, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._document = document
        self._controller = controller
        # document name -> the spec the server has for it (its server-side name is served.name)
        self._served: dict[str, ResourceSpec] = {}
        document.project_reset.connect(self._on_project_reset)
        document.resource_added.connect(self._on_resource_added)
        document.resource_removed.connect(self._on_resource_removed)
        document.resource_changed.connect(self._on_resource_changed)
        document.prelude_changed.connect(self._on_prelude_changed)
        document.settings_changed.connect(self._on_settings_changed)
        document.upstreams_changed.connect(self._on_settings_changed)  # the server declares them before the resources

    def served_names(self) -> list[str]:
        """Server-side names of what is being served (for tests and the status bar)."""
        return sorted(spec.name for spec in self._served.values())

    def held_back(self) -> list[str]:
        """Document resources whose current declaration is not served because the form has errors."""
        return [name for name in self._document.names() if not self._servable(name)]

    def failing(self) -> list[str]:
        """Served resources whose reads fail because a snippet has errors (compile error, no reader)."""
        document = self._document
        return [name for name in document.names() if self._servable(name) and document.snippet_errors(name)]

    def unserved_and_failing(self) -> tuple[list[str], list[str]]:
        """`held_back()` and `failing()` in one pass, the latter among resources whose snippets were checked
        already: nothing is compiled here (`SnippetSweep` checks the rest without stalling the window)."""
        document = self._document
        held: list[str] = []
        failing: list[str] = []
        for name in document.names():
            if not self._servable(name):
                held.append(name)
            elif document.checked_snippet_errors(name):
                failing.append(name)
        return held, failing

    def valid_project(self) -> Project:
        project = self._document.project
        document = self._document
        specs = [document.spec(name) for name in document.names() if self._servable(name)]
        return Project(server=replace(project.server), prelude=project.prelude,
                       resources=[s for s in specs if s is not None], path=project.path,
                       upstreams=[replace(upstream) for upstream in project.upstreams])  # fmt: skip

    def resync_all(self) -> None:
        project = self.valid_project()
        self._served = {spec.name: spec for spec in project.resources}
        self._call(lambda ctl: ctl.apply_project(project), "apply_project")

    # -- slots ---------------------------------------------------------------------------

    @Slot()
    def _on_project_reset(self) -> None:
        self.resync_all()

    @Slot()
    def _on_settings_changed(self) -> None:
        self.resync_all()

    @Slot()
    def _on_prelude_changed(self) -> None:
        self._call(lambda ctl: ctl.set_prelude(self._document.project.prelude), "set_prelude")

    @Slot(str)
    def _on_resource_added(self, name: str) -> None:
        self._sync(name)
        self._sync_neighbours(self._key_of(name))

    @Slot(str)
    def _on_resource_removed(self, name: str) -> None:
        served = self._served.pop(name, None)
        if served is not None:
            self._call(lambda ctl: ctl.apply_resource(served.name, None), "apply_resource")
            self._sync_neighbours(served.key)

    @Slot(str, str)
    def _on_resource_changed(self, old_name: str, new_name: str) -> None:
        served = self._served.pop(old_name, None)
        if served is not None:
            self._served[new_name] = served
        self._sync(new_name)
        # A key freed or taken may make a duplicate elsewhere valid again.
        self._sync_neighbours(self._key_of(new_name), served.key if served else None)

    # -- internals ---------------------------------------------------------------------

    def _key_of(self, name: str) -> str | None:
        spec = self._document.peek(name)
        return spec.key if spec is not None else None

    def _servable(self, name: str) -> bool:
        return self._document.peek(name) is not None and not self._document.form_errors(name)

    def _sync(self, name: str) -> None:
        if not self._servable(name):
            return  # keep the last valid version (if any) on the server
        spec = self._document.spec(name)
        served = self._served.get(name)
        if spec is None or spec == served:
            return
        if served is None:
            stale = next((doc for doc, s in self._served.items() if s.name == spec.name), None)
            if stale is not None:  # an old, renamed-away version still holds this server-side name
                self._call(lambda ctl: ctl.apply_resource(spec.name, None), "apply_resource")
                del self._served[stale]
        old_name = served.name if served else None
        if self._call(lambda ctl: ctl.apply_resource(old_name, spec), "apply_resource"):
            self._served[name] = spec

    def _sync_neighbours(self, *keys: str | None) -> None:
        wanted = {key for key in keys if key}
        if not wanted:
            return
        for spec in list(self._document.project.resources):
            if spec.key in wanted:
                self._sync(spec.name)

    def _call(self, call: Callable[[StudioController], None], what: str) -> bool:
        if self._controller is None:
            return True
        try:
            call(self._controller)
        except Exception as exc:  # a refused edit must not break editing
            logger.warning("server refused %s: %s", what, exc)
            self.apply_failed.emit(str(exc))
            return False
        return True
