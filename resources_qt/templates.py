"""URI templates: parsing and matching through the SDK's RFC 6570 code, and an index over many templates.

Resolution order among templates, most specific first:

1. more literal characters before the first variable;
2. then fewer variables;
3. then registration order.

The index buckets templates by their literal prefix (the text before the
first ``{``). A lookup probes one dictionary per distinct prefix length,
longest first, so its cost grows with the number of distinct prefix lengths
(a handful in practice), not with the number of templates.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from mcp.shared.uri_template import InvalidUriTemplate, UriTemplate

from resources_qt.errors import ValidationError

__all__ = ["CompiledTemplate", "TemplateIndex", "TemplateMatch", "compile_template"]

T = TypeVar("T")

Params = dict[str, str | list[str]]


@dataclass(frozen=True, slots=True)
class CompiledTemplate:
    """A parsed URI template with what the index needs to rank it."""

    template: str
    parsed: UriTemplate = field(repr=False, compare=False)
    prefix: str
    """Literal text before the first variable."""
    variable_names: tuple[str, ...]

    @property
    def specificity(self) -> tuple[int, int]:
        """Sort key, smaller first: longer literal prefix, then fewer variables."""
        return (-len(self.prefix), len(self.variable_names))

    def match(self, uri: str) -> Params | None:
        """The percent-decoded variable values, or None when the URI does not match."""
        return self.parsed.match(uri)

    def expand(self, values: dict[str, str]) -> str:
        """The URI for these values (missing variables are left out, as RFC 6570 says)."""
        return self.parsed.expand(values)


def compile_template(template: str) -> CompiledTemplate:
    """Parse a URI template.

    Raises:
        ValidationError: the template is empty, has no variable, or is not
            valid RFC 6570 as the SDK accepts it; the message names the problem
            and, where known, the character position (-32602).
    """
    if not isinstance(template, str) or not template.strip():
        raise ValidationError("URI template must not be empty")
    try:
        parsed = UriTemplate.parse(template)
    except InvalidUriTemplate as exc:
        where = f" at position {exc.position}" if exc.position is not None else ""
        raise ValidationError(f"Invalid URI template {template!r}{where}: {exc}") from exc
    names = tuple(parsed.variable_names)
    if not names:
        raise ValidationError(f"URI template {template!r} has no {{variable}}; declare it as a direct URI")
    brace = template.find("{")
    return CompiledTemplate(template=template, parsed=parsed, prefix=template[:brace], variable_names=names)


@dataclass(frozen=True, slots=True)
class TemplateMatch(Generic[T]):
    """A template entry that matched a URI, and the values it extracted."""

    item: T
    params: Params


@dataclass(slots=True)
class _Entry(Generic[T]):
    compiled: CompiledTemplate
    order: int
    item: T


class TemplateIndex(Generic[T]):
    """Templates bucketed by literal prefix; resolves a URI to the most specific match."""

    def __init__(self) -> None:
        self._buckets: dict[str, list[_Entry[T]]] = {}
        # Distinct prefix lengths, longest first: the probe order of `match`.
        self._lengths: list[int] = []
        self._order = 0
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def add(self, compiled: CompiledTemplate, item: T) -> None:
        """Index `item` under `compiled`; later additions lose ties to earlier ones."""
        entry = _Entry(compiled, self._order, item)
        self._order += 1
        self._size += 1
        bucket = self._buckets.setdefault(compiled.prefix, [])
        bucket.append(entry)
        bucket.sort(key=lambda e: (len(e.compiled.variable_names), e.order))
        if len(compiled.prefix) not in self._lengths:
            self._lengths.append(len(compiled.prefix))
            self._lengths.sort(reverse=True)

    def discard(self, item: T) -> bool:
        """Remove the entry holding `item` (by identity); True when one was removed."""
        for prefix, bucket in self._buckets.items():
            for i, entry in enumerate(bucket):
                if entry.item is item:
                    del bucket[i]
                    self._size -= 1
                    if not bucket:
                        del self._buckets[prefix]
                        if not any(len(p) == len(prefix) for p in self._buckets):
                            self._lengths.remove(len(prefix))
                    return True
        return False

    def clear(self) -> None:
        self._buckets.clear()
        self._lengths.clear()
        self._size = 0

    def candidates(self, uri: str) -> Iterator[_Entry[T]]:
        """Entries whose literal prefix starts `uri`, most specific first."""
        buckets = self._buckets
        for length in self._lengths:
            if length > len(uri):
                continue
            bucket = buckets.get(uri[:length])
            if bucket:
                yield from bucket

    def match(self, uri: str) -> TemplateMatch[T] | None:
        """The most specific template that matches `uri`, or None."""
        for entry in self.candidates(uri):
            params = entry.compiled.parsed.match(uri)
            if params is not None:
                return TemplateMatch(entry.item, params)
        return None

    def items(self) -> Iterable[T]:
        """Every indexed item, in registration order."""
        entries = [e for bucket in self._buckets.values() for e in bucket]
        entries.sort(key=lambda e: e.order)
        return [e.item for e in entries]
