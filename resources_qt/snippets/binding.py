"""Project specs become resources whose readers and completions run as snippets in a pool."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from resources_qt.collection import Resources
from resources_qt.content import ResourceContent
from resources_qt.errors import ReaderMissingError, ValidationError
from resources_qt.project import Project, ResourceSpec, ServerSettings
from resources_qt.project.settings_table import settings_for
from resources_qt.resource import Resource
from resources_qt.snippets.pool import SnippetPool

if TYPE_CHECKING:
    from resources_qt.snippets.readers import SnippetReaders

__all__ = ["bind_project", "configure_pool", "create_pool", "create_readers", "project_folder", "snippet_resource"]

READERS = ("process", "thread")
"""Where `create_readers` runs snippets: the `[server] readers` choices."""

SnippetReader = Callable[[str, Mapping[str, Any]], Awaitable[list[ResourceContent]]]
SnippetCompleter = Callable[[str, str, Mapping[str, str] | None], Awaitable[list[str]]]


def create_pool(project: Project) -> SnippetPool:
    """A pool sized and limited by the project's `[server]` settings, with its prelude (not started)."""
    return SnippetPool(
        **settings_for(project.server, "pool"), prelude=project.prelude, project_dir=project_folder(project)
    )


def create_readers(project: Project, *, readers: str | None = None) -> SnippetReaders:
    """`create_pool`, or for `readers` "thread" (default: the project's `[server] readers`) a `ThreadReaders`
    with the same settings: snippets in threads of this process, no memory or crash containment. Only
    `resource-studio serve` calls this; the studio always runs snippets in worker processes."""
    mode = project.server.readers if readers is None else readers
    if mode not in READERS:
        raise ValidationError(f"readers must be 'process' or 'thread', not {mode!r}", field="readers")
    if mode == "process":
        return create_pool(project)
    from resources_qt.snippets.threads import ThreadReaders

    return ThreadReaders(
        **settings_for(project.server, "pool"), prelude=project.prelude, project_dir=project_folder(project)
    )


def project_folder(project: Project) -> Path | None:
    """The folder a project's snippets run in: the one holding its file (None while unsaved)."""
    return project.path.resolve().parent if project.path is not None else None


def configure_pool(pool: SnippetReaders, settings: ServerSettings) -> None:
    """Apply the pool's `[server]` limits: every key whose table row applies to the pool."""
    pool.configure(**settings_for(settings, "pool"))


def bind_project(project: Project, pool: SnippetReaders, *, apply_settings: bool = True) -> Resources:
    """Every spec of `project` as a resource served by `pool`, in file order.

    Sets the pool's prelude to the project's, its folder (snippets' working
    directory and `PROJECT_DIR`) to the project file's and, unless
    `apply_settings` is False, its limits to the project's `[server]` settings.

    Raises:
        ValidationError: a spec is invalid or duplicates another (-32602).
    """
    pool.set_prelude(project.prelude)
    folder = project_folder(project)
    if folder is not None:
        pool.configure(project_dir=folder)
    if apply_settings:
        configure_pool(pool, project.server)
    resources = Resources()
    for spec in project.resources:
        resources.add_resource(snippet_resource(spec, pool))
    return resources


def snippet_resource(spec: ResourceSpec, pool: SnippetReaders) -> Resource:
    """`spec` as a `Resource` (not validated) whose reader runs `spec.reader` in `pool`.

    A spec with no reader source still becomes a resource; reading it
    answers -32603, the seed's code for a resource without a reader.
    Completion values come from `spec.completions` (static lists) and, for
    every other template variable, from the `spec.complete` snippet.
    """
    reader = _snippet_reader(spec, pool) if spec.reader.strip() else _missing_reader(spec)
    resource = spec.to_resource(reader)
    resource.unchecked_values = spec.unchecked_values
    if spec.is_template and spec.complete.strip():
        completer = _snippet_completer(spec, pool)
        try:
            variables = resource.compiled_template.variable_names
        except ValidationError:
            variables = ()  # the invalid template is reported by validate()
        for variable in variables:
            resource.completions.setdefault(variable, completer)
    return resource


def _snippet_reader(spec: ResourceSpec, pool: SnippetReaders) -> SnippetReader:
    return _SnippetRead(spec, pool)


class _SnippetRead:
    """A snippet resource's reader; a `resources_qt.server.read_cache.VersionedReader`: the read cache
    keeps an answer only while the pool's prelude stays the same (a new one can change every answer)."""

    def __init__(self, spec: ResourceSpec, pool: SnippetReaders) -> None:
        self._key, self._source, self._mime_type = spec.name, spec.reader, spec.mime_type
        self._pool = pool
        self.__name__ = self.__qualname__ = f"read_{spec.name}"

    async def __call__(self, uri: str, params: Mapping[str, Any]) -> list[ResourceContent]:
        return await self._pool.read(
            key=self._key, source=self._source, uri=uri, params=params, mime_type=self._mime_type
        )

    def content_version(self) -> object:
        return self._pool.prelude_digest


def _missing_reader(spec: ResourceSpec) -> SnippetReader:
    name = spec.name

    async def read(uri: str, params: Mapping[str, Any]) -> list[ResourceContent]:
        raise ReaderMissingError(f"Resource {name!r} has no reader", data={"uri": uri})

    return read


def _snippet_completer(spec: ResourceSpec, pool: SnippetReaders) -> SnippetCompleter:
    key, source = spec.name, spec.complete

    async def complete(name: str, value: str, context: Mapping[str, str] | None = None) -> list[str]:
        return await pool.complete(key=key, source=source, variable=name, value=value, context=context or {})

    complete.__qualname__ = complete.__name__ = f"complete_{key}"
    return complete
