"""Calls driven by the awaiting event loop on a lent worker: the same answers and guarantees as the queued path."""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import threading
from pathlib import Path

import pytest
from helpers.pools import MEMORY_MB, TIMEOUT
from helpers.waiting import eventually, eventually_async
from snippet_support import OK, healthy, read_text
from test_snippet_failures import CASES, REPLACED

from resources_qt.errors import ReaderFailedError
from resources_qt.snippets import SnippetOutput, SnippetPool
from resources_qt.snippets.direct import loop_future


def _settle(pool: SnippetPool) -> None:
    """Read until a read is lent: a slot takes a worker back only once its thread waits for work again."""

    def lent_one() -> bool:
        before = pool.call_counts()[0]
        assert asyncio.run(_read(pool, OK, key="settle")) == "fine"
        return pool.call_counts()[0] > before

    eventually(lent_one, 10, what="a read driven by the loop")


async def _read(pool: SnippetPool, source: str, *, key: str = "t", uri: str = "t://x") -> str:
    contents = await pool.read(key=key, source=source, uri=uri, params={})
    assert len(contents) == 1 and contents[0].text is not None
    return contents[0].text


def test_a_read_on_an_idle_pool_is_driven_by_the_awaiting_loop(solo_pool: SnippetPool) -> None:
    threads: list[str] = []
    outputs: list[SnippetOutput] = []
    solo_pool.add_output_listener(lambda key, text: threads.append(threading.current_thread().name))
    solo_pool.add_read_output_listener(outputs.append)
    source = "def read(uri, params):\n    print('hello from', uri)\n    return uri.upper()\n"
    _settle(solo_pool)
    lent, queued = solo_pool.call_counts()

    async def main() -> tuple[str, str]:
        return await _read(solo_pool, source, uri="t://y"), threading.current_thread().name

    text, loop_thread = asyncio.run(main())
    assert text == "T://Y"
    assert solo_pool.call_counts() == (lent + 1, queued)
    assert threads == [loop_thread]  # printed output reached the listener on the loop, not a pool thread
    assert [o.text for o in outputs] == ["hello from t://y\n"]


# "memory hog" races its allocations against the 1.5 s timeout on a loaded machine; "one huge
# allocation" covers the memory answer here, and test_snippet_failures the hog on the queued path.
@pytest.mark.parametrize("case", [case for case in CASES if case != "memory hog"])
def test_misbehaviour_gets_the_same_answer_directly(solo_pool: SnippetPool, case: str) -> None:
    source, reason, message = CASES[case]
    _settle(solo_pool)
    before = set(solo_pool.worker_pids())
    lent = solo_pool.call_counts()[0]

    async def main() -> ReaderFailedError:
        with pytest.raises(ReaderFailedError) as caught:
            await _read(solo_pool, source)
        return caught.value

    error = asyncio.run(main())
    assert message in error.message
    assert error.data == {"reason": reason, "snippet": "t", "uri": "t://x"}
    assert solo_pool.call_counts()[0] == lent + 1
    assert asyncio.run(_read(solo_pool, OK)) == "fine"
    assert (set(solo_pool.worker_pids()) != before) == (reason in REPLACED)


def _started_listener(pool: SnippetPool) -> list[str]:
    """Keys whose snippet wrote STARTED (straight to fd 1, which the worker forwards at once)."""
    started: list[str] = []
    pool.add_output_listener(lambda key, text: started.append(key) if "started" in text else None)
    return started


def _slow(seconds: float, answer: str) -> str:
    return (
        "import os, time\n"
        "def read(uri, params):\n"
        "    os.write(1, b'started\\n')\n"
        f"    time.sleep({seconds})\n"
        f"    return {answer!r}\n"
    )


def test_a_cancelled_read_runs_to_its_end_before_the_worker_serves_another(solo_pool: SnippetPool) -> None:
    started = _started_listener(solo_pool)
    _settle(solo_pool)
    lent = solo_pool.call_counts()[0]

    async def main() -> str:
        task = asyncio.create_task(_read(solo_pool, _slow(0.3, "slow"), key="slow"))
        await eventually_async(lambda: "slow" in started, 10, what="the slow read running")
        assert solo_pool.call_counts()[0] == lent + 1  # the loop drives it: its cancellation is the loop's
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # The worker is still busy with the cancelled call: this one must get its own answer, not "slow".
        return await _read(solo_pool, OK, key="ok")

    assert asyncio.run(main()) == "fine"


def test_one_resource_at_its_limit_waits_its_turn(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    source = (
        "import time\n"
        "def read(uri, params):\n"
        f"    with open({str(log)!r}, 'a') as f:\n"
        "        f.write('s')\n"
        "    time.sleep(0.1)\n"
        f"    with open({str(log)!r}, 'a') as f:\n"
        "        f.write('e')\n"
        "    return 'done'\n"
    )
    with SnippetPool(workers=2, timeout=TIMEOUT, memory_limit_mb=MEMORY_MB, resource_concurrency=1) as pool:
        assert pool.wait_ready(60)

        async def main() -> list[str]:
            return list(await asyncio.gather(*(_read(pool, source, key="limited") for _ in range(3))))

        assert asyncio.run(main()) == ["done"] * 3
        lent, queued = pool.call_counts()
    assert log.read_text() == "sesese"  # never two at once
    assert lent >= 1 and queued >= 2


def test_closing_the_pool_answers_a_direct_call_in_flight(solo_pool: SnippetPool) -> None:
    started = _started_listener(solo_pool)
    _settle(solo_pool)
    lent = solo_pool.call_counts()[0]

    async def main() -> ReaderFailedError:
        task = asyncio.create_task(_read(solo_pool, _slow(30, "never")))
        await eventually_async(lambda: "t" in started, 10, what="the slow read running")
        assert solo_pool.call_counts()[0] == lent + 1
        await asyncio.to_thread(solo_pool.close)
        with pytest.raises(ReaderFailedError) as caught:
            await asyncio.wait_for(task, 10)
        return caught.value

    error = asyncio.run(main())
    assert "closed" in error.message


def test_a_loop_that_ends_mid_call_leaves_the_pool_usable(solo_pool: SnippetPool) -> None:
    started = _started_listener(solo_pool)
    _settle(solo_pool)
    lent = solo_pool.call_counts()[0]

    async def main() -> None:
        asyncio.get_running_loop().create_task(_read(solo_pool, _slow(0.5, "orphan")))
        # The call is on the worker; the loop closes without waiting for it.
        await eventually_async(lambda: "t" in started, 10, what="the slow read running")

    asyncio.run(main())
    assert solo_pool.call_counts()[0] == lent + 1
    # The slot notices the closed loop, replaces the worker it lent, and serves the queued path again.
    assert read_text(solo_pool, OK) == "fine"
    eventually(lambda: healthy(solo_pool), 10, what="a healthy pool")


def test_an_answer_of_many_pipe_reads_arrives_whole_on_the_loop(solo_pool: SnippetPool) -> None:
    # Text and blob of about 3 MB each: the loop reads the answer in 64 KiB pieces over many callbacks.
    source = (
        "def read(uri, params):\n"
        "    body = ''.join(chr(0x41 + i % 26) + chr(0x3b1 + i % 20) for i in range(1_500_000))\n"
        "    return [text(body, uri=uri), blob(bytes(range(256)) * 8192, 'application/octet-stream', uri=uri + '/b')]\n"
    )
    _settle(solo_pool)
    lent = solo_pool.call_counts()[0]

    async def main() -> tuple[str | None, str | None]:
        contents = await solo_pool.read(key="big", source=source, uri="t://big", params={})
        return contents[0].text, contents[1].blob

    text, blob = asyncio.run(main())
    assert text == "".join(chr(0x41 + i % 26) + chr(0x3B1 + i % 20) for i in range(1_500_000))
    assert blob is not None and base64.b64decode(blob) == bytes(range(256)) * 8192
    assert solo_pool.call_counts()[0] == lent + 1
    assert asyncio.run(_read(solo_pool, OK)) == "fine"


def test_direct_calls_can_be_turned_off() -> None:
    with SnippetPool(workers=1, timeout=TIMEOUT, memory_limit_mb=MEMORY_MB, direct_calls=False) as pool:
        assert asyncio.run(_read(pool, OK)) == "fine"
        assert pool.call_counts() == (0, 1)


def test_reads_queued_behind_a_lent_worker_are_run_by_the_same_loop(solo_pool: SnippetPool) -> None:
    threads: set[str] = set()
    solo_pool.add_output_listener(lambda key, text: threads.add(threading.current_thread().name))
    source = "def read(uri, params):\n    print(uri)\n    return uri\n"
    _settle(solo_pool)
    lent, queued = solo_pool.call_counts()

    async def main() -> tuple[list[str], str]:
        texts = await asyncio.gather(*(_read(solo_pool, source, uri=f"t://{i}") for i in range(5)))
        return list(texts), threading.current_thread().name

    texts, loop_thread = asyncio.run(main())
    assert texts == [f"t://{i}" for i in range(5)]
    # One worker: the first read is lent, the other four queue and the loop runs them on it in turn.
    assert solo_pool.call_counts() == (lent + 5, queued + 4)
    assert threads == {loop_thread}


def test_a_blocking_callers_read_is_never_run_by_a_loop(solo_pool: SnippetPool) -> None:
    threads: dict[str, str] = {}

    def on_output(key: str, text: str) -> None:
        threads.setdefault(text.strip(), threading.current_thread().name)

    solo_pool.add_output_listener(on_output)
    slow = "import time\ndef read(uri, params):\n    print(uri)\n    time.sleep(0.2)\n    return uri\n"
    _settle(solo_pool)

    async def main() -> str:
        first = asyncio.ensure_future(_read(solo_pool, slow, key="slow", uri="t://lent"))
        await eventually_async(lambda: "t://lent" in threads, 10, what="the lent read running")
        blocking = await asyncio.to_thread(
            lambda: solo_pool.submit_read(key="other", source=slow, uri="t://blocking", params={})
        )
        assert await first == "t://lent"
        assert (await asyncio.wrap_future(blocking))[0].text == "t://blocking"
        return threading.current_thread().name

    loop_thread = asyncio.run(main())
    assert threads["t://lent"] == loop_thread
    assert threads["t://blocking"] != loop_thread  # its caller has no loop that could close: a pool thread ran it


@pytest.mark.allow_error_logs  # the queued path logs the failed send, as it always has
def test_parameters_that_do_not_pickle_get_the_queued_paths_answer(solo_pool: SnippetPool) -> None:
    _settle(solo_pool)

    async def main() -> ReaderFailedError:
        with pytest.raises(ReaderFailedError) as caught:
            await solo_pool.read(key="t", source=OK, uri="t://x", params={"bad": lambda: None})
        return caught.value

    error = asyncio.run(main())
    assert error.data is not None and error.data["reason"] == "internal"
    assert asyncio.run(_read(solo_pool, OK)) == "fine"


def test_a_spare_worker_takes_a_read_queued_behind_a_slow_lent_one(solo_pool: SnippetPool, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    threads: dict[str, str] = {}
    solo_pool.add_output_listener(lambda key, text: threads.setdefault(text.strip(), threading.current_thread().name))
    slow = (
        "import os, time\n"
        "def read(uri, params):\n"
        "    print(uri)\n"
        f"    while not os.path.exists({str(gate)!r}):\n"
        "        time.sleep(0.01)\n"
        "    return uri\n"
    )
    fast = "def read(uri, params):\n    print(uri)\n    return uri\n"
    _settle(solo_pool)

    async def main() -> str:
        held = asyncio.ensure_future(_read(solo_pool, slow, key="slow", uri="t://held"))
        try:
            await eventually_async(lambda: "t://held" in threads, 10, what="the slow read running")
            # The loop's only worker is busy until the gate opens: the queued read is the spare's.
            assert await asyncio.wait_for(_read(solo_pool, fast, key="fast", uri="t://fast"), 30) == "t://fast"
            assert not held.done()
        finally:
            gate.touch()
        assert await held == "t://held"
        return threading.current_thread().name

    loop_thread = asyncio.run(main())
    assert threads["t://held"] == loop_thread
    assert threads["t://fast"] != loop_thread


def test_loop_future_answers_on_the_loop_without_a_turn_and_passes_cancellation_back() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        here: concurrent.futures.Future[str] = concurrent.futures.Future()
        awaited = loop_future(here, loop)
        here.set_result("on the loop")  # as a lent worker's answer settles a queued call
        assert awaited.done() and awaited.result() == "on the loop"

        there: concurrent.futures.Future[str] = concurrent.futures.Future()
        from_thread = loop_future(there, loop)
        threading.Thread(target=there.set_exception, args=(ReaderFailedError("boom"),)).start()
        with pytest.raises(ReaderFailedError, match="boom"):
            await from_thread

        dropped: concurrent.futures.Future[str] = concurrent.futures.Future()
        given_up = loop_future(dropped, loop)
        given_up.cancel()
        await asyncio.sleep(0)  # the done callbacks of a cancelled asyncio future run on the next turn
        assert dropped.cancelled()

    asyncio.run(main())
