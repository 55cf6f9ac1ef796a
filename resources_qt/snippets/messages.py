"""The wording of every snippet failure, in one place for the worker and the pool."""

from __future__ import annotations

from resources_qt.snippets.protocol import Call, EntryCall, ReadCall, call_kind

__all__ = [
    "blocked_by",
    "busy",
    "call_failed",
    "crashed",
    "exited",
    "internal",
    "no_entry",
    "not_compiling",
    "out_of_memory",
    "prelude_failed",
    "shared_worker_died",
    "subject",
    "sys_exit",
    "timed_out",
    "timed_out_cancelled",
    "timed_out_queued",
    "unavailable",
]


def subject(call: Call) -> str:
    if isinstance(call, ReadCall):
        return f"Resource reader for URI {call.uri}"
    if isinstance(call, EntryCall):
        return f"{call_kind(call).function}()"  # "instances() timed out ...": what the user wrote
    return f"Completion snippet of {call.key!r}"


def entry_name(call: Call) -> str:
    return call_kind(call).signature


def call_failed(call: Call, detail: str) -> str:
    # Same shape as the core's Resource.read so in-process and snippet readers read alike.
    if isinstance(call, ReadCall):
        return f"Resource reader failed for URI {call.uri}: {detail}"
    return f"{subject(call)} failed: {detail}"


def not_compiling(call: Call, diagnostic: str) -> str:
    return f"{subject(call)} does not compile: {diagnostic}"


def no_entry(call: Call) -> str:
    return f"{subject(call)} cannot run: the snippet defines no {entry_name(call)} function"


def prelude_failed(call: Call, detail: str) -> str:
    return f"{subject(call)} cannot run: the project prelude {detail}"


def sys_exit(call: Call, code: object) -> str:
    return f"{subject(call)} called sys.exit({code!r}); a snippet returns content or raises an exception"


def out_of_memory(call: Call, limit_mb: int) -> str:
    return f"{subject(call)} exceeded the memory limit of {limit_mb} MiB; its worker process was replaced"


def timed_out(call: Call, timeout: float) -> str:
    return f"{subject(call)} timed out after {timeout:g} s; its worker process was stopped and replaced"


def timed_out_cancelled(call: Call, timeout: float) -> str:
    """An `async def` entry past its deadline: cancelled at its next await, nothing replaced."""
    return f"{subject(call)} timed out after {timeout:g} s and was cancelled"


def blocked_by(call: Call, culprit: Call) -> str:
    """A call on a worker that ran several at once, stopped because another one blocked its event loop."""
    return (
        f"{subject(call)} was stopped with its worker process: {subject(culprit)} blocked the worker's event "
        "loop past its deadline (an async reader must await, not block); the worker was replaced"
    )


def shared_worker_died(call: Call, how: str, *, calls: int) -> str:
    """A call on a worker that ran several at once when it died: which of them killed it cannot be told."""
    return (
        f"{subject(call)} failed with the worker process it shared with {calls - 1} other async read(s), "
        f"which {how}; the worker was replaced"
    )


def exited(call: Call, code: int) -> str:
    return f"{subject(call)} made its worker process exit (exit code {code}); the worker was replaced"


def crashed(call: Call, how: str) -> str:
    return f"{subject(call)} crashed its worker process ({how}); the worker was replaced"


def unavailable(call: Call, why: str) -> str:
    return f"{subject(call)} could not run: {why}"


def timed_out_queued(call: Call, timeout: float, waited: float) -> str:
    return (
        f"{subject(call)} timed out after {timeout:g} s, {waited:.1f} s of it waiting for a free worker; "
        "the pool is overloaded or its readers are slow"
    )


def busy(call: Call, queued: int) -> str:
    return f"{subject(call)} was not run: the server is busy ({queued} reads are already waiting for a worker)"


def abandoned(call: Call) -> str:
    return f"{subject(call)} was not run: its caller left while it waited for a free worker"


def internal(call: Call, why: str) -> str:
    return f"{subject(call)} failed inside the snippet pool: {why}"
