"""The snippet pool's settings as its dispatcher holds them (validated by the pool against the `[server]` table)."""

from __future__ import annotations

import os
from typing import Literal

__all__ = ["AUTO", "Concurrency", "Limits", "WorkerCount", "auto_cap", "auto_per_resource", "per_resource_value",
           "worker_bounds"]

AUTO = "auto"
WorkerCount = int | Literal["auto"]
"""`workers`: a number, or "auto" (the pool follows the load, `worker_bounds`)."""
Concurrency = int | Literal["auto"]
"""`resource_concurrency`: a number, or "auto" (`auto_per_resource`)."""

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


def per_resource_value(value: Concurrency | None) -> int | None:
    """The pool's per-resource cap for a `resource_concurrency` setting: 0 for "auto", None for unchanged."""
    return 0 if value == AUTO else value if value is None else int(value)


def auto_per_resource(*, workers: int, most: int, auto: bool) -> int:
    """`resource_concurrency = "auto"`: with `workers = "auto"`, half the most there may be (at least 2), so a
    reader waiting on I/O overlaps as the pool grows and another resource still finds the other half; with a
    number of workers, that number."""
    return max(2, most // 2) if auto else workers


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
        """Calls of one resource running at once (`auto_per_resource` unless set)."""
        return self.resource_concurrency or auto_per_resource(workers=self.workers, most=self.most, auto=self.auto)
