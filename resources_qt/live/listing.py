"""The engine's listing cache, extended with the instances the templates' snippets list."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from resources_qt.collection import Resources
from resources_qt.resource import Resource
from resources_qt.server.paging import ListingCache, _Listing

__all__ = ["LiveListing"]


class LiveListing(ListingCache):
    """`ListingCache` whose direct side is the collection's direct resources followed by the instances.

    The instances never enter the collection: adding them there would send
    `list_changed` on every listing (a client re-listing on `list_changed`
    would loop). A collection resource with the same URI or name wins over an
    instance. Cursors resume after the last name sent, so paging stays
    correct while instances come and go between pages.
    """

    def __init__(self, resources: Resources) -> None:
        super().__init__(resources)
        self._instances: dict[str, tuple[Resource, ...]] = {}
        self._generation = 0
        self._built: tuple[int, int] = (-1, -1)

    def set_instances(self, template: str, instances: Sequence[Resource]) -> None:
        """Replace the instances listed for `template` (a resource name)."""
        with self._lock:
            if [_signature(r) for r in instances] == [_signature(r) for r in self._instances.get(template, ())]:
                return
            if instances:
                self._instances[template] = tuple(instances)
            else:
                self._instances.pop(template, None)
            self._generation += 1

    def retain(self, templates: set[str]) -> None:
        """Drop the instances of templates no longer in the project."""
        with self._lock:
            gone = set(self._instances) - templates
            for name in gone:
                del self._instances[name]
            if gone:
                self._generation += 1

    def instances(self) -> Mapping[str, tuple[Resource, ...]]:
        with self._lock:
            return dict(self._instances)

    def _refresh(self) -> None:
        key = (self._resources.version, self._generation)
        if key == self._built:
            return
        direct: list[Resource] = []
        templates: list[Resource] = []
        for resource in self._resources:
            (templates if resource.is_template else direct).append(resource)
        taken = {r.uri for r in direct} | {r.name for r in direct}
        for name in [t.name for t in templates]:
            for instance in self._instances.get(name, ()):
                if instance.uri in taken or instance.name in taken:
                    continue
                taken.update((instance.uri, instance.name))
                direct.append(instance)
        self._direct, self._templates = _Listing("d", direct), _Listing("t", templates)
        self._built = key


def _signature(resource: Resource) -> tuple[object, ...]:
    return (resource.name, resource.uri, resource.title, resource.description, resource.mime_type, resource.size,
            resource.annotations)
