"""The resource collection: registration, lookup by URI, template resolution and change callbacks."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from resources_qt.errors import ValidationError
from resources_qt.resource import Reader, Resource
from resources_qt.templates import TemplateIndex

__all__ = ["ChangeKind", "ChangeListener", "Match", "Resources"]

logger = logging.getLogger(__name__)

ChangeKind = Literal["added", "removed"]
ChangeListener = Callable[[ChangeKind, Resource], None]


@dataclass(frozen=True, slots=True)
class Match:
    """What a URI resolved to: the resource and the template values (empty for a direct resource)."""

    resource: Resource
    params: dict[str, str | list[str]]

    @property
    def is_template(self) -> bool:
        return self.resource.is_template


class Resources:
    """An ordered, indexed collection of resources.

    Direct resources are found by exact URI; templates through a prefix
    index (see `resources_qt.templates`). Adding or removing an item calls
    the change listeners; editing an item in place does not, as in the seed.
    All methods are thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._items: list[Resource] = []
        self._by_name: dict[str, Resource] = {}
        self._by_uri: dict[str, Resource] = {}
        self._templates: TemplateIndex[Resource] = TemplateIndex()
        self._dirty = False
        self._listeners: list[ChangeListener] = []
        self._version = 0

    # -- change notification -------------------------------------------------

    def add_listener(self, listener: ChangeListener) -> Callable[[], None]:
        """Call `listener(kind, resource)` after each add or remove; returns the unsubscribe call."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def _notify(self, kind: ChangeKind, resource: Resource) -> None:
        for listener in list(self._listeners):
            try:
                listener(kind, resource)
            except Exception:
                # A listener's failure must not undo or block the change itself.
                logger.exception("Resource change listener %r failed", listener)

    @property
    def version(self) -> int:
        """Grows on every change, in-place edits included; lets callers cache derived lists."""
        return self._version

    # -- registration --------------------------------------------------------

    def register_direct_resource(
        self, name: str, uri: str, description: str, mime_type: str, reader: Reader | None
    ) -> Resource:
        """Declare a resource at one fixed URI; empty name/URI or no reader raise -32602."""
        if not uri:
            raise ValidationError("URI must not be empty")
        return self._register(Resource(name=name, uri=uri, description=description, mime_type=mime_type), reader)

    def register_template_resource(
        self, name: str, uri_template: str, description: str, mime_type: str, reader: Reader | None
    ) -> Resource:
        """Declare a family of URIs; empty name/template or no reader raise -32602."""
        if not uri_template:
            raise ValidationError("URI template must not be empty")
        resource = Resource(name=name, uri_template=uri_template, description=description, mime_type=mime_type)
        return self._register(resource, reader)

    def _register(self, resource: Resource, reader: Reader | None) -> Resource:
        if reader is None:
            raise ValidationError(f"Resource {resource.name!r} has no reader")
        resource.reader = reader
        resource.validate()
        self._insert(resource)
        return resource

    def add_resource(self, resource: Resource) -> Resource:
        """Validate and store a copy of `resource`; returns the stored copy."""
        resource.validate()
        stored = resource.copy()
        self._insert(stored)
        return stored

    def _insert(self, resource: Resource) -> None:
        with self._lock:
            self._check_unique(resource, None)
            self._items.append(resource)
            self._index(resource)
            object.__setattr__(resource, "_owner", self)
            self._version += 1
        self._notify("added", resource)

    def _check_unique(self, resource: Resource, replacing: Resource | None) -> None:
        other = self._by_name.get(resource.name)
        if other is not None and other is not replacing:
            raise ValidationError(f"A resource named {resource.name!r} already exists")
        if resource.is_template:
            for existing in self._items:
                if existing is not replacing and existing.uri_template == resource.uri_template:
                    raise ValidationError(
                        f"URI template {resource.uri_template!r} is already declared by {existing.name!r}"
                    )
        else:
            other = self._by_uri.get(resource.uri)
            if other is not None and other is not replacing:
                raise ValidationError(f"URI {resource.uri!r} is already declared by {other.name!r}")

    def replace(self, name: str, resource: Resource) -> Resource:
        """Swap the resource called `name` for a copy of `resource`, keeping its position.

        An in-place edit: the change listeners are not called.
        """
        resource.validate()
        stored = resource.copy()
        with self._lock:
            old = self._by_name.get(name)
            if old is None:
                raise ValidationError(f"No resource named {name!r}")
            self._check_unique(stored, old)
            self._items[self._items.index(old)] = stored
            object.__setattr__(old, "_owner", None)
            object.__setattr__(stored, "_owner", self)
            self._reindex()
        return stored

    def remove(self, name_or_uri: str) -> Resource | None:
        """Remove the resource with this name, else this URI or template; returns it, or None."""
        with self._lock:
            resource = self._by_name.get(name_or_uri) or self._by_uri.get(name_or_uri)
            if resource is None:
                resource = next((r for r in self._items if r.uri_template == name_or_uri), None)
            if resource is None:
                return None
            self._items.remove(resource)
            object.__setattr__(resource, "_owner", None)
            self._reindex()
        self._notify("removed", resource)
        return resource

    def clear(self) -> None:
        """Remove every resource, one `removed` callback each."""
        with self._lock:
            removed, self._items = self._items, []
            for resource in removed:
                object.__setattr__(resource, "_owner", None)
            self._reindex()
        for resource in removed:
            self._notify("removed", resource)

    # -- indexing ------------------------------------------------------------

    def _index(self, resource: Resource) -> None:
        self._by_name[resource.name] = resource
        if resource.is_template:
            try:
                compiled = resource.compiled_template
            except ValidationError as exc:
                # Only an in-place edit can get here (adding validates); the
                # broken template stays listed but matches nothing.
                logger.warning("Resource %r is not indexed: %s", resource.name, exc.message)
                return
            self._templates.add(compiled, resource)
        else:
            self._by_uri[resource.uri] = resource

    def _reindex(self) -> None:
        self._by_name.clear()
        self._by_uri.clear()
        self._templates.clear()
        for resource in self._items:
            self._index(resource)
        self._dirty = False
        self._version += 1

    def _identity_changed(self, resource: Resource) -> None:
        # Called by a held resource whose name, URI or template was assigned;
        # rebuilding lazily keeps a burst of edits cheap.
        with self._lock:
            self._dirty = True
            self._version += 1

    def _fresh(self) -> None:
        if self._dirty:
            self._reindex()

    # -- lookup --------------------------------------------------------------

    def find_by_uri(self, uri: str) -> Resource | None:
        """The direct resource at exactly `uri` (templates are not consulted)."""
        if not uri:
            raise ValidationError("URI must not be empty")
        with self._lock:
            self._fresh()
            return self._by_uri.get(uri)

    def find_matching_template(self, uri: str) -> Match | None:
        """The most specific template matching `uri`, with its values."""
        if not uri:
            raise ValidationError("URI must not be empty")
        with self._lock:
            self._fresh()
            found = self._templates.match(uri)
        if found is None:
            return None
        return Match(found.item, found.params)

    def resolve(self, uri: str) -> Match | None:
        """Direct resources first, then templates: what a read of `uri` reaches."""
        if not uri:
            raise ValidationError("URI must not be empty")
        with self._lock:
            self._fresh()
            direct = self._by_uri.get(uri)
            if direct is not None:
                return Match(direct, {})
            found = self._templates.match(uri)
        if found is None:
            return None
        return Match(found.item, found.params)

    def get(self, name: str) -> Resource | None:
        """The resource called `name`, or None."""
        with self._lock:
            self._fresh()
            return self._by_name.get(name)

    def direct_resources(self) -> list[Resource]:
        """Direct resources in registration order (what `resources/list` shows)."""
        with self._lock:
            return [r for r in self._items if not r.is_template]

    def templates(self) -> list[Resource]:
        """Templates in registration order (what `resources/templates/list` shows)."""
        with self._lock:
            return [r for r in self._items if r.is_template]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Resource]:
        with self._lock:
            return iter(list(self._items))

    def __contains__(self, name: object) -> bool:
        with self._lock:
            self._fresh()
            return name in self._by_name

    def __repr__(self) -> str:
        return f"Resources({len(self._items)} items)"
