"""MeasuredReaders: a snippet runner that times each client read's reader call, for the metrics and traces."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import TYPE_CHECKING

from resources_qt.content import ResourceContent
from resources_qt.server.metrics_read import PROBE
from resources_qt.snippets.dispatch import OutputListener
from resources_qt.snippets.output import ReadOutputListener
from resources_qt.snippets.pool_limits import Concurrency, WorkerCount
from resources_qt.snippets.readers import SnippetReaders

if TYPE_CHECKING:
    from resources_qt.server.engine import ResourceServer

__all__ = ["MeasuredReaders"]


class MeasuredReaders:
    """`inner` as the served resources use it, with the reader call of a resources/read timed.

    The reader's share of a read (waiting for a worker and running on it) is what the worker
    histogram and the read span's child span show. Reads made outside a client's request (live
    data's polling, previews) and completions pass straight through. `attach` names the server
    whose metrics and tracing it reports to (built after the resources it serves).
    """

    def __init__(self, inner: SnippetReaders) -> None:
        self.inner = inner
        self._engine: ResourceServer | None = None

    def attach(self, engine: ResourceServer) -> None:
        self._engine = engine

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
        engine, probe = self._engine, PROBE.get()
        if engine is None or probe is None:
            return await self.inner.read(
                key=key, source=source, uri=uri, params=params, mime_type=mime_type, timeout=timeout
            )
        probe.resource = key  # the snippet key is the resource's name: a project name, never the client's URI
        metrics, tracing = engine.metrics, engine.tracing
        if metrics is not None:
            metrics.reader_started()
        started = time.perf_counter()
        try:
            if tracing is None:
                return await self.inner.read(
                    key=key, source=source, uri=uri, params=params, mime_type=mime_type, timeout=timeout
                )
            with tracing.reader_span(resource=key, waiting=self.inner.queued()):
                return await self.inner.read(
                    key=key, source=source, uri=uri, params=params, mime_type=mime_type, timeout=timeout
                )
        finally:
            if metrics is not None:
                metrics.reader_done(key, time.perf_counter() - started)

    # -- the rest of SnippetReaders, as `inner` has it ---------------------------------

    @property
    def prelude_digest(self) -> str:
        return self.inner.prelude_digest

    @property
    def project_dir(self) -> str:
        return self.inner.project_dir

    @property
    def timeout(self) -> float:
        return self.inner.timeout

    @property
    def workers(self) -> int:
        return self.inner.workers

    @property
    def closed(self) -> bool:
        return self.inner.closed

    def start(self) -> None:
        self.inner.start()

    def wait_ready(self, timeout: float | None = None) -> bool:
        return self.inner.wait_ready(timeout)

    def close(self) -> None:
        self.inner.close()

    def set_prelude(self, source: str) -> None:
        self.inner.set_prelude(source)

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
        self.inner.configure(
            timeout=timeout, memory_limit_mb=memory_limit_mb, workers=workers, max_queued_reads=max_queued_reads,
            resource_concurrency=resource_concurrency, max_processes=max_processes,
            max_file_size_mb=max_file_size_mb, project_dir=project_dir,
        )  # fmt: skip

    def add_output_listener(self, callback: OutputListener) -> Callable[[], None]:
        return self.inner.add_output_listener(callback)

    def add_read_output_listener(self, callback: ReadOutputListener) -> Callable[[], None]:
        return self.inner.add_read_output_listener(callback)

    def worker_pids(self) -> list[int]:
        return self.inner.worker_pids()

    def shared_worker_pids(self) -> list[int]:
        return self.inner.shared_worker_pids()

    def call_counts(self) -> tuple[int, int]:
        return self.inner.call_counts()

    def queued(self) -> int:
        return self.inner.queued()

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
        return await self.inner.complete(
            key=key, source=source, variable=variable, value=value, context=context, timeout=timeout
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
        return self.inner.submit_read(
            key=key, source=source, uri=uri, params=params, mime_type=mime_type, timeout=timeout
        )
