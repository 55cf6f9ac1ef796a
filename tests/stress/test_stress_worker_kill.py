"""kill -9 of a snippet worker: the read in flight fails with -32000 and the next read works."""

from __future__ import annotations

import os
import random
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.waiting import eventually
from stress_support import scaled

from resources_qt.errors import ReaderFailedError
from resources_qt.snippets import SnippetPool

pytestmark = pytest.mark.stress

SLOW = """import os, time
def read(uri, params):
    with open(params['pidfile'], 'w') as handle:
        handle.write(str(os.getpid()))
    time.sleep(30)
    return 'never'
"""
FAST = "def read(uri, params):\n    return 'ok ' + uri\n"


@pytest.fixture
def pool() -> Iterator[SnippetPool]:
    snippets = SnippetPool(workers=1, timeout=25.0)
    snippets.start()
    assert snippets.wait_ready(60)
    try:
        yield snippets
    finally:
        snippets.close()


def _wait_pid(path: Path, timeout: float = 20.0) -> int:
    eventually(lambda: path.exists() and bool(path.read_text()), timeout, what="the slow reader's start")
    return int(path.read_text())


def _fast_read(pool: SnippetPool, n: int) -> str:
    contents = pool.submit_read(key="fast", source=FAST, uri=f"x://fast/{n}", params={}).result(30)
    return str(contents[0].text)


def test_kill_during_read(pool: SnippetPool, tmp_path: Path) -> None:
    rng = random.Random(7)
    for n in range(scaled(3, 20)):
        pidfile = tmp_path / f"pid{n}"
        future = pool.submit_read(key="slow", source=SLOW, uri=f"x://slow/{n}", params={"pidfile": str(pidfile)})
        pid = _wait_pid(pidfile)
        assert pid not in (os.getpid(), 0)
        time.sleep(rng.uniform(0.0, 0.2))
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(ReaderFailedError) as failure:
            future.result(30)
        assert failure.value.code == -32000
        assert failure.value.message, "the error must say what happened"
        assert _fast_read(pool, n) == f"ok x://fast/{n}"


def test_kill_idle_worker_between_reads(pool: SnippetPool) -> None:
    for n in range(scaled(3, 20)):
        assert _fast_read(pool, n) == f"ok x://fast/{n}"
        for pid in pool.worker_pids():
            os.kill(pid, signal.SIGKILL)
        if n % 2:
            # Straight after the kill the pool may not have noticed yet: a clear -32000 is allowed once.
            try:
                _fast_read(pool, n)
            except ReaderFailedError as exc:
                assert exc.code == -32000
        else:
            time.sleep(0.5)  # the pool notices a dead idle worker and replaces it before the next call
            assert _fast_read(pool, n) == f"ok x://fast/{n}"
        assert _fast_read(pool, n + 1000) == f"ok x://fast/{n + 1000}"

