"""A loop keeps the worker it was lent between calls, its pipe registered; whoever needs the worker gets it back."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

import pytest
from helpers.pools import MEMORY_MB, TIMEOUT
from helpers.waiting import eventually
from snippet_support import OK, read_text

from resources_qt.snippets import SnippetPool

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the direct path needs a selector loop")

_T = TypeVar("_T")


class _CountingLoop(asyncio.SelectorEventLoop):
    """A selector loop that counts the descriptors registered with it for reading."""

    def __init__(self) -> None:
        super().__init__()
        self.added: list[int] = []
        self.removed: list[int] = []

    def add_reader(self, fd: Any, callback: Callable[..., object], *args: Any) -> None:  # type: ignore[override]
        self.added.append(fd)
        super().add_reader(fd, callback, *args)

    def remove_reader(self, fd: Any) -> bool:
        self.removed.append(fd)
        return super().remove_reader(fd)


class _LoopThread:
    """A counting loop running in a thread of its own for the whole test (a loop that stays alive)."""

    def __init__(self) -> None:
        self.loop = _CountingLoop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="held-loop", daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


@pytest.fixture
def pool() -> Iterator[SnippetPool]:
    with SnippetPool(workers=1, timeout=TIMEOUT, memory_limit_mb=MEMORY_MB) as made:
        assert made.wait_ready(60)
        yield made


@pytest.fixture
def loop_thread() -> Iterator[_LoopThread]:
    made = _LoopThread()
    yield made
    made.close()


async def _read(pool: SnippetPool, source: str = OK) -> str:
    contents = await pool.read(key="t", source=source, uri="t://x", params={})
    assert contents[0].text is not None
    return contents[0].text


def _lend_one(pool: SnippetPool, loop_thread: _LoopThread) -> None:
    """Read until a read is lent (a slot's worker is lendable once its thread waits for work again)."""

    def lent() -> bool:
        before = pool.call_counts()[0]
        assert loop_thread.run(_read(pool)) == "fine"
        return pool.call_counts()[0] > before

    eventually(lent, 10, what="a read driven by the loop")


def _worker_fd(pool: SnippetPool) -> int:
    worker = pool._core.slots[0].worker
    assert worker is not None and worker.connection is not None
    return worker.connection.fileno()


def test_reads_in_a_row_on_one_loop_register_the_workers_pipe_once(
    pool: SnippetPool, loop_thread: _LoopThread
) -> None:
    _lend_one(pool, loop_thread)
    fd = _worker_fd(pool)
    lent = pool.call_counts()[0]
    added = loop_thread.loop.added.count(fd)
    for _ in range(10):
        assert loop_thread.run(_read(pool)) == "fine"
    assert pool.call_counts()[0] == lent + 10  # all ten driven by the loop
    assert loop_thread.loop.added.count(fd) == added  # no add_reader per call (ten before the change)
    assert loop_thread.loop.removed.count(fd) == 0
    assert pool._core.slots[0].held


def test_a_blocking_caller_gets_the_worker_a_loop_holds(pool: SnippetPool, loop_thread: _LoopThread) -> None:
    _lend_one(pool, loop_thread)
    assert pool._core.slots[0].held
    fd = _worker_fd(pool)
    assert read_text(pool, OK) == "fine"  # the only worker is held: the loop hands it back for this
    assert fd in loop_thread.loop.removed  # taken off the loop before the pool thread used the pipe
    assert loop_thread.run(_read(pool)) == "fine"


def test_a_held_worker_that_dies_between_calls_is_replaced(pool: SnippetPool, loop_thread: _LoopThread) -> None:
    _lend_one(pool, loop_thread)
    slot = pool._core.slots[0]
    assert slot.held
    (before,) = pool.worker_pids()
    os.kill(before, signal.SIGKILL)
    eventually(lambda: pool.worker_pids() not in ([], [before]), 30, what="a replacement worker")
    assert loop_thread.run(_read(pool)) == "fine"
    assert read_text(pool, OK) == "fine"


def test_new_worker_settings_reach_a_held_worker(pool: SnippetPool, loop_thread: _LoopThread) -> None:
    _lend_one(pool, loop_thread)
    assert pool._core.slots[0].held
    (before,) = pool.worker_pids()
    pool.configure(memory_limit_mb=MEMORY_MB + 64)  # replaces workers as they become idle
    eventually(lambda: pool.worker_pids() not in ([], [before]), 30, what="the worker replaced")
    assert loop_thread.run(_read(pool)) == "fine"


def test_a_worker_held_by_a_loop_that_closed_is_lent_to_the_next_loop_as_it_is(pool: SnippetPool) -> None:
    def lent_one() -> bool:
        before = pool.call_counts()[0]
        assert asyncio.run(_read(pool)) == "fine"
        return pool.call_counts()[0] > before

    eventually(lent_one, 10, what="a read driven by the loop")
    (worker,) = pool.worker_pids()
    lent = pool.call_counts()[0]
    for _ in range(3):  # each asyncio.run is a new loop; the last one closed holding the worker
        assert asyncio.run(_read(pool)) == "fine"
    assert pool.call_counts()[0] == lent + 3
    assert pool.worker_pids() == [worker]  # idle and in step: taken back, not replaced


def test_closing_the_pool_stops_a_held_worker(loop_thread: _LoopThread) -> None:
    pool = SnippetPool(workers=1, timeout=TIMEOUT, memory_limit_mb=MEMORY_MB)
    assert pool.wait_ready(60)
    _lend_one(pool, loop_thread)
    assert pool._core.slots[0].held
    (pid,) = pool.worker_pids()
    pool.close()

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
                return stat.read().split(") ")[1].startswith("Z")  # a zombie awaiting its reaper
        except (ProcessLookupError, FileNotFoundError):  # reaped between the two looks
            return True

    eventually(gone, 30, what="the held worker stopped")
