"""The direct path's edges: a deadline meeting an answer, output cut after it, fds above 1024, kills, shrinks."""

from __future__ import annotations

import asyncio
import fcntl
import os
import resource
import struct
import sys
import termios
from collections.abc import Iterator
from multiprocessing.connection import wait
from multiprocessing.reduction import ForkingPickler
from pathlib import Path

import pytest
from helpers.pools import MEMORY_MB, TIMEOUT
from helpers.waiting import eventually, eventually_async
from snippet_support import OK, healthy, read_text

from resources_qt.snippets import SnippetPool
from resources_qt.snippets.channel import Channel
from resources_qt.snippets.process import WorkerProcess
from resources_qt.snippets.protocol import Failed, Reply, WorkerConfig

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the direct path needs a selector loop")

RAISES = "def read(uri, params):\n    raise ValueError('too late')\n"

LATE_OUTPUT = (
    "import threading, time\n"
    "def _late():\n"
    "    time.sleep(0.2)  # after the answer went out\n"
    "    print('x' * 2_000_000, end='')\n"
    "def read(uri, params):\n"
    "    threading.Thread(target=_late).start()\n"
    "    return 'early'\n"
)
"""A reader whose thread prints, after the read answered, one message longer than the socket pair holds."""

_LATE_CHARS = 2_000_000


@pytest.fixture
def direct_pool() -> Iterator[SnippetPool]:
    pool = SnippetPool(workers=1, timeout=TIMEOUT, memory_limit_mb=MEMORY_MB, output_limit=1_000_000)
    assert pool.wait_ready(60)
    yield pool
    pool.close()


@pytest.fixture
def high_fds() -> Iterator[None]:
    """Descriptors 0..1099 taken, so a pool started now has its pipes and sentinels above select()'s 1024."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1400:
        if hard != resource.RLIM_INFINITY and hard < 1400:
            pytest.skip("the descriptor limit is below 1400")
        resource.setrlimit(resource.RLIMIT_NOFILE, (1400, hard))
    taken: list[int] = []
    try:
        while not taken or taken[-1] < 1100:
            taken.append(os.open(os.devnull, os.O_RDONLY))
        yield
    finally:
        for fd in taken:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _settle(pool: SnippetPool) -> None:
    """Read until a read is lent: a slot takes a worker back only once its thread waits for work again."""

    def lent_one() -> bool:
        before = pool.call_counts()[0]
        assert asyncio.run(_read(pool, OK)) == "fine"
        return pool.call_counts()[0] > before

    eventually(lent_one, 10, what="a read driven by the loop")


async def _read(pool: SnippetPool, source: str) -> str:
    contents = await pool.read(key="t", source=source, uri="t://x", params={})
    assert len(contents) == 1 and contents[0].text is not None
    return contents[0].text


def _unread(fd: int) -> int:
    """Bytes waiting in the pipe `fd`."""
    return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0])


def test_an_answer_that_meets_its_deadline_is_the_timeout_and_the_worker_is_replaced(
    direct_pool: SnippetPool,
) -> None:
    _settle(direct_pool)
    before = set(direct_pool.worker_pids())
    core = direct_pool._core

    async def main() -> list[Reply]:
        loop = asyncio.get_running_loop()
        call = direct_pool._read_call(key="t", source=RAISES, uri="t://x", params={}, mime_type="", timeout=None)
        slot = core.lend(call.key, loop)
        assert slot is not None and slot.worker is not None
        worker = slot.worker
        outgoing = worker.prepare(call)
        answer: asyncio.Future[Reply] = loop.create_future()
        channel = slot.channel = Channel(core, slot, worker, loop)
        channel.start(call, outgoing, bytes(ForkingPickler.dumps(outgoing)), timeout=30, future=answer,
                      convert=lambda _call, reply: reply)
        # The worker's answer ("raised") is in the pipe, unread: the loop is held here, so the deadline
        # fires in the same turn as the answer becomes readable, and before it is read.
        assert worker.connection is not None and wait([worker.connection], 10)
        channel._on_timeout()
        return [await asyncio.wait_for(answer, 10)]

    replies = asyncio.run(main())
    assert len(replies) == 1
    assert isinstance(replies[0], Failed) and replies[0].reason == "timeout"
    # The killed worker was not parked as idle: the next reads get their own answers from a new one.
    for _ in range(3):
        assert asyncio.run(_read(direct_pool, OK)) == "fine"
    assert not set(direct_pool.worker_pids()) & before
    eventually(lambda: healthy(direct_pool), 10, what="a healthy pool")


def test_a_pool_started_with_descriptors_above_1024_still_lends_its_workers(high_fds: None) -> None:
    with SnippetPool(workers=1, timeout=TIMEOUT, memory_limit_mb=MEMORY_MB) as pool:
        assert pool.wait_ready(60)
        _settle(pool)  # fails when looks_alive() cannot watch a sentinel above 1024


def test_output_cut_after_the_answer_reaches_the_listener_and_the_worker_stays_in_step(high_fds: None) -> None:
    with SnippetPool(workers=1, timeout=TIMEOUT, memory_limit_mb=MEMORY_MB, output_limit=4_000_000) as pool:
        assert pool.wait_ready(60)
        _settle(pool)
        sizes: list[int] = []
        pool.add_output_listener(lambda key, text: sizes.append(len(text)))
        before = set(pool.worker_pids())
        lent = pool.call_counts()[0]
        slot = pool._core.slots[0]
        assert slot.worker is not None and slot.worker.connection is not None
        fd = slot.worker.connection.fileno()
        assert fd >= 1024

        async def main() -> tuple[str, str]:
            task = asyncio.ensure_future(_read(pool, LATE_OUTPUT))
            await asyncio.sleep(0)  # its first step writes the call to the lent worker
            # Hold the loop until the answer and the start of the 2 MB message after it wait in the
            # pipe: the loop's next read takes the answer and a message cut in the middle.
            eventually(lambda: _unread(fd) >= 16_000, 10, what="the pipe filling")
            early = await asyncio.wait_for(task, 10)
            await eventually_async(lambda: sum(sizes) == _LATE_CHARS, 10, what="the late output arriving")
            return early, await asyncio.wait_for(_read(pool, OK), 10)

        assert asyncio.run(main()) == ("early", "fine")
        assert pool.call_counts()[0] == lent + 2
        assert set(pool.worker_pids()) == before  # in step: the worker was given back, not replaced
        assert read_text(pool, OK) == "fine"


def test_interrupting_a_worker_its_owner_just_killed_and_closed_is_quiet() -> None:
    worker = WorkerProcess(config=WorkerConfig(MEMORY_MB, 65536, os.getpid()), name="race")
    worker.start()
    process = worker.process
    assert process is not None
    # What the owner's kill() does between interrupt() reading the process and using it.
    process.kill()
    process.join(10)
    process.close()
    worker.interrupt()  # ValueError ("process object is closed") before the fix
    assert worker.connection is not None
    worker.connection.close()  # the rest of the owner's kill()


def test_a_lent_call_keeps_counting_against_its_limit_while_the_pool_shrinks(tmp_path: Path) -> None:
    log, go = tmp_path / "log.txt", tmp_path / "go"
    source = (
        "import os, time\n"
        "def read(uri, params):\n"
        f"    with open({str(log)!r}, 'a') as f:\n"
        "        f.write('s')\n"
        f"    while not os.path.exists({str(go)!r}):\n"
        "        time.sleep(0.01)\n"
        f"    with open({str(log)!r}, 'a') as f:\n"
        "        f.write('e')\n"
        "    return 'done'\n"
    )
    with SnippetPool(workers=2, timeout=30, memory_limit_mb=MEMORY_MB, resource_concurrency=1) as pool:
        assert pool.wait_ready(60)
        _settle(pool)
        core = pool._core
        lent = pool.call_counts()[0]

        async def main() -> list[str]:
            first = asyncio.ensure_future(pool.read(key="limited", source=source, uri="t://1", params={}))
            await eventually_async(lambda: log.exists() and log.read_text() == "s", 10, what="the lent call running")
            assert pool.call_counts()[0] == lent + 1
            pool.configure(workers=1)  # retires the busy (lent) slot first
            await eventually_async(lambda: len(core.slots) == 1, 10, what="the retired slot's thread ending")
            with core.cond:
                assert core.running.get("limited") == 1  # the lent call still counts
            second = pool.submit_read(key="limited", source=source, uri="t://2", params={})
            go.touch()
            texts = [(await first)[0].text, (await asyncio.wrap_future(second))[0].text]
            return [t or "" for t in texts]

        assert asyncio.run(main()) == ["done", "done"]
    assert log.read_text() == "sese"  # never two at once


def test_a_worker_that_lost_a_long_snippet_gets_it_again_on_the_direct_path(direct_pool: SnippetPool) -> None:
    _settle(direct_pool)
    source = "# " + "x" * 200_000 + "\ndef read(uri, params):\n    return 'long'\n"
    slot = direct_pool._core.slots[0]
    assert slot.worker is not None
    call = direct_pool._read_call(key="t", source=source, uri="t://x", params={}, mime_type="", timeout=None)
    # The pool believes the worker holds this version: the call goes without its source, the worker
    # answers NeedSource, and the loop sends the whole call (over 64 KB: from a pool thread).
    slot.worker.sent(call)
    lent = direct_pool.call_counts()[0]
    before = set(direct_pool.worker_pids())
    assert asyncio.run(_read(direct_pool, source)) == "long"
    assert direct_pool.call_counts()[0] == lent + 1
    assert set(direct_pool.worker_pids()) == before
    assert asyncio.run(_read(direct_pool, source)) == "long"  # held now: sent without its source
