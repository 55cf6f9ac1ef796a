"""The open project as an undoable document: every edit is a QUndoCommand, views listen to its signals."""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack

from resources_qt.errors import ValidationError
from resources_qt.project import Project, ResourceSpec, ServerSettings, load_project, save_project
from resources_qt.project.upstreams import UpstreamSpec
from resources_qt.templates import CompiledTemplate, compile_template
from resources_qt.testing.spec import TestSpec
from studio.document.declarations import CheckCache, KeyIndex, Problem
from studio.document.edits import (
    MERGE_WINDOW_S,
    InsertResource,
    SetPrelude,
    SetSettings,
    SetTests,
    SetUpstreams,
    UpdateResource,
    changed_settings,
)

logger = logging.getLogger(__name__)

__all__ = [
    "MERGE_WINDOW_S", "InstancesFailure", "Problem", "ProjectDocument", "changed_settings",
    "copy_spec", "default_sample", "suffixed_uri",
]

_DIRECT_READER = """def read(uri, params):
    # Return str, bytes, JSON-able data or ResourceContent.
    return f"Hello from {uri}"
"""

_TEMPLATE_READER = """def read(uri, params):
    # params holds the template variables extracted from the URI.
    return {"uri": uri, "params": params}
"""


def copy_spec(spec: ResourceSpec) -> ResourceSpec:
    """A detached copy: lists, dicts and the watch table are not shared with the original."""
    return spec.copy()


class InstancesFailure(NamedTuple):
    """The server's last run of a template's `instances` snippet failed: why, and when (seconds since the epoch)."""

    message: str
    time: float


def default_sample(template: CompiledTemplate) -> str:
    """A template's starter sample: each variable gets a value named after it (`{city}` gives `city-1`)."""
    return template.expand({name: f"{name}-1" for name in template.variable_names})


def suffixed_uri(uri: str, suffix: str) -> str:
    """`uri` with `suffix` before the extension of its last segment (`…/index.md` -> `…/index-copy.md`)."""
    cut = len(uri)
    for mark in ("?", "#"):
        found = uri.find(mark)
        if 0 <= found < cut:
            cut = found
    path, tail = uri[:cut], uri[cut:]
    segment_start = path.rfind("/") + 1
    segment = path[segment_start:]
    dot = segment.rfind(".")
    # Only a short alphanumeric extension is one; "v1.2" or a leading-dot name keeps the suffix at the end.
    extension = segment[dot + 1 :] if dot > 0 else ""
    if extension and len(extension) <= 5 and extension.isalnum() and not extension.isdigit():
        stem_end = segment_start + dot
        return f"{path[:stem_end]}{suffix}{path[stem_end:]}{tail}"
    return f"{path}{suffix}{tail}"


class ProjectDocument(QObject):
    """One open project: the `Project`, its undo stack, its file and whether it is saved.

    The document may hold invalid specs, so that the user's work is kept and
    saved; `errors(name)` says what is wrong, and only specs without errors
    should reach the server.

    Signals:
        project_reset(): a different project was loaded or created; re-read everything.
        resource_added(str name)
        resource_removed(str name)
        resource_changed(str old_name, str new_name): a spec was edited (possibly renamed).
        prelude_changed()
        settings_changed()
        upstreams_changed(): the project's `[[upstreams]]` changed (an import declared one, or its undo).
        tests_changed(): the project's `[[tests]]` changed (added, removed, undone).
        dirty_changed(bool dirty)
        path_changed(str path): "" when the project has no file yet.
        errors_changed(list names): `list[str]` of resource names whose `errors()` may differ now: after an
            add, remove or edit, the edited one and those sharing its old or new address; after a long
            snippet's background check, those with that snippet whose errors changed.
        instances_failure_changed(str name): the server's last run of the template's `instances`
            snippet failed, or answered again (`instances_failure`; runtime state, never saved).
    """

    project_reset = Signal()
    resource_added = Signal(str)
    resource_removed = Signal(str)
    resource_changed = Signal(str, str)
    prelude_changed = Signal()
    settings_changed = Signal()
    upstreams_changed = Signal()
    tests_changed = Signal()
    dirty_changed = Signal(bool)
    path_changed = Signal(str)
    errors_changed = Signal(list)
    instances_failure_changed = Signal(str)

    def __init__(self, project: Project | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.undo_stack = QUndoStack(self)
        self._project = Project()
        self._path: Path | None = None
        self._origin: Path | None = None
        self._by_name: dict[str, ResourceSpec] = {}
        self._keys = KeyIndex(self._project.resources)
        self._checks = CheckCache(self)
        self._checks.reset(self._by_name)
        self._checks.errors_changed.connect(self.errors_changed)
        self._forced_dirty = False
        self._was_dirty = False
        # What was last loaded or saved, and which parts differ from it now ("server", "prelude",
        # "order", "spec:<name>"): each edit re-compares only what it touched.
        self._saved_server = ServerSettings()
        self._saved_prelude = ""
        self._saved_tests: list[TestSpec] = []
        self._saved_upstreams: list[UpstreamSpec] = []
        self._saved_names: list[str] = []
        self._saved_specs: dict[str, ResourceSpec] = {}
        self._differs: set[str] = set()
        self._instances_failures: dict[str, InstancesFailure] = {}
        if project is not None:
            self.set_project(project, project.path)

    # -- state ---------------------------------------------------------------

    @property
    def project(self) -> Project:
        """The live project; edit it only through the document's methods."""
        return self._project

    @property
    def path(self) -> Path | None:
        return self._path

    @property
    def origin(self) -> Path | None:
        """The file an untitled project was copied from (a bundled example), for reading beside it; else None."""
        return self._origin

    def set_origin(self, path: Path | None) -> None:
        self._origin = path

    @property
    def is_dirty(self) -> bool:
        """True exactly when the project differs from what was last loaded or saved (or was restored unsaved)."""
        return self._forced_dirty or bool(self._differs)

    def names(self) -> list[str]:
        """Resource names in project order."""
        return [spec.name for spec in self._project.resources]

    def spec(self, name: str) -> ResourceSpec | None:
        """A copy of the named spec (edit it and pass it to `update_resource`), or None."""
        spec = self._by_name.get(name)
        return copy_spec(spec) if spec is not None else None

    def peek(self, name: str) -> ResourceSpec | None:
        """The stored spec itself, for read-only use by views that ask often (do not mutate)."""
        return self._by_name.get(name)

    def index_of(self, name: str) -> int:
        """Position of the named resource in the project, -1 when absent."""
        for index, spec in enumerate(self._project.resources):
            if spec.name == name:
                return index
        return -1

    def errors(self, name: str) -> list[str]:
        """What keeps the resource from being served: `form_errors` then `snippet_errors`."""
        return self.form_errors(name) + self.snippet_errors(name)

    def form_errors(self, name: str) -> list[str]:
        """The declaration's problems: the builder's validation message and duplicate addresses."""
        return [problem.message for problem in self.form_problems(name)]

    def form_problems(self, name: str) -> list[Problem]:
        """`form_errors` with the field each is about (the `ValidationError.field`), for forms to mark."""
        spec = self._by_name.get(name)
        if spec is None:
            return []
        problems = list(self._checks.form_problems(name, spec))
        duplicates = [other for other in self._keys.names(spec.key) if other != name]
        if duplicates:
            problems.append(Problem(
                f"{spec.key!r} is also declared by {', '.join(repr(n) for n in duplicates)}",
                "uri_template" if spec.is_template else "uri",
            ))  # fmt: skip
        return problems

    def snippet_errors(self, name: str) -> list[str]:
        """Compile errors of the reader, completion and instances snippets, and a missing reader."""
        spec = self._by_name.get(name)
        return list(self._checks.snippet_errors(name, spec)) if spec is not None else []

    def checked_snippet_errors(self, name: str) -> list[str] | None:
        """`snippet_errors` if its snippets were checked since their last edit, else None (nothing compiled)."""
        return self._checks.checked_snippet_errors(name)

    def invalid_names(self) -> list[str]:
        """Resources with errors, in project order: saved as written, but neither served nor accepted by `serve`."""
        return [name for name in self.names() if self.errors(name)]

    def is_valid(self, name: str) -> bool:
        return name in self._by_name and not self.errors(name)

    # -- what the server reported (runtime state: not part of the project, never undone or saved) --

    def instances_failure(self, name: str) -> InstancesFailure | None:
        """How the server's last run of the template's `instances` snippet failed, or None (it answered)."""
        return self._instances_failures.get(name)

    def note_instances_failed(self, name: str, message: str, when: float | None = None) -> None:
        """The server ran the template's `instances` snippet and it failed (the listing has none of it)."""
        if name not in self._by_name:
            return  # reported for a resource that is gone or renamed meanwhile
        self._instances_failures[name] = InstancesFailure(message, time.time() if when is None else when)
        self.instances_failure_changed.emit(name)

    def note_instances_listed(self, name: str) -> None:
        """The template's `instances` snippet answered: a failure shown until now is over."""
        if self._instances_failures.pop(name, None) is not None:
            self.instances_failure_changed.emit(name)

    # -- whole-project operations (not undoable) -----------------------------

    def new_project(self) -> None:
        """An empty project; it serves with notifications and subscriptions on (the studio is for live serving)."""
        self.set_project(Project(server=ServerSettings(notifications=True, subscriptions=True)), None)

    def load(self, path: str | Path) -> None:
        """Open a project file; raises `ProjectError` and keeps the current project on failure."""
        # Work in progress opens as written; its errors are marked, not refused.
        project = load_project(path, strict=False)
        self.set_project(project, Path(path))

    def save(self, path: str | Path | None = None) -> Path:
        """Write the project atomically; without `path`, to its current file."""
        target = Path(path) if path is not None else self._path
        if target is None:
            raise ValidationError("The project has no file name yet; give a path to save it to")
        written = save_project(self._project, target)
        self._forced_dirty = False
        self._remember_saved()
        self.undo_stack.setClean()
        self._set_path(written)
        self._emit_dirty()
        return written

    def set_project(self, project: Project, path: str | Path | None = None, dirty: bool = False) -> None:
        """Replace the whole project (clears undo history)."""
        self.undo_stack.clear()
        self._origin = None
        self._project = project
        self._by_name = {spec.name: spec for spec in project.resources}
        self._keys.reset(project.resources)
        self._checks.reset(self._by_name)
        self._instances_failures.clear()
        self._forced_dirty = dirty
        self._remember_saved()
        self.project_reset.emit()
        self._set_path(Path(path) if path is not None else None)
        self._emit_dirty()

    # -- undoable edits ------------------------------------------------------

    def add_resource(self, *, template: bool) -> str:
        """Add a fresh, valid starter resource (a direct one or a template); returns its name."""
        name = self._unique_name("resource")
        if template:
            uri_template = self._unique_key(f"example://{name}/{{id}}")
            spec = ResourceSpec(
                name=name,
                uri_template=uri_template,
                mime_type="application/json",
                samples=[default_sample(compile_template(uri_template))],
                reader=_TEMPLATE_READER,
            )
        else:
            spec = ResourceSpec(
                name=name,
                uri=self._unique_key(f"example://{name}"),
                mime_type="text/plain",
                reader=_DIRECT_READER,
            )
        self.undo_stack.push(
            InsertResource(self, len(self._project.resources), spec=spec, remove=False, text=f"Add {name}")
        )
        return name

    def duplicate_resource(self, name: str) -> str:
        """Copy a resource under a new name and address, right after the original; returns the new name."""
        original = self._require(name)
        dup = copy_spec(original)
        dup.name = self._unique_name(f"{name}_copy", bare=True)
        if original.uri_template:
            brace = original.uri_template.find("{")
            prefix, rest = original.uri_template[:brace], original.uri_template[brace:]
            dup.uri_template = self._unique_key(prefix.rstrip("/") + "-copy/" + rest)
            dup.samples = []
        elif original.uri:
            dup.uri = self._unique_key(suffixed_uri(original.uri, "-copy"))
            dup.samples = []
        index = self.index_of(name) + 1
        self.undo_stack.push(InsertResource(self, index, spec=dup, remove=False, text=f"Duplicate {name}"))
        return dup.name

    def remove_resource(self, name: str) -> None:
        spec = self._require(name)
        self.undo_stack.push(
            InsertResource(self, self.index_of(name), spec=copy_spec(spec), remove=True, text=f"Delete {name}")
        )

    def update_resource(self, name: str, spec: ResourceSpec) -> None:
        """Replace the named spec (a rename is allowed when the new name is free).

        Rapid edits of the same resource merge into one undo step.

        Raises:
            KeyError: no resource is called `name`.
            ValueError: the new name is empty or taken by another resource.
        """
        before = self._require(name)
        if spec.name != name:
            if not spec.name:
                raise ValueError("Resource name must not be empty")
            if spec.name in self._by_name:
                raise ValueError(f"Another resource is already named {spec.name!r}")
        after = copy_spec(spec)
        if after == before:
            return
        self.undo_stack.push(UpdateResource(self, name, before=copy_spec(before), after=after))

    def set_prelude(self, source: str) -> None:
        if source != self._project.prelude:
            self.undo_stack.push(SetPrelude(self, before=self._project.prelude, after=source))

    def add_test(self, spec: TestSpec) -> None:
        """Append a resource test (one undo step); a test of that name is refused with `ValidationError`."""
        if any(test.name == spec.name for test in self._project.tests):
            raise ValidationError(f"A test named {spec.name!r} already exists", field="tests")
        tests = self._project.tests
        self.undo_stack.push(SetTests(self, f"Add test {spec.name}", before=tests, after=[*tests, spec]))

    def remove_test(self, name: str) -> None:
        """Remove the named resource test (one undo step); an unknown name does nothing."""
        tests = self._project.tests
        kept = [test for test in tests if test.name != name]
        if len(kept) != len(tests):
            self.undo_stack.push(SetTests(self, f"Remove test {name}", before=tests, after=kept))

    def add_upstream(self, spec: UpstreamSpec) -> None:
        """Declare an `[[upstreams]]` entry (one undo step); a name declared already is refused."""
        if any(upstream.name == spec.name for upstream in self._project.upstreams):
            raise ValidationError(f"An upstream named {spec.name!r} already exists", field="upstreams")
        upstreams = self._project.upstreams
        self.undo_stack.push(SetUpstreams(self, f"Add upstream {spec.name}", before=upstreams,
                                          after=[*upstreams, spec]))  # fmt: skip

    def set_server_settings(self, settings: ServerSettings) -> None:
        if settings != self._project.server:
            self.undo_stack.push(SetSettings(self, before=replace(self._project.server), after=replace(settings)))

    # -- primitives used by the commands -------------------------------------

    def _insert(self, index: int, spec: ResourceSpec) -> None:
        stored = copy_spec(spec)
        self._project.resources.insert(index, stored)
        self._by_name[stored.name] = stored
        self._keys.add(stored)
        self._checks.invalidate(stored.name)
        self._compare_order()
        self._compare_spec(stored.name)
        self.resource_added.emit(stored.name)
        self._emit_errors_changed([stored.name], [stored.key])
        self._emit_dirty()

    def _take(self, name: str) -> None:
        spec = self._by_name.pop(name)
        self._project.resources.remove(spec)
        self._keys.remove(spec)
        self._checks.invalidate(name)
        self._compare_order()
        self._differs.discard(f"spec:{name}")
        self._instances_failures.pop(name, None)
        self.resource_removed.emit(name)
        self._emit_errors_changed([], [spec.key])
        self._emit_dirty()

    def _replace(self, old_name: str, spec: ResourceSpec) -> None:
        current = self._by_name.pop(old_name)
        index = self._project.resources.index(current)
        stored = copy_spec(spec)
        self._project.resources[index] = stored
        self._by_name[stored.name] = stored
        self._keys.remove(current)
        self._keys.add(stored)
        self._checks.invalidate(old_name, stored.name)
        if old_name != stored.name:
            self._differs.discard(f"spec:{old_name}")
            self._compare_order()
            # The server reports under the new name at its next listing; the old report is not about it.
            self._instances_failures.pop(old_name, None)
        self._compare_spec(stored.name)
        self.resource_changed.emit(old_name, stored.name)
        self._emit_errors_changed([stored.name], [current.key, stored.key])
        self._emit_dirty()

    def _emit_errors_changed(self, names: list[str], keys: list[str]) -> None:
        # Besides the edited resource, the ones sharing its old or new address gain or lose
        # a duplicate-address error.
        affected = dict.fromkeys(names)
        for key in keys:
            affected.update(dict.fromkeys(self._keys.names(key)))
        self.errors_changed.emit([name for name in affected if name in self._by_name])

    def _apply_prelude(self, source: str) -> None:
        self._project.prelude = source
        self._mark("prelude", source != self._saved_prelude)
        self.prelude_changed.emit()
        self._emit_dirty()

    def _apply_tests(self, tests: list[TestSpec]) -> None:
        self._project.tests = list(tests)
        self._mark("tests", self._project.tests != self._saved_tests)
        self.tests_changed.emit()
        self._emit_dirty()

    def _apply_upstreams(self, upstreams: list[UpstreamSpec]) -> None:
        self._project.upstreams = [replace(upstream) for upstream in upstreams]
        self._mark("upstreams", self._project.upstreams != self._saved_upstreams)
        self._emit_dirty()
        self.upstreams_changed.emit()

    def _apply_settings(self, settings: ServerSettings) -> None:
        self._project.server = replace(settings)
        self._mark("server", self._project.server != self._saved_server)
        self.settings_changed.emit()
        self._emit_dirty()

    # -- dirty state ---------------------------------------------------------

    def _remember_saved(self) -> None:
        self._saved_server = replace(self._project.server)
        self._saved_prelude = self._project.prelude
        self._saved_tests = list(self._project.tests)
        self._saved_upstreams = [replace(upstream) for upstream in self._project.upstreams]
        self._saved_names = self.names()
        self._saved_specs = {spec.name: copy_spec(spec) for spec in self._project.resources}
        self._differs.clear()

    def _mark(self, part: str, differs: bool) -> None:
        if differs:
            self._differs.add(part)
        else:
            self._differs.discard(part)

    def _compare_order(self) -> None:
        # Only adds, removes and renames change the order; a keystroke in a snippet never gets here.
        self._mark("order", self.names() != self._saved_names)

    def _compare_spec(self, name: str) -> None:
        saved = self._saved_specs.get(name)
        self._mark(f"spec:{name}", saved is None or saved != self._by_name.get(name))

    # -- helpers -------------------------------------------------------------

    def _require(self, name: str) -> ResourceSpec:
        spec = self._by_name.get(name)
        if spec is None:
            raise KeyError(f"No resource named {name!r}")
        return spec

    def _unique_name(self, base: str, *, bare: bool = False) -> str:
        if bare and base not in self._by_name:
            return base
        counter = 2 if bare else 1
        while f"{base}_{counter}" in self._by_name:
            counter += 1
        return f"{base}_{counter}"

    def _unique_key(self, key: str) -> str:
        keys = self._keys
        if key not in keys:
            return key
        counter = 2
        while True:
            if "{" in key:
                brace = key.find("{")
                candidate = f"{key[:brace].rstrip('/')}-{counter}/{key[brace:]}"
            else:
                candidate = suffixed_uri(key, f"-{counter}")
            if candidate not in keys:
                return candidate
            counter += 1

    def _set_path(self, path: Path | None) -> None:
        if path != self._path:
            self._path = path
            self._project.path = path
            self.path_changed.emit(str(path) if path is not None else "")

    def _emit_dirty(self) -> None:
        dirty = self.is_dirty
        if dirty != self._was_dirty:
            self._was_dirty = dirty
            self.dirty_changed.emit(dirty)
