"""Shared workers: `async def` entries run many at once in one worker process, each answered on its own."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from helpers.pools import MEMORY_MB
from helpers.waiting import eventually, eventually_async

from resources_qt.errors import ReaderFailedError
from resources_qt.snippets import SnippetPool
from resources_qt.snippets.output import SnippetOutput

_T = TypeVar("_T")


@pytest.fixture
def one_worker() -> Iterator[SnippetPool]:
    """One one-call worker: anything that overlaps past it ran on a shared worker."""
    pool = SnippetPool(workers=1, timeout=2.0, memory_limit_mb=MEMORY_MB)
    assert pool.wait_ready(60)
    yield pool
    pool.close()


def _meeting(folder: Path, count: int) -> str:
    """A reader answered only once `count` reads wait at once (each leaves a file, then awaits the others)."""
    return (
        "import asyncio, os\n"
        "async def read(uri, params):\n"
        f"    open(os.path.join({str(folder)!r}, params['n']), 'w').close()\n"
        f"    while len(os.listdir({str(folder)!r})) < {count}:\n"
        "        await asyncio.sleep(0.01)\n"
        "    return 'met ' + params['n']\n"
    )


async def _read(pool: SnippetPool, source: str, n: object, *, key: str = "k", timeout: float | None = None) -> str:
    contents = await pool.read(key=key, source=source, uri=f"t://{n}", params={"n": str(n)}, timeout=timeout)
    return str(contents[0].text)


def test_many_async_reads_wait_at_once_past_the_one_call_workers(one_worker: SnippetPool, tmp_path: Path) -> None:
    source = _meeting(tmp_path, 12)

    async def main() -> list[str]:
        return await asyncio.gather(*(_read(one_worker, source, n, timeout=10) for n in range(12)))

    assert sorted(asyncio.run(main())) == sorted(f"met {n}" for n in range(12))
    shared = one_worker.shared_worker_pids()
    assert len(shared) == 1


def test_sync_readers_keep_their_one_call_workers(one_worker: SnippetPool) -> None:
    source = "import os\ndef read(uri, params):\n    return str(os.getpid())\n"
    assert asyncio.run(_read(one_worker, source, 1)) not in map(str, one_worker.shared_worker_pids())
    assert one_worker.shared_worker_pids() == []


def test_switched_off_async_reads_take_one_call_workers(tmp_path: Path) -> None:
    pool = SnippetPool(workers=1, timeout=2.0, memory_limit_mb=MEMORY_MB, shared_async=False)
    try:
        source = _meeting(tmp_path, 2)

        async def main() -> list[str]:
            return await asyncio.gather(*(_read(pool, source, n, timeout=0.8) for n in range(2)))

        with pytest.raises(ReaderFailedError, match="timed out"):
            asyncio.run(main())  # one worker, one call at a time: the two never meet
        assert pool.shared_worker_pids() == []
    finally:
        pool.close()


def test_a_read_past_its_deadline_is_cancelled_and_its_worker_lives_on(one_worker: SnippetPool, tmp_path: Path) -> None:
    marker = tmp_path / "cancelled"
    stuck = (
        "import asyncio\n"
        "async def read(uri, params):\n"
        "    try:\n        await asyncio.sleep(30)\n"
        f"    except asyncio.CancelledError:\n        open({str(marker)!r}, 'w').close()\n        raise\n"
        "    return 'late'\n"
    )
    quick = "async def read(uri, params):\n    return 'quick'\n"
    started = time.monotonic()
    with pytest.raises(ReaderFailedError) as late:
        asyncio.run(_read(one_worker, stuck, 1, key="stuck", timeout=1.0))
    assert time.monotonic() - started < 4  # at the deadline, not when the 30 s sleep would have ended
    assert "timed out after 1 s and was cancelled" in late.value.message
    assert late.value.data is not None and late.value.data["reason"] == "timeout"
    eventually(marker.exists, 10, what="the snippet saw its cancellation")
    before = one_worker.shared_worker_pids()
    assert asyncio.run(_read(one_worker, quick, 2, key="quick")) == "quick"
    assert one_worker.shared_worker_pids() == before  # cancelled, not killed


def _waiting(folder: Path) -> str:
    """An async reader that marks its start (`began-N`), awaits `params['s']` seconds, marks its end (`ended-N`)."""
    return (
        "import asyncio, os\n"
        "async def read(uri, params):\n"
        f"    open(os.path.join({str(folder)!r}, 'began-' + params['n']), 'w').close()\n"
        "    await asyncio.sleep(float(params.get('s', '0.05')))\n"
        f"    open(os.path.join({str(folder)!r}, 'ended-' + params['n']), 'w').close()\n"
        "    return 'on time'\n"
    )


async def _read_params(pool: SnippetPool, source: str, params: dict[str, str], *, key: str,
                       timeout: float | None = None) -> str:
    contents = await pool.read(key=key, source=source, uri=f"t://{params['n']}", params=params, timeout=timeout)
    return str(contents[0].text)


def test_a_reader_that_blocks_its_loop_is_answered_and_its_worker_replaced(one_worker: SnippetPool,
                                                                           tmp_path: Path) -> None:
    blocking = "import time\nasync def read(uri, params):\n    time.sleep(30)\n    return 'late'\n"
    waiting = _waiting(tmp_path)
    assert asyncio.run(_read_params(one_worker, waiting, {"n": "0"}, key="waiting")) == "on time"
    first = one_worker.shared_worker_pids()

    async def main() -> list[BaseException | str]:
        other = asyncio.create_task(_read_params(one_worker, waiting, {"n": "1", "s": "8"}, key="waiting", timeout=20))
        await eventually_async((tmp_path / "began-1").exists, 10, what="the waiting read on the worker")
        blocked = asyncio.create_task(_read(one_worker, blocking, 2, key="blocking", timeout=1.0))
        return await asyncio.gather(blocked, other, return_exceptions=True)

    started = time.monotonic()
    blocked, other = asyncio.run(main())
    assert time.monotonic() - started < 7  # the deadline, then the kill a grace later: not the 8 s wait
    assert isinstance(blocked, ReaderFailedError) and "timed out after 1 s" in blocked.message
    assert isinstance(other, ReaderFailedError)
    assert "blocked the worker's event loop past its deadline" in other.message and "t://2" in other.message
    assert not (tmp_path / "ended-1").exists()
    assert asyncio.run(_read_params(one_worker, waiting, {"n": "3"}, key="waiting")) == "on time"
    assert set(one_worker.shared_worker_pids()).isdisjoint(first)


def test_a_crash_fails_the_reads_it_shared_the_worker_with(one_worker: SnippetPool) -> None:
    crash = "import os\nasync def read(uri, params):\n    os._exit(3)\n"
    waiting = "import asyncio\nasync def read(uri, params):\n    await asyncio.sleep(5)\n    return 'never'\n"

    async def main() -> list[BaseException | str]:
        other = asyncio.create_task(_read(one_worker, waiting, 1, key="waiting", timeout=20))
        await asyncio.sleep(0.3)
        crashed = asyncio.create_task(_read(one_worker, crash, 2, key="crash"))
        return await asyncio.gather(crashed, other, return_exceptions=True)

    crashed, other = asyncio.run(main())
    for failure, uri in ((crashed, "t://2"), (other, "t://1")):
        assert isinstance(failure, ReaderFailedError) and uri in failure.message
        assert "shared with 1 other async read(s), which exited (exit code 3)" in failure.message
        assert failure.data is not None and failure.data["reason"] == "exited"
    assert asyncio.run(_read(one_worker, "async def read(uri, params):\n    return 'back'\n", 3, key="b")) == "back"


def test_each_read_hears_only_what_it_printed(one_worker: SnippetPool, tmp_path: Path) -> None:
    source = (
        "import asyncio, sys\n" + _meeting(tmp_path, 2).replace(
            "    return 'met ' + params['n']\n",
            "    print('out of', params['n'])\n    print('err of', params['n'], file=sys.stderr)\n"
            "    return 'met ' + params['n']\n")
    )
    outputs: list[SnippetOutput] = []
    one_worker.add_read_output_listener(outputs.append)

    async def main() -> list[str]:
        return await asyncio.gather(*(_read(one_worker, source, n, timeout=10) for n in range(2)))

    asyncio.run(main())
    eventually(lambda: len(outputs) == 2, 5, what="both reads' output")
    by_uri = {output.uri: output.chunks for output in outputs}
    assert by_uri == {f"t://{n}": (("stdout", f"out of {n}\n"), ("stderr", f"err of {n}\n")) for n in range(2)}


def test_a_traceback_and_an_edit_reach_the_right_read(one_worker: SnippetPool) -> None:
    failing = "async def read(uri, params):\n    raise ValueError('nope ' + params['n'])\n"
    outputs: list[SnippetOutput] = []
    one_worker.add_read_output_listener(outputs.append)
    with pytest.raises(ReaderFailedError, match="ValueError: nope 1"):
        asyncio.run(_read(one_worker, failing, 1))
    eventually(lambda: len(outputs) == 1, 5, what="the traceback")
    assert outputs[0].uri == "t://1" and "Traceback" in outputs[0].chunks[0][1]
    fixed = "async def read(uri, params):\n    return 'fixed ' + params['n']\n"
    assert asyncio.run(_read(one_worker, fixed, 2)) == "fixed 2"  # the same key, its new version


def test_the_resource_cap_holds_the_rest_back(tmp_path: Path) -> None:
    pool = SnippetPool(workers=1, timeout=10.0, memory_limit_mb=MEMORY_MB, resource_concurrency=2)
    counter = tmp_path / "most"
    source = (
        "import asyncio\nRUNNING = [0]\n"
        "async def read(uri, params):\n"
        "    RUNNING[0] += 1\n"
        f"    with open({str(counter)!r}, 'a') as out:\n        out.write(f'{{RUNNING[0]}}\\n')\n"
        "    await asyncio.sleep(0.1)\n    RUNNING[0] -= 1\n    return params['n']\n"
    )
    try:

        async def main() -> list[str]:
            return await asyncio.gather(*(_read(pool, source, n) for n in range(6)))

        assert asyncio.run(main()) == [str(n) for n in range(6)]
    finally:
        pool.close()
    assert max(int(line) for line in counter.read_text().split()) == 2


def test_a_caller_that_leaves_cancels_its_running_read(one_worker: SnippetPool, tmp_path: Path) -> None:
    marker = tmp_path / "left"
    source = (
        "import asyncio\nasync def read(uri, params):\n    try:\n        await asyncio.sleep(30)\n"
        f"    finally:\n        open({str(marker)!r}, 'w').close()\n"
    )

    async def main() -> None:
        task = asyncio.create_task(_read(one_worker, source, 1, timeout=60))
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    eventually(marker.exists, 10, what="the read's cancellation in its worker")


def test_closing_the_pool_answers_what_runs_there(tmp_path: Path) -> None:
    pool = SnippetPool(workers=1, timeout=30.0, memory_limit_mb=MEMORY_MB)
    began = tmp_path / "began"
    source = f"import asyncio\nasync def read(uri, params):\n    open({str(began)!r}, 'w').close()\n" \
             "    await asyncio.sleep(30)\n"
    future = pool.submit_read(key="k", source=source, uri="t://1", params={})
    eventually(began.exists, 30, what="the read running on its shared worker")
    pool.close()
    with pytest.raises(ReaderFailedError, match="the snippet pool was closed"):
        future.result(10)
    assert pool.shared_worker_pids() == []


def test_new_settings_move_async_reads_to_a_new_worker(one_worker: SnippetPool, tmp_path: Path) -> None:
    source = "async def read(uri, params):\n    return str(PROJECT_DIR)\n"
    asyncio.run(_read(one_worker, source, 1))
    first = one_worker.shared_worker_pids()
    one_worker.configure(project_dir=tmp_path)
    assert asyncio.run(_read(one_worker, source, 2)) == str(tmp_path)
    assert one_worker.shared_worker_pids() != first


def test_a_memory_overrun_retires_its_worker_once_the_others_end(one_worker: SnippetPool, tmp_path: Path) -> None:
    hog = "async def read(uri, params):\n    return bytes(2**40)\n"
    waiting = _waiting(tmp_path)
    asyncio.run(_read_params(one_worker, waiting, {"n": "0"}, key="waiting"))
    first = one_worker.shared_worker_pids()
    still_running: list[bool] = []

    async def main() -> list[BaseException | str]:
        other = asyncio.create_task(_read_params(one_worker, waiting, {"n": "1", "s": "1.5"}, key="waiting",
                                                 timeout=10))
        await eventually_async((tmp_path / "began-1").exists, 10, what="the waiting read on the worker")
        try:
            await _read(one_worker, hog, 2, key="hog")
        except ReaderFailedError as exc:
            still_running.append(not (tmp_path / "ended-1").exists())
            return [exc, await other]
        raise AssertionError("the hog was answered with content")

    hogged, other = asyncio.run(main())
    assert isinstance(hogged, ReaderFailedError) and f"exceeded the memory limit of {MEMORY_MB} MiB" in hogged.message
    assert still_running == [True] and other == "on time"  # the worker stayed until its other read had answered
    assert asyncio.run(_read_params(one_worker, waiting, {"n": "3"}, key="waiting")) == "on time"
    assert set(one_worker.shared_worker_pids()).isdisjoint(first)


def test_past_the_resource_cap_and_the_queue_a_read_is_answered_busy(tmp_path: Path) -> None:
    pool = SnippetPool(workers=1, timeout=10.0, memory_limit_mb=MEMORY_MB, resource_concurrency=1, max_queued_reads=1)
    source = _meeting(tmp_path, 99).replace("< 99", "< 1 and False")  # answers after one pass of its loop
    source = source.replace("    return 'met '", "    await asyncio.sleep(0.5)\n    return 'met '")
    try:

        async def main() -> list[BaseException | str]:
            return await asyncio.gather(*(_read(pool, source, n) for n in range(3)), return_exceptions=True)

        assert asyncio.run(_read(pool, source, "warm")) == "met warm"  # the worker is up: only the cap holds reads
        answers = asyncio.run(main())
    finally:
        pool.close()
    busy = [a for a in answers if isinstance(a, ReaderFailedError)]
    assert len(busy) == 1 and "the server is busy (1 reads are already waiting" in busy[0].message
    assert sorted(a for a in answers if isinstance(a, str)) == ["met 0", "met 1"]


class _ServerLoop:
    """A loop running in a thread of its own, as a server's is."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="test-server-loop", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, _T], timeout: float = 30) -> _T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def end(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


def _io_threads() -> list[str]:
    return [thread.name for thread in threading.enumerate() if thread.name == "snippet-shared-io"]


def test_driven_on_a_server_loop_async_reads_cross_no_thread(one_worker: SnippetPool, tmp_path: Path) -> None:
    before = _io_threads()
    server = _ServerLoop()
    try:
        assert one_worker.drive_shared_on(server.loop)
        source = _meeting(tmp_path, 4)

        async def main() -> list[str]:
            return await asyncio.gather(*(_read(one_worker, source, n, timeout=10) for n in range(4)))

        assert sorted(server.run(main())) == [f"met {n}" for n in range(4)]
        # From another thread too: the call is handed to the server loop.
        elsewhere = one_worker.submit_read(key="k", source=source, uri="t://x", params={"n": "x"})
        assert elsewhere.result(10)[0].text == "met x"
        assert _io_threads() == before
        other = asyncio.new_event_loop()
        try:
            assert not one_worker.drive_shared_on(other)  # only before the first call
        finally:
            other.close()
    finally:
        server.end()


def test_after_its_server_loop_ends_the_next_read_gets_a_loop_of_its_own(one_worker: SnippetPool) -> None:
    before = _io_threads()
    server = _ServerLoop()
    source = "import asyncio\nasync def read(uri, params):\n    await asyncio.sleep(0.05)\n    return 'read'\n"
    assert one_worker.drive_shared_on(server.loop)
    assert server.run(_read(one_worker, source, 1)) == "read"
    first = one_worker.shared_worker_pids()
    server.end()
    assert asyncio.run(_read(one_worker, source, 2)) == "read"
    assert set(one_worker.shared_worker_pids()).isdisjoint(first)
    assert _io_threads() == [*before, "snippet-shared-io"]


def test_closing_from_another_thread_answers_the_reads_on_the_server_loop(tmp_path: Path) -> None:
    pool = SnippetPool(workers=1, timeout=30.0, memory_limit_mb=MEMORY_MB)
    server = _ServerLoop()
    began = tmp_path / "began"
    source = f"import asyncio\nasync def read(uri, params):\n    open({str(began)!r}, 'w').close()\n" \
             "    await asyncio.sleep(30)\n"
    try:
        assert pool.drive_shared_on(server.loop)
        running = asyncio.run_coroutine_threadsafe(_read(pool, source, 1), server.loop)
        eventually(began.exists, 30, what="the read running on its shared worker")
        pids = pool.shared_worker_pids()
        pool.close()
        with pytest.raises(ReaderFailedError, match="the snippet pool was closed"):
            running.result(10)
        assert pool.shared_worker_pids() == []
        eventually(lambda: not any(Path(f"/proc/{pid}").exists() for pid in pids), 10, what="the worker reaped")
    finally:
        server.end()


def test_a_read_cancelled_as_it_is_sent_does_not_get_its_worker_killed(one_worker: SnippetPool, tmp_path: Path) -> None:
    waiting = _waiting(tmp_path)
    assert asyncio.run(_read_params(one_worker, waiting, {"n": "0"}, key="waiting")) == "on time"
    first = one_worker.shared_worker_pids()

    async def main() -> str:
        other = asyncio.create_task(_read_params(one_worker, waiting, {"n": "1", "s": "3.5"}, key="waiting",
                                                 timeout=10))
        await eventually_async((tmp_path / "began-1").exists, 10, what="the waiting read on the worker")
        for n in range(20):  # some are cancelled in the worker before their task takes its first step
            task = asyncio.create_task(_read_params(one_worker, waiting, {"n": f"c{n}", "s": "30"}, key="cancelled",
                                                    timeout=1.0))
            await asyncio.sleep(0)
            task.cancel()
        return await other  # past the cancelled reads' deadlines and grace: a false "blocked" would fail it

    assert asyncio.run(main()) == "on time"
    assert first[0] in one_worker.shared_worker_pids()  # not killed (a second may have started for the burst)


def test_a_queued_read_times_out_or_leaves_the_queue_when_cancelled(tmp_path: Path) -> None:
    pool = SnippetPool(workers=1, timeout=10.0, memory_limit_mb=MEMORY_MB, resource_concurrency=1)
    waiting = _waiting(tmp_path)
    try:
        assert asyncio.run(_read_params(pool, waiting, {"n": "0"}, key="w")) == "on time"

        async def main() -> None:
            running = asyncio.create_task(_read_params(pool, waiting, {"n": "1", "s": "2"}, key="w"))
            await eventually_async((tmp_path / "began-1").exists, 10, what="the first read running")
            with pytest.raises(ReaderFailedError, match="waiting for a free worker"):
                await _read_params(pool, waiting, {"n": "2"}, key="w", timeout=0.5)
            queued = asyncio.create_task(_read_params(pool, waiting, {"n": "3"}, key="w"))
            await eventually_async(lambda: pool.queued() == 1, 5, what="the read queued")
            queued.cancel()
            await eventually_async(lambda: pool.queued() == 0, 5, what="the cancelled read leaving the queue")
            assert await running == "on time"

        asyncio.run(main())
        assert not (tmp_path / "began-2").exists() and not (tmp_path / "began-3").exists()
    finally:
        pool.close()
