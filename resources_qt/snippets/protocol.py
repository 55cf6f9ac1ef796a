"""Messages between the pool and a snippet worker: calls are pickled, replies travel as plain data (wire.py)."""

from __future__ import annotations

import hashlib
import operator
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, Literal, Self

from resources_qt.snippets.kinds import COMPLETION, READER, SnippetKind

__all__ = [
    "Call",
    "Cancel",
    "CompleteCall",
    "CompleteDone",
    "ContentTuple",
    "EntryCall",
    "Failed",
    "NeedSource",
    "Output",
    "ReadCall",
    "ReadDone",
    "Ready",
    "Reason",
    "Reply",
    "Shutdown",
    "Stream",
    "Tagged",
    "ValueDone",
    "WorkerConfig",
    "call_kind",
    "source_digest",
]

Reason = Literal[
    "raised",  # the snippet (or its module code) raised; message wrapped
    "syntax",  # the snippet does not compile
    "no-entry",  # the snippet defines no read()/complete()
    "prelude",  # the project prelude does not compile or raised
    "result",  # the snippet returned None or something that is not content
    "not-found",  # the snippet raised NotFound: the era's not-found error, with its message
    "exit",  # the snippet called sys.exit(); the worker survived it
    "memory",  # the snippet hit the memory cap; the worker must be replaced
    "timeout",  # parent side: no answer in time, worker killed
    "exited",  # parent side: the worker process ended (os._exit, ...)
    "crashed",  # parent side: the worker process died of a signal
    "unavailable",  # parent side: no worker could be started, or the pool closed
    "busy",  # parent side: the queue of reads waiting for a worker is full
    "abandoned",  # parent side: the caller left (an HTTP client hung up) while the read waited for a worker
    "internal",  # parent side: the reply did not decode, or the pool failed; only this call fails
]

Stream = Literal["stdout", "stderr"]

ContentTuple = tuple[str, str, "str | None", "str | None", "dict[str, Any] | None"]
"""(uri, mime_type, text, blob, meta): a `ResourceContent` in a cheap picklable form."""


def source_digest(source: str) -> str:
    """A short content hash naming one version of a snippet or prelude."""
    return hashlib.blake2b(source.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    """How a worker sets itself up before it reports ready."""

    memory_limit_mb: int
    output_limit: int
    parent_pid: int
    max_processes: int = 0
    """RLIMIT_NPROC for the worker (0: leave the inherited limit)."""
    max_file_size_mb: int = 0
    """RLIMIT_FSIZE for the worker (0: leave the inherited limit)."""
    project_dir: str = ""
    """The project's folder: the worker's working directory and `PROJECT_DIR` ("": the inherited one)."""
    concurrent: bool = False
    """Run many calls at once, each an asyncio task, tagged on the pipe (`Tagged`, `Cancel`; `worker_many`)."""


@dataclass(frozen=True, slots=True)
class Call:
    """What every call names: the snippet version and the prelude version it runs against.

    `source` and `prelude` are None when the pool believes the worker already
    holds that digest; a worker that does not answers `NeedSource`.
    """

    key: str
    digest: str
    source: str | None
    prelude_digest: str
    prelude: str | None

    def without(self, *, source: bool, prelude: bool) -> Self:
        """This call with its snippet source and/or prelude left out (the worker holds them)."""
        values = list(_state(self))
        if source:
            values[_SOURCE] = None
        if prelude:
            values[_PRELUDE] = None
        return type(self)(*values)

    def __reduce__(self) -> tuple[type[Self], tuple[Any, ...]]:
        # Rebuilt from its fields in order: the dataclass default for a frozen, slotted class goes
        # through fields() and a setattr per field on both sides (7.4 + 8.4 us a call, against 3.8 + 4.7).
        return type(self), _state(self)


@dataclass(frozen=True, slots=True)
class ReadCall(Call):
    """Run `read(uri, params)` and convert its result to content."""

    uri: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    mime_type: str = ""


@dataclass(frozen=True, slots=True)
class CompleteCall(Call):
    """Run `complete(variable, value, context)` and return the suggested values."""

    variable: str = ""
    value: str = ""
    context: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EntryCall(Call):
    """Run the entry of `kind` (a kind whose answer is "json") with `args`; answered by `ValueDone`.

    The kind travels with the call, so the worker needs nothing but what the registry declared.
    """

    kind: SnippetKind | None = None
    args: tuple[Any, ...] = ()


def call_kind(call: Call) -> SnippetKind:
    """The snippet kind a call runs."""
    if isinstance(call, EntryCall):
        if call.kind is None:
            raise ValueError("an EntryCall needs its kind")
        return call.kind
    return READER if isinstance(call, ReadCall) else COMPLETION


_CALL_FIELDS = [f.name for f in fields(Call)]
_SOURCE, _PRELUDE = _CALL_FIELDS.index("source"), _CALL_FIELDS.index("prelude")
_STATES: dict[type[Call], Callable[[Call], tuple[Any, ...]]] = {}


def _state(call: Call) -> tuple[Any, ...]:
    """A call's field values in declaration order, read in one C call."""
    getter = _STATES.get(type(call))
    if getter is None:  # one per Call class (there are three)
        getter = _STATES[type(call)] = operator.attrgetter(*(f.name for f in fields(call)))
    values: tuple[Any, ...] = getter(call)
    return values


@dataclass(frozen=True, slots=True)
class Tagged:
    """A call to a worker that runs many at once: its answer and output come back tagged with `id`."""

    id: int
    call: Call

    def __reduce__(self) -> tuple[type[Self], tuple[int, Call]]:
        return type(self), (self.id, self.call)  # as `Call.__reduce__`: one per read


@dataclass(frozen=True, slots=True)
class Cancel:
    """Cancel the running call `id` (its deadline passed, or its caller left); it still answers, so its
    worker is known to have let go of it."""

    id: int


@dataclass(frozen=True, slots=True)
class Shutdown:
    """Ask the worker to leave its loop and exit cleanly."""


@dataclass(frozen=True, slots=True)
class Ready:
    """Sent once the worker has set up its limits and output capture."""

    pid: int


@dataclass(frozen=True, slots=True)
class Output:
    """Text the snippet of `key` printed on `stream` (Python- or C-level)."""

    key: str
    text: str
    stream: Stream = "stdout"


@dataclass(frozen=True, slots=True)
class NeedSource:
    """The worker lacks the named source for the digest it was given; resend with it."""

    what: Literal["snippet", "prelude"]


@dataclass(frozen=True, slots=True)
class ReadDone:
    contents: list[ContentTuple]


@dataclass(frozen=True, slots=True)
class CompleteDone:
    values: list[str]


@dataclass(frozen=True, slots=True)
class Failed:
    """The call did not deliver; `message` is the user-facing text of the -32000 error."""

    reason: Reason
    message: str


@dataclass(frozen=True, slots=True)
class ValueDone:
    """An `EntryCall`'s result as JSON text."""

    text: str


Reply = ReadDone | CompleteDone | ValueDone | Failed
