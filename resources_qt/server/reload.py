"""Applying an edited project to a live collection, and announcing what changed to subscribers."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mcp.shared.uri_template import UriTemplate

from resources_qt.collection import Resources
from resources_qt.errors import ValidationError
from resources_qt.notifications import ListChanged, Updated
from resources_qt.project import Project, ResourceSpec
from resources_qt.resource import Resource
from resources_qt.templates import compile_template

if TYPE_CHECKING:
    from resources_qt.server.engine import ResourceServer

__all__ = ["ChangeSummary", "announce_changes", "apply_project", "apply_spec", "served_specs", "uris_of"]

logger = logging.getLogger(__name__)

MakeResource = Callable[[ResourceSpec], Resource]


@dataclass
class ChangeSummary:
    """What an edit did: listing-visible changes and resources whose content may read differently."""

    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    relisted: list[str] = field(default_factory=list)
    """Replaced in place with a different listing entry (name, title, URI, ...)."""
    changed: list[str] = field(default_factory=list)
    """Names (after the edit) whose reader, MIME type or any other declaration changed."""
    changed_keys: dict[str, str] = field(default_factory=dict)
    """name -> the URI or template it had before the edit, for subscribers of old URIs."""
    everything: bool = False
    """The prelude changed: every resource may read differently."""
    refused: dict[str, str] = field(default_factory=dict)
    """name -> why its new version was not applied (its previous version, if any, keeps serving)."""

    @property
    def catalogue_changed(self) -> bool:
        return bool(self.added or self.removed or self.relisted)

    @property
    def in_place_catalogue_change(self) -> bool:
        """Catalogue changes the collection does not broadcast by itself (replace is an in-place edit)."""
        return bool(self.relisted)

    def __bool__(self) -> bool:
        return self.catalogue_changed or bool(self.changed) or self.everything


def _listing(spec: ResourceSpec) -> object:
    return spec.to_resource(None).listing_fields()


def apply_spec(
    resources: Resources,
    old: ResourceSpec | None,
    new: ResourceSpec | None,
    make: MakeResource,
    summary: ChangeSummary | None = None,
) -> ChangeSummary:
    """Add, replace or remove one resource; `old`/`new` None mean add/remove."""
    summary = summary if summary is not None else ChangeSummary()
    if old is None and new is None:
        return summary
    if new is None:
        assert old is not None
        if resources.remove(old.name) is not None:
            summary.removed.append(old.name)
            summary.changed_keys[old.name] = old.key
        return summary
    if old is None or resources.get(old.name) is None:
        resources.add_resource(make(new))
        summary.added.append(new.name)
        return summary
    if old == new:
        return summary
    resources.replace(old.name, make(new))
    if _listing(old) != _listing(new):
        summary.relisted.append(new.name)
    summary.changed.append(new.name)
    summary.changed_keys[new.name] = old.key
    return summary


def apply_project(resources: Resources, old: Project, new: Project, make: MakeResource) -> ChangeSummary:
    """Bring `resources` (built from `old`) in line with `new`, touching only what differs."""
    summary = ChangeSummary(everything=old.prelude != new.prelude)
    old_specs = {spec.name: spec for spec in old.resources}
    new_specs = {spec.name: spec for spec in new.resources}
    for name, spec in old_specs.items():
        if name not in new_specs:
            apply_spec(resources, spec, None, make, summary)
    for name, spec in new_specs.items():
        try:
            apply_spec(resources, old_specs.get(name), spec, make, summary)
        except ValidationError as exc:
            summary.refused[name] = exc.message
    if summary.refused:
        _retry_by_removal(resources, old_specs, new_specs, make, summary)
    return summary


def _retry_by_removal(
    resources: Resources,
    old_specs: dict[str, ResourceSpec],
    new_specs: dict[str, ResourceSpec],
    make: MakeResource,
    summary: ChangeSummary,
) -> None:
    # Edits that swap URIs between resources clash one at a time; with the
    # refused ones out of the way they land. What still clashes gets its
    # previous version back.
    refused, summary.refused = summary.refused, {}
    for name in refused:
        resources.remove(name)
    for name, first_error in refused.items():
        try:
            resources.add_resource(make(new_specs[name]))
        except ValidationError:
            summary.refused[name] = first_error
            old = old_specs.get(name)
            if old is not None:
                try:
                    resources.add_resource(make(old))
                except ValidationError:
                    summary.removed.append(name)
            continue
        summary.changed.append(name)
        summary.relisted.append(name)
        if name in old_specs:
            summary.changed_keys[name] = old_specs[name].key


def served_specs(resources: Resources, old: Project, new: Project, summary: ChangeSummary) -> list[ResourceSpec]:
    """The specs actually being served after `apply_project`: new ones, or old ones where refused."""
    old_specs = {spec.name: spec for spec in old.resources}
    served: list[ResourceSpec] = []
    for spec in new.resources:
        if spec.name not in summary.refused:
            served.append(spec)
        elif spec.name in old_specs and resources.get(spec.name) is not None:
            served.append(old_specs[spec.name])
    return served


def uris_of(server: ResourceServer, names: Iterable[str], old_keys: dict[str, str]) -> list[str]:
    """The subscribed concrete URIs whose resource is among `names` (or was, under its old URI)."""
    wanted = set(names)
    old_uris = {key for key in old_keys.values() if not UriTemplate.is_template(key)}
    old_templates = [compile_template(key) for key in old_keys.values() if UriTemplate.is_template(key)]
    uris: set[str] = set()
    for uri in server.subscribed_uris():
        if uri in old_uris or any(t.match(uri) is not None for t in old_templates):
            uris.add(uri)
            continue
        try:
            match = server.resources.resolve(uri)
        except ValidationError:
            # A URI the collection cannot resolve belongs to no resource; it must not stop the others.
            logger.debug("Skipping unresolvable subscribed URI %r", uri)
            continue
        if match is not None and match.resource.name in wanted:
            uris.add(uri)
    return sorted(uris)


async def announce_changes(server: ResourceServer, summary: ChangeSummary, *, key: str | None = None) -> None:
    """Send what the collection did not: list_changed for in-place edits, updated for changed content.

    `key` names the file version applied (see ResourceServer.change_key); each
    notification gets its own key derived from it.
    """
    if summary.in_place_catalogue_change:
        await server.notify(ListChanged(), key=f"{key}:list" if key else None)
    if summary.everything:
        names: Iterable[str] = [r.name for r in server.resources]
    else:
        names = [*summary.changed, *summary.removed]
    for uri in uris_of(server, names, summary.changed_keys):
        uri_key = f"{key}:{hashlib.sha256(uri.encode()).hexdigest()[:16]}" if key else None
        await server.notify(Updated(uri), key=uri_key)
