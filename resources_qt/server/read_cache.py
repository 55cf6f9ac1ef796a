"""Answers for resources that declare a cache hint, kept for their TTL and dropped by every notification and edit."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast, runtime_checkable

from resources_qt.collection import ChangeKind, Resources, ascii_uri
from resources_qt.errors import ValidationError
from resources_qt.resource import Resource

if TYPE_CHECKING:
    from resources_qt.server.notify import Notifier

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_ENTRIES",
    "MAX_ENTRY_BYTES",
    "Identity",
    "Lookup",
    "ReadCache",
    "Ticket",
    "VersionedReader",
    "answer_bytes",
    "connect_read_cache",
    "text_bytes",
]

DEFAULT_MAX_ENTRIES = 1024
DEFAULT_MAX_BYTES = 32 * 1024 * 1024
MAX_ENTRY_BYTES = 1024 * 1024
"""A larger answer is never kept: a handful of them would push everything else out."""

Identity = tuple[int, tuple[tuple[str, str | tuple[str, ...]], ...]]
"""What a URI reads, as the resolver sees it: the resource (by id, held alive by the entry) and the
percent-decoded template values. Every spelling of one resource (`%31` for `1`, `café` for `caf%C3%A9`)
has the same identity, so an `updated` for any of them drops all of them."""

@runtime_checkable
class VersionedReader(Protocol):
    """A reader whose answers may change without its resource being edited (a snippet reader: its
    pool's prelude); the cache keeps an answer only while `content_version()` stays the same."""

    def content_version(self) -> object: ...


@dataclass(frozen=True, slots=True)
class Ticket:
    """What a miss saw: a store made with it is refused if anything was invalidated since."""

    uri: str
    resource: Resource
    collection_version: int
    reader_version: object
    generation: int
    identity: Identity
    view: frozenset[str] | None = None
    """The scopes the reading caller sees by (`resources_qt.server.auth.View`): entries are kept per view, so
    callers who see different things never share one."""


class Lookup(NamedTuple):
    """What `ReadCache.lookup` found: the kept answer and how long it stays valid, or a ticket to store one."""

    value: Any
    """The kept answer, or None on a miss."""
    ticket: Ticket | None
    """On a miss: what `store` needs."""
    ttl_left_ms: int
    """On a hit: milliseconds the answer stays valid (at least 1), so a client is not told the full TTL."""


_Key = tuple[str, "frozenset[str] | None"]
"""An entry's key: the URI as the client spelt it, and the view it was read with."""


@dataclass(slots=True)
class _Entry:
    ticket: Ticket
    expires: float
    value: Any
    size: int


class ReadCache:
    """A bounded (entries and UTF-8 bytes) map of concrete URI -> a read's answer, valid within the resource's TTL.

    An entry is used only while the resource that produced it is still the one
    the URI resolves to, the collection has not changed (its version covers
    adds, removes, replaces and renames), and the reader's content version
    (the snippet prelude) is the same. `invalidate(uri)` and `clear()` drop
    entries and also refuse stores of reads that were already running, so an
    answer computed before a change is never kept after it. Entries are kept
    per URI as the client spelt it (each answer names that URI) and grouped by
    what the URI resolves to: once `connect_read_cache` bound the collection,
    `invalidate(uri)` resolves `uri` as a read does and drops every spelling
    of that resource. Thread-safe.
    """

    def __init__(
        self,
        *,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError(f"max_entries and max_bytes must be positive, not {max_entries}, {max_bytes}")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[_Key, _Entry] = OrderedDict()
        self._by_uri: dict[str, set[_Key]] = {}
        self._by_identity: dict[Identity, set[_Key]] = {}
        self._resources: Resources | None = None
        self._bytes = 0
        self._generation = 0
        self.hits = 0
        self.misses = 0
        self._versioned: dict[type, bool] = {}
        """Reader classes and whether they are `VersionedReader`s: an isinstance() against a
        runtime-checkable Protocol walks its members each time (6-12 us per hinted read, measured)."""

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size_bytes(self) -> int:
        return self._bytes

    def lookup(
        self, uri: str, resource: Resource, resources: Resources, *, view: frozenset[str] | None = None
    ) -> Lookup:
        """The kept answer on a hit; on a miss, a ticket for `store`. `view`: the caller's (see `Ticket.view`)."""
        collection_version = resources.version
        reader_version = self._reader_version(resource)
        now = self._clock()
        key = (uri, view)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                kept = entry.ticket
                if (
                    entry.expires > now
                    and kept.resource is resource
                    and kept.collection_version == collection_version
                    and kept.reader_version == reader_version
                ):
                    self._entries.move_to_end(key)
                    self.hits += 1
                    return Lookup(entry.value, None, max(1, int((entry.expires - now) * 1000.0)))
                self._drop_key_locked(key)
            self.misses += 1
            generation = self._generation
        identity = _identity(uri, resource)
        ticket = Ticket(uri, resource, collection_version, reader_version, generation, identity, view)
        return Lookup(None, ticket, 0)

    def _reader_version(self, resource: Resource) -> object:
        reader = resource.reader
        if reader is None:
            return None
        kind = type(reader)
        versioned = self._versioned.get(kind)
        if versioned is None:
            versioned = self._versioned[kind] = isinstance(reader, VersionedReader)
        return cast(VersionedReader, reader).content_version() if versioned else None

    def store(self, ticket: Ticket, value: Any, *, ttl_ms: int, size: int) -> bool:
        """Keep `value` for `ttl_ms` unless something was invalidated since `ticket`; True if kept.

        `size` is the caller's measure; for a `ReadResourceResult` the cache also
        counts the UTF-8 bytes of its contents and keeps the larger, so the bounds
        hold in bytes even for a caller that counted characters (an emoji is one
        character and four bytes).
        """
        limit = min(MAX_ENTRY_BYTES, self.max_bytes)
        size = max(size, answer_bytes(value, limit=limit))
        if ttl_ms <= 0 or size > limit:
            return False
        expires = self._clock() + ttl_ms / 1000.0
        with self._lock:
            if ticket.generation != self._generation:
                return False
            key = (ticket.uri, ticket.view)
            self._drop_key_locked(key)
            self._entries[key] = _Entry(ticket, expires, value, size)
            self._by_uri.setdefault(ticket.uri, set()).add(key)
            self._by_identity.setdefault(ticket.identity, set()).add(key)
            self._bytes += size
            while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                oldest = next(iter(self._entries))
                self._drop_key_locked(oldest)
            return True

    def bind(self, resources: Resources | None) -> None:
        """Resolve invalidated URIs in `resources` (None: only the URI as given and its ASCII form drop)."""
        self._resources = resources

    def invalidate(self, uri: str) -> None:
        """Forget `uri` and every other spelling of what it reads (an `updated` notification for it, say)."""
        with self._lock:
            self._generation += 1  # from here on, no read that started before is kept
            self._drop_locked(uri)
            self._drop_locked(ascii_uri(uri))
            resources = self._resources if self._by_identity else None  # nothing kept: no resolution to pay for
        if resources is None:
            return
        # Resolved outside the lock: the collection calls into the cache with its own lock held.
        try:
            match = resources.resolve(uri)  # the read's own resolution: the same normalization
        except ValidationError:
            return
        if match is None:
            return
        identity = (id(match.resource), _frozen(match.params))
        with self._lock:
            for spelling in list(self._by_identity.get(identity, ())):
                self._drop_key_locked(spelling)

    def invalidate_resource(self, resource: Resource) -> None:
        """Forget every URI `resource` answered (it was added, removed or replaced)."""
        with self._lock:
            self._generation += 1
            for key in [k for k, e in self._entries.items() if e.ticket.resource is resource]:
                self._drop_key_locked(key)

    def clear(self) -> None:
        """Forget everything (a `list_changed` notification, say)."""
        with self._lock:
            self._generation += 1
            self._entries.clear()
            self._by_uri.clear()
            self._by_identity.clear()
            self._bytes = 0

    def _drop_locked(self, uri: str) -> None:
        """Forget `uri` as every view read it."""
        for key in list(self._by_uri.get(uri, ())):
            self._drop_key_locked(key)

    def _drop_key_locked(self, key: _Key) -> None:
        entry = self._entries.pop(key, None)
        if entry is None:
            return
        self._bytes -= entry.size
        _unindex(self._by_uri, key[0], key)
        _unindex(self._by_identity, entry.ticket.identity, key)


def _unindex(index: dict[Any, set[_Key]], name: object, key: _Key) -> None:
    keys = index.get(name)
    if keys is not None:
        keys.discard(key)
        if not keys:
            del index[name]


def _frozen(params: Mapping[str, str | list[str]]) -> tuple[tuple[str, str | tuple[str, ...]], ...]:
    return tuple(sorted((name, value if isinstance(value, str) else tuple(value)) for name, value in params.items()))


def _identity(uri: str, resource: Resource) -> Identity:
    """What `uri` reads from `resource`: its values matched as `Resources.resolve` matches them."""
    if not resource.is_template:
        return (id(resource), ())
    params = resource.compiled_template.match(ascii_uri(uri))
    return (id(resource), _frozen(params or {}))


def text_bytes(text: str, *, limit: int) -> int:
    """The UTF-8 size of `text`, exact up to `limit`; past it, some figure above `limit`.

    ASCII text costs nothing to measure (CPython knows a string is ASCII); other
    text is encoded once, unless its length alone is already over `limit`.
    """
    if text.isascii() or len(text) > limit:
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def answer_bytes(value: object, *, limit: int) -> int:
    """The UTF-8 bytes of a `ReadResourceResult`'s contents (URIs, text or base64, metadata); 0 for anything else."""
    contents = getattr(value, "contents", None)
    if not isinstance(contents, list):
        return 0
    total = 0
    for content in contents:
        for part in (getattr(content, "uri", ""), getattr(content, "text", None), getattr(content, "blob", None)):
            if isinstance(part, str):
                total += text_bytes(part, limit=limit)
        meta = getattr(content, "meta", None)
        if meta:
            total += text_bytes(str(meta), limit=limit)
        if total > limit:
            break
    return total


def connect_read_cache(cache: ReadCache, *, notifier: Notifier, resources: Resources) -> Callable[[], None]:
    """Have every notification and every collection change drop what `cache` kept; returns the disconnect
    call (the engine's close() runs it, so a long-lived collection does not keep the cache alive)."""

    def on_notification(method: str, uri: str) -> None:
        if uri:
            cache.invalidate(uri)
        else:
            cache.clear()

    def on_change(kind: ChangeKind, resource: Resource) -> None:
        cache.invalidate_resource(resource)

    cache.bind(resources)
    unlisten_notifier = notifier.add_listener(on_notification)
    unlisten_resources = resources.add_listener(on_change)

    def disconnect() -> None:
        unlisten_notifier()
        unlisten_resources()
        cache.bind(None)

    return disconnect
