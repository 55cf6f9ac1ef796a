"""What the engine uses of a reader pool: the worker processes (`SnippetPool`) and the trusted threads alike."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Protocol

from resources_qt.content import ResourceContent
from resources_qt.snippets.dispatch import OutputListener
from resources_qt.snippets.output import ReadOutputListener
from resources_qt.snippets.pool_limits import Concurrency, WorkerCount

__all__ = ["SnippetReaders"]


class SnippetReaders(Protocol):
    """What the engine, live data and `serve` use of a snippet runner: `SnippetPool` and `ThreadReaders`."""

    @property
    def prelude_digest(self) -> str: ...
    @property
    def project_dir(self) -> str: ...
    @property
    def timeout(self) -> float: ...
    @property
    def workers(self) -> int: ...
    @property
    def closed(self) -> bool: ...
    def start(self) -> None: ...
    def wait_ready(self, timeout: float | None = None) -> bool: ...
    def close(self) -> None: ...
    def set_prelude(self, source: str) -> None: ...
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
    ) -> None: ...
    def add_output_listener(self, callback: OutputListener) -> Callable[[], None]: ...
    def add_read_output_listener(self, callback: ReadOutputListener) -> Callable[[], None]: ...
    def worker_pids(self) -> list[int]: ...
    def shared_worker_pids(self) -> list[int]: ...
    def call_counts(self) -> tuple[int, int]: ...
    def queued(self) -> int: ...
    async def read(
        self,
        *,
        key: str,
        source: str,
        uri: str,
        params: Mapping[str, object],
        mime_type: str = "",
        timeout: float | None = None,
    ) -> list[ResourceContent]: ...
    async def complete(
        self,
        *,
        key: str,
        source: str,
        variable: str,
        value: str,
        context: Mapping[str, str],
        timeout: float | None = None,
    ) -> list[str]: ...
    def submit_read(
        self,
        *,
        key: str,
        source: str,
        uri: str,
        params: Mapping[str, object],
        mime_type: str = "",
        timeout: float | None = None,
    ) -> Future[list[ResourceContent]]: ...
