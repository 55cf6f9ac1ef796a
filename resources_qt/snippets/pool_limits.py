"""The snippet pool's settings as its dispatcher holds them (validated by the pool against the `[server]` table)."""

from __future__ import annotations

import os
from typing import Literal

__all__ = ["AUTO", "Limits", "WorkerCount", "auto_cap", "worker_bounds"]

AUTO = "auto"
WorkerCount = int | Literal["auto"]
"""`workers`: a number, or "auto" (the pool follows the load, `worker_bounds`)."""

_AUTO_FLOOR = 2
_AUTO_CEILING = 64
_PER_CPU = 4
_MB_PER_WORKER = 100
"""What an idle worker with a few snippets loaded takes, rounded up (about 30-40 MB resident)."""


def auto_cap() -> int:
    """The most workers "auto" grows to: 4 per CPU, one per 100 MB of available memory, between 2 and 64."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    cap = _PER_CPU * cpus
    available = _available_mb()
    if available is not None:
        cap = min(cap, available // _MB_PER_WORKER)
    return max(_AUTO_FLOOR, min(_AUTO_CEILING, cap))


def _available_mb() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // (1024 * 1024)
    except (ValueError, OSError, AttributeError):
        return None


def worker_bounds(workers: WorkerCount) -> tuple[int, int]:
    """(workers kept running, most workers at once): "auto" keeps 2 and grows to `auto_cap()`; a number n
    keeps n and grows to 2n while all are busy (a spare kept warm, retired after 10 s idle)."""
    if workers == AUTO:
        cap = auto_cap()
        return min(_AUTO_FLOOR, cap), cap
    assert isinstance(workers, int)
    return workers, 2 * workers


class Limits:
    """The pool's settings, as the dispatcher holds them (validated by the pool)."""

    def __init__(
        self,
        *,
        workers: int,
        most: int = 0,
        auto: bool = False,
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
        """Workers kept running."""
        self.most = most or 2 * workers
        """Most workers at once, spares included."""
        self.auto = auto
        """`workers = "auto"`: `workers` and `most` follow `worker_bounds`."""
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
        """Calls of one resource running at once; by default as many as there are workers (or may be, "auto")."""
        return self.resource_concurrency or (self.most if self.auto else self.workers)
