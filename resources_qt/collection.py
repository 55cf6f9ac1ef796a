"""The resource collection: registration, lookup by URI, template resolution and change callbacks."""

from __future__ import annotations

import logging
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from resources_qt.errors import ValidationError
from resources_qt.resource import URI_SAFE, Reader, Resource
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



def ascii_uri(uri: str) -> str:
    """`uri` with non-ASCII characters percent-encoded as UTF-8 (RFC 3987's mapping of an IRI to a URI)."""
    return uri if uri.isascii() else urllib.parse.quote(uri, safe=URI_SAFE)


class Resources:
    """An ordered, indexed collection of resources.

    Direct resources are found by exact URI, templates through a segment
    trie (see `resources_qt.templates`). A read resolves a direct resource
    first, so a direct resource always wins over a template that would also
    match; among templates the most specific wins (longer literal prefix
    before the first variable, then fewer variables, then registration
    order). Adding or removing an item calls the change listeners; editing
    an item in place or `replace()` does not, as in the seed. All methods
    are thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._items: list[Resource] = []
        self._by_name: dict[str, Resource] = {}
        self._by_uri: dict[str, Resource] = {}
        self._by_template: dict[str, Resource] = {}
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
        """Declare a resource at one fixed URI and return it.

        Raises:
            ValidationError: empty name or URI, no reader, or a name or URI
                already in the collection (-32602).
        """
        _check_declaration(name, uri, "URI")
        resource = Resource(name=name, uri=uri, description=description, mime_type=mime_type, reader=reader)
        return self._register(resource)

    def register_template_resource(
        self, name: str, uri_template: str, description: str, mime_type: str, reader: Reader | None
    ) -> Resource:
        """Declare a family of URIs and return it.

        Raises:
            ValidationError: empty name or template, an invalid template, no
                reader, or a name or template already in the collection (-32602).
        """
        _check_declaration(name, uri_template, "URI template")
        resource = Resource(
            name=name, uri_template=uri_template, description=description, mime_type=mime_type, reader=reader
        )
        return self._register(resource)

    def _register(self, resource: Resource) -> Resource:
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
            self._fresh()
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
            other = self._by_template.get(resource.uri_template)
            if other is not None and other is not replacing:
                raise ValidationError(
                    f"URI template {resource.uri_template!r} is already declared by {other.name!r}"
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
            self._fresh()
            old = self._by_name.get(name)
            if old is None:
                raise ValidationError(f"No resource named {name!r}")
            self._check_unique(stored, old)
            self._items[self._items.index(old)] = stored
            object.__setattr__(old, "_owner", None)
            self._unindex(old)
            self._index(stored)
            object.__setattr__(stored, "_owner", self)
            self._version += 1
        return stored

    def remove(self, name_or_uri: str) -> Resource | None:
        """Remove the resource with this name, else this URI or template; returns it, or None."""
        with self._lock:
            self._fresh()
            resource = (
                self._by_name.get(name_or_uri)
                or self._by_uri.get(name_or_uri)
                or self._by_template.get(name_or_uri)
            )
            if resource is None:
                return None
            self._items.remove(resource)
            object.__setattr__(resource, "_owner", None)
            self._unindex(resource)
            self._version += 1
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
            self._by_template[resource.uri_template] = resource
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

    def _unindex(self, resource: Resource) -> None:
        # Only valid while the indexes are fresh: the keys are the resource's current identity.
        if self._by_name.get(resource.name) is resource:
            del self._by_name[resource.name]
        if resource.is_template:
            if self._by_template.get(resource.uri_template) is resource:
                del self._by_template[resource.uri_template]
            self._templates.discard(resource)
        elif self._by_uri.get(resource.uri) is resource:
            del self._by_uri[resource.uri]

    def _reindex(self) -> None:
        self._by_name.clear()
        self._by_uri.clear()
        self._by_template.clear()
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
        """The direct resource at exactly `uri` (templates are not consulted).

        Raises:
            ValidationError: `uri` is empty (-32602).
        """
        _check_uri(uri, "find_by_uri")
        with self._lock:
            self._fresh()
            return self._by_uri.get(uri)

    def find_matching_template(self, uri: str) -> Match | None:
        """The most specific template matching `uri`, with its values (direct resources are not consulted).

        Raises:
            ValidationError: `uri` is empty (-32602).
        """
        _check_uri(uri, "find_matching_template")
        with self._lock:
            self._fresh()
            found = self._templates.match(uri)
        if found is None:
            return None
        return Match(found.item, found.params)

    def resolve(self, uri: str) -> Match | None:
        """What a read of `uri` reaches: the direct resource at `uri`, else the most specific template.

        Raises:
            ValidationError: `uri` is empty (-32602).
        """
        _check_uri(uri, "resolve")
        # Addresses are declared ASCII (non-ASCII is refused with its percent-encoded form), so a
        # client that sends the Unicode form reaches the same resource.
        uri = ascii_uri(uri)
        with self._lock:
            self._fresh()
            direct = self._by_uri.get(uri)
            if direct is not None:
                return Match(direct, {})
            found = self._templates.match(uri)
        if found is None:
            return None
        return Match(found.item, found.params)

    def matches(self, uri: str) -> list[Match]:
        """Everything `uri` matches in resolution order; the first is what `resolve` returns.

        Lets an editor show which declarations a URI would have reached but
        are shadowed by a direct resource or a more specific template.
        """
        _check_uri(uri, "matches")
        with self._lock:
            self._fresh()
            direct = self._by_uri.get(uri)
            found = self._templates.match_all(uri)
        head = [Match(direct, {})] if direct is not None else []
        return head + [Match(m.item, m.params) for m in found]

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

    def items_slice(self, start: int, stop: int | None) -> tuple[int, list[Resource]]:
        """`version` and the resources at positions `start` to `stop` (None: the end), read together.

        Lets a listing read only the part of a large collection a page needs,
        and notice by the version that the collection changed between reads.
        """
        with self._lock:
            return self._version, self._items[start:stop]

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


def _check_declaration(name: object, address: object, what: str) -> None:
    # The seed's order: the name first, then the address; the rest is Resource.validate's.
    if not isinstance(name, str) or not name.strip():
        raise ValidationError("Resource name must not be empty")
    if not isinstance(address, str) or not address.strip():
        raise ValidationError(f"Resource {name!r}: {what} must not be empty")


def _check_uri(uri: object, where: str) -> None:
    if not isinstance(uri, str) or not uri.strip():
        raise ValidationError(
            f"{where}: URI must not be empty", data={"uri": uri if isinstance(uri, str) else None}
        )
