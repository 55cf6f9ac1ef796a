"""cProfile of an in-process ResourceServer's loop thread, summarised as the top cumulative entries."""

from __future__ import annotations

import cProfile
import io
import pstats
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


async def _enable(profile: cProfile.Profile) -> None:
    profile.enable()


async def _disable(profile: cProfile.Profile) -> None:
    profile.disable()


@contextmanager
def server_thread_profile(
    server: Any, out: list[str], limit: int = 25, sort: str = "tottime", keep: list[pstats.Stats] | None = None
) -> Iterator[None]:
    """Profile everything the server's loop thread runs inside the block; appends the report to `out`."""
    profile = cProfile.Profile()
    future = server.submit(_enable(profile))
    if future is not None:
        future.result(10)
    try:
        yield
    finally:
        future = server.submit(_disable(profile))
        if future is not None:
            future.result(10)
        buffer = io.StringIO()
        stats = pstats.Stats(profile, stream=buffer)
        if keep is not None:
            keep.append(pstats.Stats(profile))
        stats.strip_dirs().sort_stats(sort).print_stats(limit)
        out.append(buffer.getvalue())
