"""ThreadReaders: the trusted mode, reader snippets run in a bounded thread pool of the server process.

Same snippet contract as the worker processes (the helpers, the prelude,
`PROJECT_DIR`, sync and async `read`, `complete`, `instances`), same hot
reload (a new source digest loads the new version on the next call, through
`resources_qt.snippets.runtime.SnippetRuntime`: `resources_qt.snippets.call_runner.CallRunner`
runs each call), same per-call output capture, same bounded queue and
timeouts counted from submission. What it takes away: a snippet shares the
server's memory, interpreter and process, so a crash, `os._exit`, a memory
blow-up or a patched module takes or changes the whole server, and a thread
cannot be killed: at its deadline the caller is answered, the thread is
reported, counted as hung and replaced (up to `MAX_HUNG_THREADS` at once),
and runs on until its snippet returns. An `async def` entry runs on the async
lane instead (`resources_qt.snippets.thread_async`): many at once on one loop,
holding no thread, cancelled at its deadline. Snippets run in the server's working
directory (`PROJECT_DIR` still names the project's folder). For trusted
projects only; `resource-studio serve` uses it for `[server] readers = "thread"`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import weakref
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from resources_qt.content import ResourceContent
from resources_qt.errors import ValidationError
from resources_qt.snippets.answers import contents_of, values_of
from resources_qt.snippets.dispatch import OutputListener
from resources_qt.snippets.namespace import set_project_dir
from resources_qt.snippets.output import ReadOutputListener
from resources_qt.snippets.pool import (
    DEFAULT_MAX_QUEUED_READS,
    DEFAULT_OUTPUT_LIMIT,
    _check_call,
    _check_settings,
    _folder,
)
from resources_qt.snippets.pool_limits import AUTO, Concurrency, WorkerCount, auto_cap, per_resource_value
from resources_qt.snippets.protocol import (
    CompleteCall,
    ReadCall,
    source_digest,
)
from resources_qt.snippets.readers import SnippetReaders
from resources_qt.snippets.thread_core import MAX_HUNG_THREADS, ThreadCore

__all__ = ["MAX_HUNG_THREADS", "SnippetReaders", "ThreadReaders"]  # SnippetReaders: resources_qt.snippets.readers

logger = logging.getLogger(__name__)


_T = TypeVar("_T")


# -- the pool -----------------------------------------------------------------------------------------------


class ThreadReaders:
    """Reader and completion snippets run in threads of this process: the trusted mode.

    `workers` threads, or with "auto" one per CPU growing while long reads
    queue, up to `pool_limits.auto_cap()` (`thread_core.ThreadCore`). The surface
    `SnippetPool` offers the engine (`SnippetReaders`), with its settings: at
    most `resource_concurrency` calls of one snippet key run at once,
    `max_queued_reads` wait beyond the running ones (the next is answered
    busy), a call's `timeout` counts from its submission. The process limits
    (`memory_limit_mb`, `max_processes`, `max_file_size_mb`) are accepted and
    have no effect: nothing contains a thread. Thread-safe; `read`/`complete`
    may be awaited on any loop. Output listeners are called on pool threads.
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
        if not isinstance(prelude, str):
            raise ValidationError(f"The prelude must be a str, not {type(prelude).__name__}")
        if not isinstance(output_limit, int) or output_limit < 0:
            raise ValidationError(f"output_limit must not be negative, not {output_limit!r}")
        self._core = ThreadCore(
            workers=_threads(workers),
            most=_most_threads(workers),
            timeout=float(timeout),
            output_limit=output_limit,
            max_queued=max_queued_reads,
            per_resource=per_resource_value(resource_concurrency) or None,
            project_dir=_folder(project_dir) or "",
            prelude=prelude,
            memory_limit_mb=memory_limit_mb,
        )
        self._finalizer = weakref.finalize(self, self._core.close)

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        """Start the threads; idempotent (the first call starts them too)."""
        with self._core.cond:
            self._core.start_locked()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Threads are ready as soon as they start: True unless the pool is closed."""
        return not self._core.closed

    def close(self) -> None:
        """Fail queued calls and let the threads end (a running snippet finishes first); idempotent."""
        self._finalizer()

    @property
    def closed(self) -> bool:
        return self._core.closed

    # -- settings --------------------------------------------------------------------------

    @property
    def timeout(self) -> float:
        return self._core.timeout

    @property
    def workers(self) -> int:
        return self._core.workers

    @property
    def prelude_digest(self) -> str:
        return self._core.prelude_digest

    @property
    def project_dir(self) -> str:
        return self._core.project_dir

    def set_prelude(self, source: str) -> None:
        """The shared prelude; takes effect on the next call."""
        if not isinstance(source, str):
            raise ValidationError(f"The prelude must be a str, not {type(source).__name__}")
        with self._core.cond:
            self._core.prelude, self._core.prelude_digest = source, source_digest(source)

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
        """Change settings (None: unchanged); the process limits are checked and have no effect."""
        _check_settings(
            workers=workers,
            timeout=timeout,
            memory_limit_mb=memory_limit_mb,
            max_queued_reads=max_queued_reads,
            resource_concurrency=resource_concurrency,
            max_processes=max_processes,
            max_file_size_mb=max_file_size_mb,
        )
        folder = _folder(project_dir)
        core = self._core
        with core.cond:
            if timeout is not None:
                core.timeout = float(timeout)
            if max_queued_reads is not None:
                core.max_queued = max_queued_reads
            if resource_concurrency is not None:
                core.per_resource = per_resource_value(resource_concurrency) or None
            if folder is not None and folder != core.project_dir:
                core.project_dir = folder
                core.generation += 1
                set_project_dir(Path(folder))
            bounds = None if workers is None else (_threads(workers), _most_threads(workers))
            if bounds is not None and bounds != (core.workers, core.most):
                core.workers, core.most = bounds
                if core.started and not core.closed:
                    core.resize_locked()
            core.cond.notify_all()

    def add_output_listener(self, callback: OutputListener) -> Callable[[], None]:
        """Call `callback(key, text)` with what a call printed, when it ends; returns the unsubscribe call."""
        return self._add(self._core.listeners, callback)

    def add_read_output_listener(self, callback: ReadOutputListener) -> Callable[[], None]:
        """Call `callback(SnippetOutput)` once per call that printed anything, before its answer."""
        return self._add(self._core.read_listeners, callback)

    def _add(self, listeners: list[Any], callback: Any) -> Callable[[], None]:
        with self._core.cond:
            listeners.append(callback)

        def unsubscribe() -> None:
            with self._core.cond, contextlib.suppress(ValueError):
                listeners.remove(callback)

        return unsubscribe

    # -- diagnostics ---------------------------------------------------------------------------

    def worker_pids(self) -> list[int]:
        """No worker processes: []."""
        return []

    def shared_worker_pids(self) -> list[int]:
        """No worker processes: [] (async entries run on the async lane)."""
        return []

    def call_counts(self) -> tuple[int, int]:
        """(0, calls submitted): every call takes the queue to a pool thread."""
        with self._core.cond:
            return 0, self._core.calls

    def queued(self) -> int:
        with self._core.cond:
            return len(self._core.jobs)

    def threads(self) -> int:
        """Reader threads there are now, hung ones apart: `workers`, more while long reads queue under "auto"."""
        with self._core.cond:
            return len(self._core.active_locked())

    def hung_threads(self) -> tuple[int, int]:
        """(timed-out threads still running now, threads timed out since the start)."""
        with self._core.cond:
            return self._core.hung, self._core.hung_total

    # -- calls -----------------------------------------------------------------------------------

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
        """Run the reader snippet `source` for `uri` in a pool thread; raises as `SnippetPool.read` does."""
        call = self._read_call(key=key, source=source, uri=uri, params=params, mime_type=mime_type, timeout=timeout)
        return await self._core.submit_on(call, timeout, contents_of, asyncio.get_running_loop())

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
        """Run the completion snippet in a pool thread; raises as `SnippetPool.complete` does."""
        return await asyncio.wrap_future(
            self.submit_complete(
                key=key, source=source, variable=variable, value=value, context=context, timeout=timeout
            )
        )

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
        call = self._read_call(key=key, source=source, uri=uri, params=params, mime_type=mime_type, timeout=timeout)
        return self._core.submit(call, timeout, contents_of)

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
        prelude, digest = self._prelude()
        return ReadCall(
            key=key,
            digest=_digest(source),
            source=source,
            prelude_digest=digest,
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
        _check_call(key, source, timeout)
        prelude, digest = self._prelude()
        call = CompleteCall(
            key=key,
            digest=_digest(source),
            source=source,
            prelude_digest=digest,
            prelude=prelude,
            variable=variable,
            value=value,
            context=dict(context),
        )
        return self._core.submit(call, timeout, values_of)

    def _prelude(self) -> tuple[str, str]:
        with self._core.cond:
            return self._core.prelude, self._core.prelude_digest

    def __repr__(self) -> str:
        hung = self._core.hung
        return f"ThreadReaders(workers={self.workers}, timeout={self.timeout:g}, {hung} hung)"


_digest = functools.lru_cache(maxsize=256)(source_digest)
"""Digests of the sources seen last: hashing a 2,000-line reader costs about 60 us a read."""


def _threads(workers: WorkerCount) -> int:
    """Reader threads kept for `workers`: "auto" is one per CPU, at least two and at most the process pool's cap."""
    if workers != AUTO:
        return int(workers)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(2, min(cpus, auto_cap()))


def _most_threads(workers: WorkerCount) -> int:
    """Most reader threads at once: a number is the pool's size; "auto" grows while long reads queue, to the cap.

    Threads start only while every one is held by a long read (`thread_core.GROW_AFTER_SECONDS`), so fast
    readers keep the threads they have, and readers that wait on I/O overlap as the peers' thread pools do.
    """
    return auto_cap() if workers == AUTO else int(workers)
