"""The snippet kinds (reader, completion, instances, prelude), each declared once: key, entry, label, rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "COMPLETION",
    "INSTANCES",
    "KINDS",
    "MAX_INSTANCES",
    "MAX_INSTANCES_BYTES",
    "PRELUDE",
    "READER",
    "RESOURCE_KINDS",
    "Answer",
    "SnippetKind",
    "kind_named",
]

MAX_INSTANCES = 10_000
"""Instances one template may list; more is a malformed answer (a listing must stay answerable)."""

MAX_INSTANCES_BYTES = 8 * 1024 * 1024
"""Bytes of JSON one template's answer may take: the worker refuses a larger one before sending it, so
10,000 instances of 20 KB each cost the server nothing (they took it to 814 MB)."""

Answer = Literal["content", "values", "json", "none"]
"""What the worker makes of an entry's result: resource content (a read), completion values, the result as
JSON text (any kind without a call type of its own), or nothing (the prelude has no entry)."""


@dataclass(frozen=True, slots=True)
class SnippetKind:
    """One kind of snippet: where the project file keeps it, what it must define, how the studio shows it.

    Adding a kind is one entry in `KINDS` (plus, for a per-resource kind, the `str` field named `key` on
    `ResourceSpec`): the loader, writer, document checks, editor tabs, worker and pool read it from here.
    """

    name: str
    """The kind's own name (what `pool.call` and `kind_named` take)."""
    key: str
    """The `[[resources]]` key holding the source (the top-level key for a project-wide kind)."""
    function: str | None
    """The top-level function the snippet must define (None: plain module code, like the prelude)."""
    parameters: tuple[str, ...]
    label: str
    """The editor tab's text."""
    noun: str
    """How problems name it: "<noun> snippet, line 3: ..."."""
    answer: Answer
    template_only: bool = False
    """Only a URI template may have one: a direct resource with it does not validate."""
    template_why: str = ""
    """Why it is template-only, as the validation error says it."""
    per_resource: bool = True
    """One per `[[resources]]` entry (False: one per project, a top-level key)."""
    required: bool = False
    """Every resource needs one."""
    max_items: int = 0
    """A "json" answer that is a longer list is refused in the worker (0: no cap)."""
    max_bytes: int = 0
    """A "json" answer whose JSON text is longer is refused in the worker (0: no cap)."""

    @property
    def signature(self) -> str:
        """`read(uri, params)`: the entry as the snippet defines it ("" for a kind without one)."""
        return f"{self.function}({', '.join(self.parameters)})" if self.function else ""

    def needs_template(self) -> str:
        """The validation error of a direct resource with this snippet (template-only kinds)."""
        return f"{self.key} need a uri_template" + (f" ({self.template_why})" if self.template_why else "")

    def too_many(self, count: int) -> str:
        return (f"{self.function}() returned {count:,} items; at most {self.max_items:,} are listed "
                f"(the {self.key} item cap)")

    def too_large(self, size: int) -> str:
        return (f"{self.function}() returned {size:,} bytes of JSON; at most {self.max_bytes:,} "
                f"({self.max_bytes / 2**20:g} MiB) are listed (the {self.key} size cap)")


READER = SnippetKind(
    "reader", "reader", "read", ("uri", "params"), "Reader", "Reader", "content", required=True
)
# Not template-only for validation: a completion snippet left on a resource that became direct is kept
# (never called) rather than making the project fail to load; the editor disables its tab.
COMPLETION = SnippetKind(
    "completion", "complete", "complete", ("name", "value", "context"), "Completions", "Completion", "values"
)
INSTANCES = SnippetKind(
    "instances", "instances", "instances", (), "Instances", "Instances", "json",
    template_only=True, template_why="a direct resource is its own instance",
    max_items=MAX_INSTANCES, max_bytes=MAX_INSTANCES_BYTES,
)  # fmt: skip
PRELUDE = SnippetKind("prelude", "prelude", None, (), "Prelude", "Prelude", "none", per_resource=False)

KINDS: tuple[SnippetKind, ...] = (READER, COMPLETION, INSTANCES, PRELUDE)
"""Every kind, in the editor's tab order."""

RESOURCE_KINDS: tuple[SnippetKind, ...] = tuple(kind for kind in KINDS if kind.per_resource)


def kind_named(name: str) -> SnippetKind:
    """The kind called `name`; raises KeyError naming the known ones."""
    for kind in KINDS:
        if kind.name == name:
            return kind
    raise KeyError(f"unknown snippet kind {name!r} (known: {', '.join(k.name for k in KINDS)})")
