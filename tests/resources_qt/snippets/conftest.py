"""Fixtures for the snippet tests: a small pool of real worker processes with short limits."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers.pools import MEMORY_MB, TIMEOUT

from resources_qt.snippets import SnippetPool


@pytest.fixture
def pool() -> Iterator[SnippetPool]:
    pool = SnippetPool(workers=2, timeout=TIMEOUT, memory_limit_mb=MEMORY_MB)
    assert pool.wait_ready(60)
    yield pool
    pool.close()


@pytest.fixture
def solo_pool() -> Iterator[SnippetPool]:
    """One worker, so every call lands in the same process (unless it grows for a busy one)."""
    pool = SnippetPool(workers=1, timeout=TIMEOUT, memory_limit_mb=MEMORY_MB)
    assert pool.wait_ready(60)
    yield pool
    pool.close()
