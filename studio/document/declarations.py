"""What the document knows about its declarations besides the specs: names by address, and cached checks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from PySide6.QtCore import QObject, Signal, Slot

from resources_qt.errors import ValidationError
from resources_qt.project import ResourceSpec
from resources_qt.snippets.kinds import RESOURCE_KINDS
from studio.document.snippet_checks import SnippetChecks

__all__ = ["CheckCache", "KeyIndex", "Problem"]


class Problem(NamedTuple):
    """One problem of a declaration: the message, and the field it is about (None: not one field)."""

    message: str
    field: str | None = None


class KeyIndex:
    """Resource names by address (a URI or a URI template), built on first use and then kept edit by edit.

    Rebuilding it for 10,000 resources on every keystroke shows, so each edit adds and removes what
    it touched; `reset` starts again from the resources of a project that replaced the whole one.
    It holds the project's resource list, never the document (no reference cycle to collect).
    """

    def __init__(self, resources: Sequence[ResourceSpec] = ()) -> None:
        self._resources = resources
        self._names_by_key: dict[str, list[str]] | None = None

    def names(self, key: str) -> list[str]:
        """The resources declaring `key`, in project order ([] for "" or an unknown key)."""
        return list(self._index().get(key, [])) if key else []

    def __contains__(self, key: str) -> bool:
        return key in self._index()

    def reset(self, resources: Sequence[ResourceSpec]) -> None:
        """Index `resources` (the live list the document edits), when first asked."""
        self._resources = resources
        self._names_by_key = None

    def add(self, spec: ResourceSpec) -> None:
        if self._names_by_key is not None and spec.key:
            self._names_by_key.setdefault(spec.key, []).append(spec.name)

    def remove(self, spec: ResourceSpec) -> None:
        if self._names_by_key is None or not spec.key:
            return
        names = self._names_by_key.setdefault(spec.key, [])
        if spec.name in names:
            names.remove(spec.name)
        if not names:
            del self._names_by_key[spec.key]

    def _index(self) -> dict[str, list[str]]:
        if self._names_by_key is None:
            index: dict[str, list[str]] = {}
            for spec in self._resources:
                if spec.key:
                    index.setdefault(spec.key, []).append(spec.name)
            self._names_by_key = index
        return self._names_by_key


class CheckCache(QObject):
    """Each resource's own form problems and snippet errors, computed when first asked and kept until
    `invalidate`.

    The two are cached apart: opening a project needs the form checks (what decides whether a spec is
    served) for every resource, the snippet compile checks only for what is shown. A long snippet is
    compiled in the background (`SnippetChecks`); when its answer arrives, the resources with that
    snippet are checked again. It holds the document's specs by name, never the document.

    Signals:
        errors_changed(list names): `list[str]` of resource names whose snippet errors differ since a long
            snippet's background check answered.
    """

    errors_changed = Signal(list)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._specs: Mapping[str, ResourceSpec] = {}
        self._form_cache: dict[str, list[Problem]] = {}
        self._snippet_cache: dict[str, list[str]] = {}
        self._snippet_checks = SnippetChecks(self)
        self._snippet_checks.checks_finished.connect(self._on_checks_finished)

    def form_problems(self, name: str, spec: ResourceSpec) -> list[Problem]:
        """What `spec.validate()` says of the resource (the cached list itself: do not mutate)."""
        cached = self._form_cache.get(name)
        if cached is None:
            cached = self._form_cache[name] = self._check_form(spec)
        return cached

    def snippet_errors(self, name: str, spec: ResourceSpec) -> list[str]:
        """Compile errors of the resource's snippets and a missing reader (the cached list: do not mutate)."""
        cached = self._snippet_cache.get(name)
        if cached is None:
            cached = self._snippet_cache[name] = self._check_snippets(spec)
        return cached

    def checked_snippet_errors(self, name: str) -> list[str] | None:
        """A copy of the cached snippet errors, None when the snippets were not checked since their last edit."""
        cached = self._snippet_cache.get(name)
        return list(cached) if cached is not None else None

    def reset(self, specs: Mapping[str, ResourceSpec]) -> None:
        """Forget every check: `specs` (the live mapping the document edits) are a new project's."""
        self._specs = specs
        self._form_cache.clear()
        self._snippet_cache.clear()

    def invalidate(self, *names: str) -> None:
        """Forget the checks of `names`."""
        for name in names:
            self._form_cache.pop(name, None)
            self._snippet_cache.pop(name, None)

    @Slot(str)
    def _on_checks_finished(self, source: str) -> None:
        # Only the resources with that snippet: checking every cached one again compiled them all on the
        # GUI thread after each long snippet's check (207 ms for 2,000 resources, past the check cache).
        changed = []
        for name, spec in self._specs.items():
            if name not in self._snippet_cache or all(getattr(spec, kind.key) != source for kind in RESOURCE_KINDS):
                continue
            before = self._snippet_cache.pop(name)
            if self.snippet_errors(name, spec) != before:
                changed.append(name)
        if changed:
            self.errors_changed.emit(changed)

    @staticmethod
    def _check_form(spec: ResourceSpec) -> list[Problem]:
        try:
            spec.validate()
        except ValidationError as exc:
            field = getattr(exc, "field", None)
            return [Problem(exc.message, field if isinstance(field, str) else None)]
        return []

    def _check_snippets(self, spec: ResourceSpec) -> list[str]:
        snippet: list[str] = []
        for kind in RESOURCE_KINDS:
            found = self._snippet_checks.result(
                getattr(spec, kind.key), filename=f"<{kind.noun.lower()}>", function=kind.function
            )
            if found is not None:
                line, _column, message = found
                snippet.append(f"{kind.noun} snippet, line {line}: {message}")
        for kind in RESOURCE_KINDS:
            if kind.required and not getattr(spec, kind.key).strip():
                snippet.append(f"The resource has no {kind.noun.lower()} snippet")
        return snippet
