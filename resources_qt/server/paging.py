"""The split listing cache and opaque cursors for resources/list and resources/templates/list."""

from __future__ import annotations

import base64
import binascii
import threading
from collections.abc import Mapping, Sequence
from typing import Literal, cast

import mcp_types as types
from mcp.shared.exceptions import MCPError

from resources_qt.collection import Resources
from resources_qt.errors import INVALID_PARAMS
from resources_qt.resource import Resource

__all__ = ["Cursor", "ListingCache", "decode_cursor", "encode_cursor"]

_PREFIX = "rs2"

Listing = Literal["d", "t"]
"""Which listing a cursor belongs to: direct resources or templates."""

Cursor = tuple[Listing, int, str]
"""(listing, position of the last item sent, its name)."""


def encode_cursor(listing: Listing, position: int, name: str) -> str:
    """A cursor resuming after `name`, last seen at `position` of `listing`."""
    raw = f"{_PREFIX}:{listing}:{position}:{name}"
    return base64.urlsafe_b64encode(raw.encode("utf-8")).decode("ascii")


def decode_cursor(cursor: str) -> Cursor:
    """What a cursor stands for; a cursor we did not mint is -32602."""
    try:
        raw = base64.b64decode(cursor.encode("ascii"), altchars=b"-_", validate=True).decode("utf-8")
        prefix, listing, position_text, name = raw.split(":", 3)
        position = int(position_text)
        if prefix != _PREFIX or listing not in ("d", "t") or position < 0 or not name:
            raise ValueError(raw)
    except (ValueError, UnicodeError, binascii.Error) as exc:
        raise invalid_cursor(cursor) from exc
    return cast(Listing, listing), position, name


ECHO_LIMIT = 64
"""Characters of a bad cursor that an error echoes: a client's 1 MB cursor must not come back as 2 MB."""


def invalid_cursor(cursor: str) -> MCPError:
    """-32602 naming the cursor once, shortened: the message says it, `data` gives its length."""
    shown = cursor if len(cursor) <= ECHO_LIMIT else cursor[:ECHO_LIMIT] + "…"
    return MCPError(INVALID_PARAMS, f"Invalid cursor: {shown!r}", {"cursorLength": len(cursor)})


class _Listing:
    """One side of the split, with a name -> position index built only when a cursor needs it."""

    __slots__ = ("_index", "items", "kind")

    def __init__(self, kind: Listing, items: list[Resource]) -> None:
        self.kind = kind
        self.items = items
        self._index: dict[str, int] | None = None

    def start_after(self, cursor: str | None) -> int:
        if not cursor:
            return 0
        kind, position, name = decode_cursor(cursor)
        if kind != self.kind:
            raise invalid_cursor(cursor)
        if position < len(self.items) and self.items[position].name == name:
            return position + 1  # unchanged since the previous page: no index needed
        if self._index is None:
            self._index = {resource.name: i for i, resource in enumerate(self.items)}
        found = self._index.get(name)
        # Resuming after the last item sent survives additions and removals
        # between pages; if that item itself is gone, whatever slid into its
        # place comes next.
        return found + 1 if found is not None else min(position, len(self.items))

    def page(self, cursor: str | None, page_size: int) -> tuple[list[Resource], str | None]:
        start = self.start_after(cursor)
        end = start + page_size
        items = self.items[start:end]
        if end >= len(self.items) or not items:
            return items, None
        return items, encode_cursor(self.kind, end - 1, items[-1].name)


class ListingCache:
    """The direct/template split, rebuilt only when `Resources.version` moves; pages convert lazily.

    Splitting 100,000 resources is one cheap pass per change; only the page
    being answered is converted to SDK models, so a listing costs the same
    whatever the catalogue's size.

    Template instances (issue 13: what a template's `instances` snippet
    lists) follow the collection's direct resources, in template order. They
    never enter the collection, so listing them sends no `list_changed` (a
    client re-listing on `list_changed` would loop). A collection resource
    with the same URI or name wins over an instance. Cursors resume after the
    last name sent, so paging stays correct while instances come and go.
    """

    def __init__(self, resources: Resources) -> None:
        self._resources = resources
        self._lock = threading.Lock()
        self._version: tuple[int, int] = (-1, -1)
        self._direct = _Listing("d", [])
        self._templates = _Listing("t", [])
        self._instances: dict[str, tuple[Resource, ...]] = {}
        self._generation = 0

    def set_instances(self, template: str, instances: Sequence[Resource]) -> None:
        """Replace the instances listed for the template named `template`."""
        with self._lock:
            old = self._instances.get(template, ())
            if [_signature(r) for r in instances] == [_signature(r) for r in old]:
                return
            if instances:
                self._instances[template] = tuple(instances)
            else:
                self._instances.pop(template, None)
            self._generation += 1

    def retain(self, templates: set[str]) -> None:
        """Drop the instances of templates not in `templates` (they left the project, or lost `instances`)."""
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
        version = (self._resources.version, self._generation)
        if version == self._version:
            return
        direct: list[Resource] = []
        templates: list[Resource] = []
        for resource in self._resources:
            (templates if resource.is_template else direct).append(resource)
        if self._instances:
            taken = {r.uri for r in direct} | {r.name for r in direct}
            for template in templates:
                for instance in self._instances.get(template.name, ()):
                    if instance.uri in taken or instance.name in taken:
                        continue
                    taken.update((instance.uri, instance.name))
                    direct.append(instance)
        self._direct, self._templates = _Listing("d", direct), _Listing("t", templates)
        self._version = version

    def direct_page(self, cursor: str | None, page_size: int) -> tuple[list[types.Resource], str | None]:
        with self._lock:
            self._refresh()
            items, next_cursor = self._direct.page(cursor, page_size)
        return [cast(types.Resource, r.to_mcp()) for r in items], next_cursor

    def template_page(
        self, cursor: str | None, page_size: int
    ) -> tuple[list[types.ResourceTemplate], str | None]:
        with self._lock:
            self._refresh()
            items, next_cursor = self._templates.page(cursor, page_size)
        return [cast(types.ResourceTemplate, r.to_mcp()) for r in items], next_cursor


def _signature(resource: Resource) -> tuple[object, ...]:
    return (resource.name, resource.uri, resource.title, resource.description, resource.mime_type, resource.size,
            resource.annotations)
