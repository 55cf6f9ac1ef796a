"""Reads whose caller left while they waited for a worker give up their place; started reads run on."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers.pools import MEMORY_MB
from helpers.waiting import eventually

from resources_qt.errors import ReaderFailedError
from resources_qt.snippets import SnippetPool
from resources_qt.snippets.caller import caller_gone, forget_caller, until_caller_leaves, watch_caller


@pytest.fixture
def one_at_a_time() -> Iterator[SnippetPool]:
    pool = SnippetPool(workers=1, timeout=30.0, memory_limit_mb=MEMORY_MB, resource_concurrency=1)
    assert pool.wait_ready(60)
    # Ready is the worker up; lendable is its slot's thread waiting for work too (under load it can lag).
    eventually(lambda: all(s.parked for s in pool._core.slots), 30, what="a lendable worker")
    yield pool
    pool.close()


def _gated(gate: Path) -> str:
    return (
        "import os, time\n"
        "def read(uri, params):\n"
        "    deadline = time.monotonic() + 20\n"
        f"    while not os.path.exists({str(gate)!r}) and time.monotonic() < deadline:\n"
        "        time.sleep(0.01)\n"
        "    return uri\n"
    )


async def _until(condition: Callable[[], bool], what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 20
    while not condition():
        assert loop.time() < deadline, f"not {what} within 20 s"
        await asyncio.sleep(0.01)


def test_a_queued_read_gives_up_once_its_caller_left_and_a_running_one_runs_on(
    one_at_a_time: SnippetPool, tmp_path: Path
) -> None:
    pool, gate = one_at_a_time, tmp_path / "gate"
    source = _gated(gate)

    async def main() -> tuple[str, ReaderFailedError]:
        left = asyncio.Event()

        async def gone() -> None:
            await left.wait()

        async def read(uri: str) -> str:
            with until_caller_leaves(gone):
                contents = await pool.read(key="gated", source=source, uri=uri, params={})
            return str(contents[0].text)

        running = asyncio.create_task(read("g://running"))
        await _until(lambda: pool.call_counts()[0] >= 1, "the first read lent a worker")
        waiting = asyncio.create_task(read("g://waiting"))
        await _until(lambda: pool.queued() == 1, "the second read queued")
        left.set()  # both callers leave: only the queued read can still give up
        with pytest.raises(ReaderFailedError) as caught:
            await waiting
        assert pool.queued() == 0
        gate.touch()
        return await running, caught.value

    text, error = asyncio.run(main())
    assert text == "g://running"
    assert error.data == {"reason": "abandoned", "snippet": "gated", "uri": "g://waiting"}
    assert "its caller left" in error.message


@pytest.mark.parametrize(("watched", "direct"), [(True, True), (False, True), (False, False)],
                         ids=["http", "stdio", "no-direct-calls"])  # fmt: skip
def test_a_cancelled_waiting_read_leaves_the_queue_at_once(tmp_path: Path, watched: bool, direct: bool) -> None:
    gate = tmp_path / "gate"
    source = _gated(gate)
    pool = SnippetPool(workers=1, timeout=30.0, memory_limit_mb=MEMORY_MB, resource_concurrency=1,
                       direct_calls=direct)  # fmt: skip
    assert pool.wait_ready(60)

    async def main() -> int:
        async def never() -> None:
            await asyncio.Event().wait()

        async def read(uri: str) -> object:
            with until_caller_leaves(never if watched else None):
                return await pool.read(key="gated", source=source, uri=uri, params={})

        running = asyncio.create_task(read("g://running"))
        await _until(lambda: sum(pool.call_counts()) >= 1 and pool.queued() == 0, "the first read running")
        waiting = [asyncio.create_task(read(f"g://w{i}")) for i in range(3)]
        await _until(lambda: pool.queued() == 3, "three reads queued")
        for task in waiting:
            task.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)
        left = pool.queued()  # before the reaper or a worker looked at the queue
        gate.touch()
        await running
        return left

    try:
        assert asyncio.run(main()) == 0
    finally:
        pool.close()


def test_the_caller_is_known_only_inside_the_block() -> None:
    calls: list[object] = []

    async def hung_up(caller: object) -> None:
        calls.append(caller)

    async def main() -> None:
        assert caller_gone() is None
        token = watch_caller(hung_up, "request-1")
        gone = caller_gone()
        assert gone is not None
        await gone()
        with until_caller_leaves(None):
            assert caller_gone() is None
        assert caller_gone() is not None
        forget_caller(token)
        assert caller_gone() is None

    asyncio.run(main())
    assert calls == ["request-1"]
