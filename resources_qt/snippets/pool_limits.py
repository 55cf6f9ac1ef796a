"""The snippet pool's settings as its dispatcher holds them (validated by the pool against the `[server]` table)."""

from __future__ import annotations

__all__ = ["Limits"]


class Limits:
    """The pool's settings, as the dispatcher holds them (validated by the pool)."""

    def __init__(
        self,
        *,
        workers: int,
        timeout: float,
        memory_limit_mb: int,
        output_limit: int,
        max_queued_reads: int,
        resource_concurrency: int | None,
        max_processes: int,
        max_file_size_mb: int,
        project_dir: str = "",
    ) -> None:
        self.workers = workers
        self.timeout = timeout
        self.memory_limit_mb = memory_limit_mb
        self.output_limit = output_limit
        self.max_queued_reads = max_queued_reads
        self.resource_concurrency = resource_concurrency
        self.max_processes = max_processes
        self.max_file_size_mb = max_file_size_mb
        self.project_dir = project_dir

    @property
    def per_resource(self) -> int:
        """Calls of one resource running at once; by default as many as there are workers."""
        return self.resource_concurrency or self.workers
