"""URI templates: parsing and matching through the SDK's RFC 6570 code, and an index over many templates."""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from mcp.shared.path_security import is_absolute_path
from mcp.shared.uri_template import InvalidUriTemplate, UriTemplate

from resources_qt.errors import ValidationError

__all__ = ["CompiledTemplate", "Params", "TemplateIndex", "TemplateMatch", "compile_template", "unsafe_value"]

T = TypeVar("T")

Params = dict[str, str | list[str]]

# Operators whose values stop at '/', so a segment made of them and literals
# lines up with exactly one segment of a matching URI.
_SEGMENT_SAFE_OPERATORS = frozenset({"", ".", ";"})
_OPERATOR_CHARS = "+#./;?&"


@dataclass(frozen=True, slots=True)
class CompiledTemplate:
    """A parsed URI template with what the index needs to rank it."""

    template: str
    parsed: UriTemplate = field(repr=False, compare=False)
    prefix: str
    """Literal text before the first variable."""
    variable_names: tuple[str, ...]
    simple_variable_names: frozenset[str] = frozenset()
    """Variables of plain `{var}` expressions: one path segment, never a `/`."""

    @property
    def specificity(self) -> tuple[int, int]:
        """Sort key, smaller first: longer literal prefix, then fewer variables."""
        return (-len(self.prefix), len(self.variable_names))

    @property
    def query_variable_names(self) -> frozenset[str]:
        """Variables of a trailing ``{?...}``: optional, absent from a match when the URI omits them."""
        return self.parsed.query_variable_names

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
    simple = frozenset(v.name for v in parsed.variables if v.operator == "")
    return CompiledTemplate(
        template=template,
        parsed=parsed,
        prefix=template[:brace],
        variable_names=names,
        simple_variable_names=simple,
    )


def unsafe_value(compiled: CompiledTemplate, params: Mapping[str, object]) -> tuple[str, str] | None:
    """The first matched value a reader should not get unchecked, as (variable, why), or None.

    Values are percent-decoded, so `%2F` and `%2E%2E` count as what they
    decode to. Refused: NUL anywhere, a `..` path segment (`/` or `\\`
    separated), an absolute path (POSIX, Windows drive or UNC), and a `/` in a
    simple `{var}`, whose value is meant to be one segment. `{+path}`-style
    variables may hold `/`.
    """
    for name, value in params.items():
        values = value if isinstance(value, list) else [value]
        for item in values:
            if not isinstance(item, str):
                continue  # only the SDK's matcher makes values, and it makes strings
            why = _why_unsafe(item, simple=name in compiled.simple_variable_names)
            if why is not None:
                return name, why
    return None


def _why_unsafe(value: str, *, simple: bool) -> str | None:
    if "\0" in value:
        return "contains a NUL character"
    if simple and "/" in value:
        return "contains '/' (a {var} value is one path segment)"
    if ".." in value and ".." in value.replace("\\", "/").split("/"):
        return "contains a '..' path segment"
    if is_absolute_path(value):
        return "is an absolute path"
    return None


# A key step: (False, segment) for a literal segment, (True, literal prefix)
# for a segment holding simple variables.
_Step = tuple[bool, str]


def _index_key(template: str) -> tuple[list[_Step], str]:
    """The trie path of a (valid) template and the literal head of the rest of it."""
    steps: list[_Step] = []
    seg_start = 0
    var_at = -1  # where the current segment's first variable starts, -1 for none
    i = 0
    n = len(template)
    while i < n:
        ch = template[i]
        if ch == "{":
            end = template.find("}", i)
            body = template[i + 1 : end]
            operator = body[0] if body and body[0] in _OPERATOR_CHARS else ""
            if operator not in _SEGMENT_SAFE_OPERATORS or "*" in body:
                break
            if var_at < 0:
                var_at = i
            i = end + 1
        elif ch in "?#":
            # A literal query or fragment: the URI's '/' may no longer line up.
            break
        elif ch == "/":
            if var_at < 0:
                steps.append((False, template[seg_start:i]))
            else:
                steps.append((True, template[seg_start:var_at]))
            seg_start = i + 1
            var_at = -1
            i += 1
        else:
            i += 1
    rest = template[seg_start:]
    brace = rest.find("{")
    return steps, rest if brace < 0 else rest[:brace]


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
    rank: tuple[int, int, int] = (0, 0, 0)
    node: _Node[T] | None = field(default=None, repr=False)
    head: str = ""


class _Buckets(Generic[T]):
    """Values keyed by a literal string, probed by every stored key length, longest first."""

    __slots__ = ("by_key", "counts", "lengths")

    def __init__(self) -> None:
        self.by_key: dict[str, T] = {}
        self.counts: dict[int, int] = {}
        self.lengths: list[int] = []

    def put(self, key: str, value: T) -> None:
        if key not in self.by_key:
            size = len(key)
            self.counts[size] = self.counts.get(size, 0) + 1
            if self.counts[size] == 1:
                self.lengths.append(size)
                self.lengths.sort(reverse=True)
        self.by_key[key] = value

    def drop(self, key: str) -> None:
        del self.by_key[key]
        size = len(key)
        self.counts[size] -= 1
        if not self.counts[size]:
            del self.counts[size]
            self.lengths.remove(size)

    def probe(self, text: str, start: int, stop: int) -> Iterator[T]:
        by_key = self.by_key
        for length in self.lengths:
            if length <= stop - start:
                found = by_key.get(text[start : start + length])
                if found is not None:
                    yield found


class _Node(Generic[T]):
    __slots__ = ("literal", "parent", "pattern", "step", "tails")

    def __init__(self, parent: _Node[T] | None = None, step: _Step = (False, "")) -> None:
        self.parent = parent
        self.step = step
        self.literal: dict[str, _Node[T]] = {}
        self.pattern: _Buckets[_Node[T]] = _Buckets()
        self.tails: _Buckets[list[_Entry[T]]] = _Buckets()

    def is_empty(self) -> bool:
        return not (self.literal or self.pattern.by_key or self.tails.by_key)


class TemplateIndex(Generic[T]):
    """Templates in a segment trie; resolves a URI to the most specific match.

    Resolution order, most specific first: more literal characters before
    the first variable, then fewer variables, then registration order. (A
    direct resource beats every template; that rule lives in `Resources`.)

    Going from the left, each segment of a template that ends in a literal
    '/' is a trie step: a literal segment is keyed exactly, a segment holding
    only variables that cannot match '/' (``{id}``, ``{a,b}``, ``{.ext}``,
    ``{;p}``) by its literal text before the first ``{``. The first segment
    holding anything that can span '/' or the query (``{+path}``, ``{#f}``,
    ``{/seg}``, explode, ``{?q}``) ends the path; the rest of the template is
    bucketed by its literal text before the next ``{``. A lookup splits the
    URI once and probes a few dictionaries per level, so its cost grows with
    the URI's depth and the number of distinct literal lengths, not with the
    number of templates. Every candidate is confirmed by the SDK's matcher.
    """

    def __init__(self) -> None:
        self._root: _Node[T] = _Node()
        self._entries: dict[int, _Entry[T]] = {}
        # id(item) -> orders of its entries, so discard need not scan.
        self._by_item: dict[int, list[int]] = {}
        self._order = 0

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, compiled: CompiledTemplate, item: T) -> None:
        """Index `item` under `compiled`; later additions lose ties to earlier ones."""
        order = self._order
        self._order += 1
        entry = _Entry(compiled, order, item, (-len(compiled.prefix), len(compiled.variable_names), order))
        steps, head = _index_key(compiled.template)
        node = self._root
        for step in steps:
            is_pattern, text = step
            table = node.pattern.by_key if is_pattern else node.literal
            child = table.get(text)
            if child is None:
                child = _Node(node, step)
                if is_pattern:
                    node.pattern.put(text, child)
                else:
                    node.literal[text] = child
            node = child
        bucket = node.tails.by_key.get(head)
        if bucket is None:
            bucket = []
            node.tails.put(head, bucket)
        # Within one bucket the literal prefix is the same length, so the
        # rank reduces to (variables, order); keep the bucket sorted on insert.
        bisect.insort(bucket, entry, key=lambda e: e.rank)
        entry.node, entry.head = node, head
        self._entries[order] = entry
        self._by_item.setdefault(id(item), []).append(order)

    def discard(self, item: T) -> bool:
        """Remove the oldest entry holding `item` (by identity); True when one was removed.

        O(size of the entry's bucket), not O(number of templates).
        """
        orders = self._by_item.get(id(item))
        if not orders:
            return False
        entry = self._entries.pop(orders.pop(0))
        if not orders:
            del self._by_item[id(item)]
        node = entry.node
        assert node is not None
        bucket = node.tails.by_key[entry.head]
        bucket.remove(entry)
        if not bucket:
            node.tails.drop(entry.head)
        # Prune nodes left empty so churn does not grow the trie.
        while node.parent is not None and node.is_empty():
            parent = node.parent
            is_pattern, text = node.step
            if is_pattern:
                parent.pattern.drop(text)
            else:
                del parent.literal[text]
            node = parent
        return True

    def clear(self) -> None:
        self._root = _Node()
        self._entries.clear()
        self._by_item.clear()

    def candidates(self, uri: str) -> Iterator[_Entry[T]]:
        """Entries that may match `uri` (a superset of those that do), most specific first."""
        found: list[list[_Entry[T]]] = []
        segments = uri.split("/")
        last = len(segments) - 1
        n = len(uri)
        stack: list[tuple[_Node[T], int, int]] = [(self._root, 0, 0)]
        while stack:
            node, depth, offset = stack.pop()
            found.extend(node.tails.probe(uri, offset, n))
            if depth < last and (node.literal or node.pattern.by_key):
                segment = segments[depth]
                following = offset + len(segment) + 1
                child = node.literal.get(segment)
                if child is not None:
                    stack.append((child, depth + 1, following))
                for child in node.pattern.probe(segment, 0, len(segment)):
                    stack.append((child, depth + 1, following))
        if len(found) == 1:
            return iter(found[0])
        merged = [entry for bucket in found for entry in bucket]
        merged.sort(key=lambda e: e.rank)
        return iter(merged)

    def match(self, uri: str) -> TemplateMatch[T] | None:
        """The most specific template that matches `uri`, or None."""
        for entry in self.candidates(uri):
            params = entry.compiled.parsed.match(uri)
            if params is not None:
                return TemplateMatch(entry.item, params)
        return None

    def match_all(self, uri: str) -> list[TemplateMatch[T]]:
        """Every template that matches `uri`, most specific first (the first one is what resolves)."""
        out: list[TemplateMatch[T]] = []
        for entry in self.candidates(uri):
            params = entry.compiled.parsed.match(uri)
            if params is not None:
                out.append(TemplateMatch(entry.item, params))
        return out

    def items(self) -> list[T]:
        """Every indexed item, in registration order."""
        return [entry.item for entry in self._entries.values()]
