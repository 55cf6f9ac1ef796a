"""The split listing cache and opaque cursors for resources/list and resources/templates/list."""

from __future__ import annotations

import base64
import binascii
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
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

Visible = Callable[[str], bool]
"""Whether the caller may see a resource, by the name its scopes are declared under (an instance: its
template's); None: everything."""


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


FIRST_CHUNK = 256
"""Collection items the split reads at first; each further read doubles, so a full walk takes few lock rounds."""

MAX_RESTARTS = 4
"""Times a page restarts because the collection changed under it before it reads a consistent whole copy."""


class _Split:
    """The direct and template listings of one collection version, split only as far as a page has needed.

    The first page of a 100,000-resource catalogue reads a few hundred
    items instead of all of them; walking every page reads the collection
    once per version, as splitting it whole would. Instances are appended
    when the walk reaches the collection's end.
    """

    __slots__ = ("_chunk", "_index", "_instances", "_items", "_scanned", "complete", "direct", "owners",
                 "templates", "version")

    def __init__(self, version: int, instances: Mapping[str, tuple[Resource, ...]],
                 items: list[Resource] | None = None) -> None:
        self.version = version
        self._instances = instances
        self._items = items  # a whole copy (after repeated changes) instead of reading the collection
        self._scanned = 0
        self._chunk = FIRST_CHUNK
        self._index: dict[tuple[Listing, str], int] | None = None
        self.complete = False
        self.direct: list[Resource] = []
        self.templates: list[Resource] = []
        self.owners: dict[int, str] = {}
        """id() of each listed instance -> its template's name (whose scopes it has)."""

    def listing(self, kind: Listing) -> list[Resource]:
        return self.direct if kind == "d" else self.templates

    def extend(self, resources: Resources, kind: Listing, count: int) -> bool:
        """Split until `kind` has `count` items or the collection ends; False if the collection changed."""
        wanted = self.listing(kind)
        while len(wanted) < count and not self.complete:
            if self._items is not None:
                chunk = self._items[self._scanned:]
            else:
                version, chunk = resources.items_slice(self._scanned, self._scanned + self._chunk)
                if version != self.version:
                    return False
                self._chunk *= 2
            self._scanned += len(chunk)
            for resource in chunk:
                (self.templates if resource.is_template else self.direct).append(resource)
            if self._items is not None or not chunk:
                self._finish()
        return True

    def _finish(self) -> None:
        self.complete = True
        if not self._instances:
            return
        taken = {r.uri for r in self.direct} | {r.name for r in self.direct}
        for template in self.templates:
            for instance in self._instances.get(template.name, ()):
                if instance.uri in taken or instance.name in taken:
                    continue
                taken.update((instance.uri, instance.name))
                self.direct.append(instance)
                self.owners[id(instance)] = template.name

    def position_of(self, kind: Listing, name: str) -> int | None:
        """Where `name` stands in the complete listing `kind` (call after splitting the whole collection)."""
        if self._index is None:
            index: dict[tuple[Listing, str], int] = {("d", r.name): i for i, r in enumerate(self.direct)}
            index.update({("t", r.name): i for i, r in enumerate(self.templates)})
            self._index = index
        return self._index.get((kind, name))


class ListingCache:
    """Pages of the direct/template split of a collection, split lazily per `Resources.version`.

    A page reads only as much of the collection as it shows (the first
    page of 100,000 resources reads a few hundred), and only the page
    being answered is converted to SDK models, so a listing costs about
    the same whatever the catalogue's size. Cursors name the last item
    sent: paging resumes after it although resources were added or removed
    between pages, and if that item itself is gone, whatever slid into its
    place comes next.

    Template instances (issue 13: what a template's `instances` snippet
    lists) follow the collection's direct resources, in template order. They
    never enter the collection, so listing them sends no `list_changed` (a
    client re-listing on `list_changed` would loop). A collection resource
    with the same URI or name wins over an instance.
    """

    def __init__(self, resources: Resources) -> None:
        self._resources = resources
        self._lock = threading.Lock()
        self._split: _Split | None = None
        self._instances: dict[str, tuple[Resource, ...]] = {}
        self._generation = 0
        self._split_generation = -1

    def set_instances(self, template: str, instances: Sequence[Resource]) -> None:
        """Replace the instances listed for the template named `template`.

        O(1) when `instances` is the tuple already listed: every resources/list page sets the answer
        the `InstanceLister` keeps (the same tuple while it is reused, or when a new run lists the
        same), so a page neither compares 10,000 instances nor throws away the split.
        """
        listed = tuple(instances)
        with self._lock:
            old = self._instances.get(template, ())
            if listed is old or not (listed or old):
                return
            if listed:
                self._instances[template] = listed
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

    def _current(self) -> _Split:
        split = self._split
        if split is None or split.version != self._resources.version or self._split_generation != self._generation:
            split = _Split(self._resources.version, dict(self._instances))
            self._split, self._split_generation = split, self._generation
        return split

    def _page(
        self, kind: Listing, cursor: str | None, page_size: int, visible: Visible | None = None
    ) -> tuple[list[Resource], str | None]:
        position, name = -1, ""
        if cursor:
            cursor_kind, position, name = decode_cursor(cursor)
            if cursor_kind != kind:
                raise invalid_cursor(cursor)
        for _ in range(MAX_RESTARTS):
            page = _page_of(self._current(), self._resources, kind, position, name, page_size, visible)
            if page is not None:
                return page
            self._split = None  # the collection changed under the page: start over from its new version
        # Edits keep arriving: page through one consistent whole copy, as the listing was built before.
        version, items = self._resources.items_slice(0, None)
        split = _Split(version, dict(self._instances), items)
        self._split, self._split_generation = split, self._generation
        page = _page_of(split, self._resources, kind, position, name, page_size, visible)
        assert page is not None, "a split of a whole copy cannot see the collection change"
        return page

    def direct_page(
        self, cursor: str | None, page_size: int, visible: Visible | None = None
    ) -> tuple[list[types.Resource], str | None]:
        """One resources/list page; with `visible`, of what the caller may see only."""
        with self._lock:
            items, next_cursor = self._page("d", cursor, page_size, visible)
        return [cast(types.Resource, r.to_mcp()) for r in items], next_cursor

    def template_page(
        self, cursor: str | None, page_size: int, visible: Visible | None = None
    ) -> tuple[list[types.ResourceTemplate], str | None]:
        with self._lock:
            items, next_cursor = self._page("t", cursor, page_size, visible)
        return [cast(types.ResourceTemplate, r.to_mcp()) for r in items], next_cursor


def _page_of(
    split: _Split,
    resources: Resources,
    kind: Listing,
    position: int,
    name: str,
    page_size: int,
    visible: Visible | None = None,
) -> tuple[list[Resource], str | None] | None:
    """The page after the item `name` last seen at `position` (-1: the first page); None if the collection changed."""
    start = 0
    if position >= 0:
        if not split.extend(resources, kind, position + 1):
            return None
        items = split.listing(kind)
        if position < len(items) and items[position].name == name:
            start = position + 1  # unchanged since the previous page: nothing more to look up
        else:
            if not split.extend(resources, kind, sys.maxsize):
                return None
            found = split.position_of(kind, name)
            start = found + 1 if found is not None else min(position, len(split.listing(kind)))
    if visible is not None:
        return _visible_page(split, resources, kind, start, page_size, visible)
    end = start + page_size
    # One item past the page tells whether another page follows.
    if not split.extend(resources, kind, end + 1):
        return None
    items = split.listing(kind)
    page = items[start:end]
    if end >= len(items) or not page:
        return page, None
    return page, encode_cursor(kind, end - 1, page[-1].name)



def _visible_page(
    split: _Split, resources: Resources, kind: Listing, start: int, page_size: int, visible: Visible
) -> tuple[list[Resource], str | None] | None:
    """The page of items from `start` the caller may see; None if the collection changed.

    Its cursor names the last item sent at position 0: resuming looks the name up (the split's index)
    instead of trusting a position, which would tell the caller how many items it was not shown.
    """
    owners = split.owners
    page: list[Resource] = []
    index = start
    while True:
        if not split.extend(resources, kind, index + 1):
            return None
        items = split.listing(kind)
        if index >= len(items):
            return page, None
        item = items[index]
        if visible(owners.get(id(item), item.name)):
            if len(page) == page_size:
                return page, encode_cursor(kind, 0, page[-1].name)
            page.append(item)
        index += 1
