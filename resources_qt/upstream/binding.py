"""Where upstream resources get their reader: the spec's `upstream` names the connection that reads it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from resources_qt.collection import Resources
from resources_qt.content import ResourceContent
from resources_qt.errors import ReaderFailedError, ValidationError
from resources_qt.project import Project, ResourceSpec
from resources_qt.resource import Resource
from resources_qt.upstream.connection import UpstreamConnection, Upstreams

__all__ = ["bind_upstreams", "sync_upstreams", "upstream_or", "upstream_resource", "watch_subscribed"]


class _UpstreamRead:
    """The reader of a resource imported from an upstream: one read upstream per read here."""

    def __init__(self, spec: ResourceSpec, connection: UpstreamConnection | None) -> None:
        self._name, self._upstream = spec.name, spec.upstream
        self.connection = connection
        self.__name__ = self.__qualname__ = f"read_{spec.name}_upstream"

    async def __call__(self, uri: str, params: Mapping[str, Any]) -> list[ResourceContent]:
        if self.connection is None:
            raise ReaderFailedError(f"Resource {self._name!r}: upstream {self._upstream!r} was not declared when "
                                    "the server started; restart it", data={"uri": uri})  # fmt: skip
        return await self.connection.read(uri)


def upstream_resource(spec: ResourceSpec, upstreams: Upstreams) -> Resource:
    """`spec` as a resource read through its upstream (template completions asked there too)."""
    connection = upstreams.get(spec.upstream)
    resource = spec.to_resource(_UpstreamRead(spec, connection))
    resource.unchecked_values = spec.unchecked_values
    if spec.is_template and connection is not None:
        template = spec.uri_template

        async def complete(name: str, value: str, context: Mapping[str, str] | None = None) -> list[str]:
            return await connection.complete(template, name, value, context)

        try:
            variables = resource.compiled_template.variable_names
        except ValidationError:
            variables = ()
        for variable in variables:
            resource.completions.setdefault(variable, complete)
    return resource


def bind_upstreams(project: Project, resources: Resources, *, on_updated: Callable[[str], None]) -> Upstreams:
    """Give each resource of `resources` whose spec names an upstream the upstream's reader.

    The direct resources' URIs are watched upstream from now on, so their `updated` reach
    `on_updated` (the server forwards them to its subscribers) without a read first.
    """
    upstreams = Upstreams([], on_updated=on_updated)
    sync_upstreams(upstreams, project)
    for spec in project.resources:
        if spec.upstream:
            resources.replace(spec.name, upstream_resource(spec, upstreams))
    return upstreams


def sync_upstreams(upstreams: Upstreams, project: Project) -> None:
    """`project`'s `[[upstreams]]` declared in `upstreams`, and its imported direct resources watched upstream.

    Call before its resources are made (`upstream_or`): a resource of a new upstream finds its connection.
    """
    upstreams.update(project.upstreams, project_dir=project.path.parent if project.path is not None else None)
    watched: dict[str, set[str]] = {}
    for spec in project.resources:
        if spec.upstream and spec.uri:
            watched.setdefault(spec.upstream, set()).add(spec.uri)
    for name, uris in watched.items():
        connection = upstreams.get(name)
        if connection is not None:
            connection.watch(uris)


def upstream_or(make: Callable[[ResourceSpec], Resource], upstreams: Upstreams) -> Callable[[ResourceSpec], Resource]:
    """`make` (how the server makes a resource of a spec on reload), with upstream specs read upstream."""

    def made(spec: ResourceSpec) -> Resource:
        return upstream_resource(spec, upstreams) if spec.upstream else make(spec)

    return made


def watch_subscribed(resources: Resources, uri: str) -> None:
    """A subscription here to `uri` of an imported resource (a template's instance too) is made upstream,
    so its `updated` come through; call it for each subscription the server takes."""
    try:
        match = resources.resolve(uri)
    except ValidationError:
        return
    reader = match.resource.reader if match is not None else None
    if isinstance(reader, _UpstreamRead) and reader.connection is not None:
        reader.connection.watch({uri})
