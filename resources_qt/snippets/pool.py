"""SnippetPool: worker processes that run reader and completion snippets, usable from any thread or loop."""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import os
import weakref
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any, Self, TypeVar

from resources_qt.content import ResourceContent
from resources_qt.errors import ValidationError
from resources_qt.project.settings_table import setting
from resources_qt.snippets import messages
from resources_qt.snippets.answers import contents_of, text_of, values_of
from resources_qt.snippets.caller import CallerGone, caller_gone
from resources_qt.snippets.direct import call_directly, loop_future, supports_direct_calls
from resources_qt.snippets.dispatch import Dispatcher, Limits, OutputListener
from resources_qt.snippets.kinds import SnippetKind, kind_named
from resources_qt.snippets.output import ReadOutputListener
from resources_qt.snippets.pool_limits import AUTO, Concurrency, WorkerCount, per_resource_value, worker_bounds
from resources_qt.snippets.protocol import (
    Call,
    CompleteCall,
    EntryCall,
    Failed,
    ReadCall,
    Reply,
    source_digest,
)
from resources_qt.snippets.shared_pool import SharedWorkers

__all__ = ["DEFAULT_MAX_QUEUED_READS", "DEFAULT_OUTPUT_LIMIT", "MAX_TIMEOUT", "OutputListener", "SnippetPool"]

DEFAULT_OUTPUT_LIMIT = 64 * 1024
"""Bytes of printed output forwarded per call; the rest is dropped and counted."""

DEFAULT_MAX_QUEUED_READS = 256
"""Calls waiting for a worker before new ones are answered busy."""

logger = logging.getLogger(__name__)

_WATCH_CALLER_AFTER = 0.05
"""Seconds a queued read waits before it starts watching whether its caller left."""

_T = TypeVar("_T")

MAX_TIMEOUT = 3600.0
"""Longest timeout a call may have (the project allows 0.1 s to 1 h)."""


class SnippetPool:
    """A pool of snippet worker processes.

    Workers start ahead of time (`start()`, or the first call), so a read
    costs an IPC round trip. Each call goes to an idle worker; while all are
    busy the pool keeps a spare warm, growing by up to `workers` temporary
    workers (retired after 10 s idle); with `workers="auto"` it keeps two and
    grows that way while calls wait, up to `pool_limits.auto_cap()` (from the
    CPUs and the available memory). At most `resource_concurrency` calls
    of one snippet key run at once ("auto", the default: `workers`, or half the cap); the rest wait in a
    queue of at most `max_queued_reads`, beyond which calls fail at once as
    busy. A call's timeout counts from when it was submitted, queue included
    (`resources_qt.snippets.dispatch`). Each worker runs in its own process
    group, limited by `memory_limit_mb`, `max_processes` and
    `max_file_size_mb` (0: no limit of that kind).

    A worker keeps each snippet version loaded between calls, so module-level
    state lives as long as that worker (see `resources_qt.snippets.worker`).

    A call whose entry is an `async def` takes no worker of its own: it runs
    beside others on a shared worker (`resources_qt.snippets.shared_pool`),
    so reads awaiting I/O overlap; `shared_async=False` turns that off.

    Thread-safe. `read` and `complete` may be awaited on any asyncio loop in
    any thread; `submit_read`/`submit_complete` return concurrent futures
    for code without a loop. When a worker is idle and no call is queued,
    an awaited call is driven by the awaiting loop itself on that worker
    (`resources_qt.snippets.direct`: one hand-off instead of two thread
    hops; `direct_calls=False` turns that off). Output listeners are called
    on pool threads, or on that loop for such a call: they must be quick.
    `close()` stops every worker; it also runs when the pool is collected
    and at interpreter exit.
    """

    def __init__(
        self,
        *,
        workers: WorkerCount = 2,
        timeout: float = 5.0,
        memory_limit_mb: int = 1024,
        prelude: str = "",
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
        max_queued_reads: int = DEFAULT_MAX_QUEUED_READS,
        resource_concurrency: Concurrency | None = None,
        max_processes: int = 0,
        max_file_size_mb: int = 0,
        project_dir: str | os.PathLike[str] | None = None,
        direct_calls: bool = True,
        shared_async: bool = True,
    ) -> None:
        _check_settings(
            workers=workers,
            timeout=timeout,
            memory_limit_mb=memory_limit_mb,
            max_queued_reads=max_queued_reads,
            resource_concurrency=resource_concurrency,
            max_processes=max_processes,
            max_file_size_mb=max_file_size_mb,
        )
        if not isinstance(output_limit, int) or output_limit < 0:
            raise ValidationError(f"output_limit must not be negative, not {output_limit!r}")
        base, most = worker_bounds(workers)
        limits = Limits(
            workers=base,
            most=most,
            auto=workers == AUTO,
            timeout=float(timeout),
            memory_limit_mb=memory_limit_mb,
            output_limit=output_limit,
            max_queued_reads=max_queued_reads,
            resource_concurrency=per_resource_value(resource_concurrency) or None,
            max_processes=max_processes,
            max_file_size_mb=max_file_size_mb,
            project_dir=_folder(project_dir) or "",
        )
        self._core = Dispatcher(limits, prelude=prelude)
        # Off: every call takes the queued path through a pool thread (tests cover both paths).
        self._direct = bool(direct_calls)
        # A read names its snippet's version by a hash of the source: for a 2,000-line reader that is
        # about 60 us per read, so each pool keeps the digests of the sources it saw last.
        self._digest = functools.lru_cache(maxsize=256)(source_digest)
        # Calls whose entry is an `async def` run many at once on shared workers (`shared_pool`); off: they
        # take one-call workers like the rest.
        self._shared = SharedWorkers(self._core) if shared_async else None
        self._finalizer = weakref.finalize(self, _close, self._core, self._shared)

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> None:
        """Start the workers in the background; idempotent. Calls made meanwhile wait for them."""
        self._core.start()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until every configured worker is up; False on timeout."""
        return self._core.wait_ready(timeout)

    def close(self) -> None:
        """Stop every worker and fail queued calls; idempotent and safe to call at any time."""
        self._finalizer()

    @property
    def closed(self) -> bool:
        return self._core.closed

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- settings ----------------------------------------------------------------

    @property
    def timeout(self) -> float:
        return self._core.timeout

    @property
    def workers(self) -> int:
        """Workers kept running (two for "auto")."""
        return self._core.workers

    @property
    def max_workers(self) -> int:
        """Most workers at once, spares included ("auto": `pool_limits.auto_cap()`)."""
        return self._core.limits.most

    @property
    def memory_limit_mb(self) -> int:
        return self._core.memory_limit_mb

    @property
    def max_queued_reads(self) -> int:
        return self._core.limits.max_queued_reads

    @property
    def resource_concurrency(self) -> int:
        """Calls of one resource running at once (`pool_limits.auto_per_resource` unless set)."""
        return self._core.limits.per_resource

    @property
    def max_processes(self) -> int:
        """RLIMIT_NPROC of the workers (0: not limited)."""
        return self._core.limits.max_processes

    @property
    def max_file_size_mb(self) -> int:
        """RLIMIT_FSIZE of the workers in MB (0: not limited)."""
        return self._core.limits.max_file_size_mb

    def queued(self) -> int:
        """Calls waiting for a worker now (diagnostics and tests)."""
        return self._core.queued() + (self._shared.queued() if self._shared is not None else 0)

    def call_counts(self) -> tuple[int, int]:
        """(calls driven directly by the awaiting loop, calls that went through the queue) so far."""
        with self._core.cond:
            return self._core.lent_calls, self._core.queued_calls

    @property
    def prelude_digest(self) -> str:
        """Names the current prelude version (it changes with every `set_prelude` of a different source)."""
        return self._core.prelude_version()[1]

    def set_prelude(self, source: str) -> None:
        """The shared prelude every snippet sees; takes effect on the next call."""
        if not isinstance(source, str):
            raise ValidationError(f"The prelude must be a str, not {type(source).__name__}")
        self._core.set_prelude(source)

    def configure(
        self,
        *,
        timeout: float | None = None,
        memory_limit_mb: int | None = None,
        workers: WorkerCount | None = None,
        max_queued_reads: int | None = None,
        resource_concurrency: Concurrency | None = None,
        max_processes: int | None = None,
        max_file_size_mb: int | None = None,
        project_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        """Change limits (None: unchanged); new process limits replace workers as they become idle.

        `project_dir` is where snippets run (their working directory) and
        what `PROJECT_DIR` names in their namespace; changing it also
        replaces the workers as they become idle.
        """
        _check_settings(
            workers=workers,
            timeout=timeout,
            memory_limit_mb=memory_limit_mb,
            max_queued_reads=max_queued_reads,
            resource_concurrency=resource_concurrency,
            max_processes=max_processes,
            max_file_size_mb=max_file_size_mb,
        )
        base, most = worker_bounds(workers) if workers is not None else (None, None)
        self._core.configure(
            timeout=None if timeout is None else float(timeout),
            memory_limit_mb=memory_limit_mb,
            workers=base,
            most=most,
            auto=None if workers is None else workers == AUTO,
            max_queued_reads=max_queued_reads,
            resource_concurrency=per_resource_value(resource_concurrency),
            max_processes=max_processes,
            max_file_size_mb=max_file_size_mb,
            project_dir=_folder(project_dir),
        )

    @property
    def project_dir(self) -> str:
        """The folder snippets run in ("" for the pool process's own working directory)."""
        return self._core.limits.project_dir

    def add_output_listener(self, callback: OutputListener) -> Callable[[], None]:
        """Call `callback(key, text)` with what snippets print, as it arrives; returns the unsubscribe call."""
        return self._core.add_listener(callback)

    def add_read_output_listener(self, callback: ReadOutputListener) -> Callable[[], None]:
        """Call `callback(SnippetOutput)` once per call that printed anything, before its answer.

        Returns the unsubscribe call. Called on pool threads.
        """
        return self._core.add_read_listener(callback)

    def worker_pids(self) -> list[int]:
        """Process ids of the running workers, shared ones last (diagnostics and tests)."""
        return self._core.worker_pids() + (self._shared.worker_pids() if self._shared is not None else [])

    def drive_shared_on(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Drive the workers that run `async def` calls on `loop`, a server's own loop serving as long as the
        pool does: a read awaited there then crosses no thread. Only before the first such call (False after)."""
        return self._shared.drive_on(loop) if self._shared is not None and supports_direct_calls(loop) else False

    def shared_worker_pids(self) -> list[int]:
        """Process ids of the workers that run `async def` calls many at once (diagnostics and tests)."""
        return self._shared.worker_pids() if self._shared is not None else []

    # -- calls ---------------------------------------------------------------------

    async def read(
        self,
        *,
        key: str,
        source: str,
        uri: str,
        params: Mapping[str, object],
        mime_type: str = "",
        timeout: float | None = None,
    ) -> list[ResourceContent]:
        """Run the reader snippet `source` (known as `key`) for `uri` and return its content.

        Raises:
            ReaderFailedError: -32000 naming what happened: the snippet does
                not compile (with line and column), raised (message wrapped),
                returned None or no content, called sys.exit, timed out, made
                its worker exit, crashed it, or hit the memory limit.
        """
        call = self._read_call(key=key, source=source, uri=uri, params=params, mime_type=mime_type, timeout=timeout)
        return await self._await(call, timeout, contents_of)

    async def complete(
        self,
        *,
        key: str,
        source: str,
        variable: str,
        value: str,
        context: Mapping[str, str],
        timeout: float | None = None,
    ) -> list[str]:
        """Run the completion snippet `complete(variable, value, context)`; at most `MAX_COMPLETIONS` values.

        Raises:
            ReaderFailedError: as for `read`.
        """
        call = self._complete_call(
            key=key, source=source, variable=variable, value=value, context=context, timeout=timeout
        )
        return await self._await(call, timeout, values_of)

    async def call(
        self,
        kind: SnippetKind | str,
        *,
        key: str,
        source: str,
        args: Sequence[Any] = (),
        timeout: float | None = None,
    ) -> Any:
        """Run the entry of snippet `kind` with `args` (its declared parameters, in order).

        A "content" kind answers as `read` does (args: uri, params, optional mime_type), a "values"
        kind as `complete` (args: name, value, context), a "json" kind with its result as JSON text,
        refused in the worker past the kind's caps.

        Raises:
            ValidationError: an unknown kind, one without an entry, or args that do not fit it.
            ReaderFailedError: as for `read`.
        """
        found = _kind(kind)
        items = tuple(args)
        wanted = len(found.parameters)
        allowed = (wanted, wanted + 1) if found.answer == "content" else (wanted,)  # + the read's mime type
        if len(items) not in allowed:
            raise ValidationError(f"{found.signature} takes {wanted} argument(s), not {len(items)}", field="args")
        if found.answer == "content":
            uri, params, *mime = items
            return await self.read(key=key, source=source, uri=uri, params=params,
                                   mime_type=mime[0] if mime else "", timeout=timeout)
        if found.answer == "values":
            variable, value, context = items
            return await self.complete(key=key, source=source, variable=variable, value=value, context=context,
                                       timeout=timeout)
        _check_call(key, source, timeout)
        prelude, prelude_digest = self._core.prelude_version()
        call = EntryCall(key=key, digest=self._digest(source), source=source, prelude_digest=prelude_digest,
                         prelude=prelude, kind=found, args=items)
        return await self._await(call, timeout, text_of)

    async def _await(self, call: Call, timeout: float | None, convert: Callable[[Call, Reply], _T]) -> _T:
        seconds = self._core.timeout if timeout is None else timeout
        if self._shared is not None and self._shared.takes(call):
            # Cancelling the awaiting task cancels the call, queued or running on its shared worker; answered on
            # this loop (it drives the shared workers, `drive_shared_on`), the answer takes no hop.
            return await loop_future(self._shared.submit(call, seconds, convert), asyncio.get_running_loop())
        loop: asyncio.AbstractEventLoop | None = None
        if self._direct:
            loop = asyncio.get_running_loop()
            if not supports_direct_calls(loop):
                loop = None
            else:
                direct = call_directly(self._core, call, timeout=seconds, convert=convert, loop=loop)
                if direct is not None:
                    return await direct
        # Queued; a worker this loop holds when its call ends may still run it (resources_qt.snippets.direct).
        queued = self._core.submit(call, timeout, convert, loop=loop)
        if loop is None:
            return await asyncio.wrap_future(queued)
        awaited = loop_future(queued, loop)
        gone = caller_gone()
        if gone is None or awaited.done():
            return await awaited
        # Most queued reads are answered within milliseconds: only one still waiting watches its caller.
        watchers: list[asyncio.Task[None]] = []
        check = loop.call_later(
            _WATCH_CALLER_AFTER, lambda: watchers.append(loop.create_task(self._give_up_when(gone, queued, call)))
        )
        try:
            return await awaited
        finally:
            check.cancel()
            for watcher in watchers:
                watcher.cancel()

    async def _give_up_when(self, gone: CallerGone, queued: Future[Any], call: Call) -> None:
        try:
            await gone()
        except Exception:  # it cannot tell: the read waits as any other
            logger.debug("Could not tell whether the caller of %s left", call.key, exc_info=True)
            return
        self._core.withdraw(queued, answer=Failed("abandoned", messages.abandoned(call)))

    def submit_read(
        self,
        *,
        key: str,
        source: str,
        uri: str,
        params: Mapping[str, object],
        mime_type: str = "",
        timeout: float | None = None,
    ) -> Future[list[ResourceContent]]:
        """`read` for callers without an event loop: a concurrent future of the content."""
        call = self._read_call(key=key, source=source, uri=uri, params=params, mime_type=mime_type, timeout=timeout)
        return self._submit(call, timeout, contents_of)

    def _submit(self, call: Call, timeout: float | None, convert: Callable[[Call, Reply], _T]) -> Future[_T]:
        if self._shared is not None and self._shared.takes(call):
            return self._shared.submit(call, self._core.timeout if timeout is None else timeout, convert)
        return self._core.submit(call, timeout, convert)

    def _read_call(
        self,
        *,
        key: str,
        source: str,
        uri: str,
        params: Mapping[str, object],
        mime_type: str,
        timeout: float | None,
    ) -> ReadCall:
        _check_call(key, source, timeout)
        if not isinstance(uri, str) or not uri:
            raise ValidationError("A snippet read needs a non-empty URI")
        prelude, prelude_digest = self._core.prelude_version()
        return ReadCall(
            key=key,
            digest=self._digest(source),
            source=source,
            prelude_digest=prelude_digest,
            prelude=prelude,
            uri=uri,
            params=dict(params),
            mime_type=mime_type or "",
        )

    def submit_complete(
        self,
        *,
        key: str,
        source: str,
        variable: str,
        value: str,
        context: Mapping[str, str],
        timeout: float | None = None,
    ) -> Future[list[str]]:
        """`complete` for callers without an event loop."""
        call = self._complete_call(
            key=key, source=source, variable=variable, value=value, context=context, timeout=timeout
        )
        return self._submit(call, timeout, values_of)

    def _complete_call(
        self,
        *,
        key: str,
        source: str,
        variable: str,
        value: str,
        context: Mapping[str, str],
        timeout: float | None,
    ) -> CompleteCall:
        _check_call(key, source, timeout)
        prelude, prelude_digest = self._core.prelude_version()
        return CompleteCall(
            key=key,
            digest=self._digest(source),
            source=source,
            prelude_digest=prelude_digest,
            prelude=prelude,
            variable=variable,
            value=value,
            context=dict(context),
        )

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{len(self.worker_pids())} running"
        return f"SnippetPool(workers={self.workers}, timeout={self.timeout:g}, {state})"


def _close(core: Dispatcher, shared: SharedWorkers | None) -> None:
    if shared is not None:
        shared.close()
    core.close()


def _kind(kind: SnippetKind | str) -> SnippetKind:
    try:
        found = kind if isinstance(kind, SnippetKind) else kind_named(kind)
    except (KeyError, TypeError) as exc:
        raise ValidationError(str(exc.args[0] if exc.args else exc), field="kind") from None
    if found.function is None or found.answer == "none":
        raise ValidationError(f"the {found.name} snippet has no entry to call", field="kind")
    return found


def _folder(path: str | os.PathLike[str] | None) -> str | None:
    if path is None:
        return None
    if not isinstance(path, str | os.PathLike):
        raise ValidationError(f"project_dir must be a path, not {type(path).__name__}")
    text = os.fspath(path)
    if not text or "\0" in text:
        raise ValidationError(f"project_dir must be a folder's path, not {text!r}")
    return os.path.abspath(text)


def _check_timeout(name: str, timeout: object) -> None:
    # NaN, inf and huge values would overflow the pool's timers (or never fire).
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not (0 < timeout <= MAX_TIMEOUT and math.isfinite(timeout))
    ):
        raise ValidationError(f"{name} must be a number of seconds in (0, {MAX_TIMEOUT:g}], not {timeout!r}")


def _check_settings(
    *,
    workers: WorkerCount | None,
    timeout: float | None,
    memory_limit_mb: int | None,
    max_queued_reads: int | None = None,
    resource_concurrency: Concurrency | None = None,
    max_processes: int | None = None,
    max_file_size_mb: int | None = None,
) -> None:
    # The project's keys are checked against their `[server]` rows (one range everywhere); 0 keeps the
    # library's "no limit" / "as many as workers" meaning for the process limits and the per-resource cap.
    checks = {
        "workers": workers, "reader_timeout": timeout, "memory_limit_mb": memory_limit_mb,
        "max_queued_reads": max_queued_reads, "resource_concurrency": resource_concurrency or None,
        "max_processes": max_processes or None, "max_file_size_mb": max_file_size_mb or None,
    }  # fmt: skip
    for key, value in checks.items():
        if value is not None:
            row = setting(key)
            problem = row.problem(value)
            if problem is not None:
                raise ValidationError(problem.replace(key, row.name, 1), field=row.name)


def _check_call(key: str, source: str, timeout: float | None) -> None:
    if not isinstance(key, str) or not key:
        raise ValidationError("A snippet call needs a non-empty key")
    if not isinstance(source, str):
        raise ValidationError(f"Snippet source must be a str, not {type(source).__name__}")
    if timeout is not None:
        _check_timeout("timeout", timeout)
