"""The thread readers' async lane: `async def` readers overlap without a thread each, and are cancelled at deadlines."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from helpers.remote_servers import wait_for

from resources_qt.errors import ReaderFailedError
from resources_qt.snippets import SnippetOutput
from resources_qt.snippets.async_entries import declares_async_entry
from resources_qt.snippets.threads import ThreadReaders

SEEN: list[str] = []
"""What the snippets below report back to the test, by the test module's import name."""

MEET = (
    "import asyncio\nSTATE = {}\n\n"
    "async def read(uri, params):\n"
    "    arrived = STATE.setdefault('arrived', asyncio.Event())\n"
    "    STATE['count'] = STATE.get('count', 0) + 1\n"
    "    if STATE['count'] == int(params['n']):\n"
    "        arrived.set()\n"
    "    await asyncio.wait_for(arrived.wait(), 3)\n"
    "    return 'met'\n"
)
"""Answers only once `n` reads are inside it at the same time."""


@pytest.fixture
def readers() -> Iterator[ThreadReaders]:
    SEEN.clear()
    pool = ThreadReaders(workers=2, timeout=10.0)  # two threads, and two reads of a resource at once in them
    pool.set_prelude(f"SEEN = __import__('{__name__}').SEEN\n")
    try:
        yield pool
    finally:
        pool.close()


def test_async_reads_overlap_far_beyond_the_reader_threads_and_their_share(readers: ThreadReaders) -> None:
    futures = [
        readers.submit_read(key="meet", source=MEET, uri=f"demo://{i}", params={"n": "12"}) for i in range(12)
    ]
    assert [f.result(10)[0].text for f in futures] == ["met"] * 12
    assert readers.threads() == 2


def test_a_resource_cap_holds_for_async_reads_too() -> None:
    pool = ThreadReaders(workers=2, timeout=10.0, resource_concurrency=3)
    try:
        futures = [pool.submit_read(key="meet", source=MEET, uri=f"demo://{i}", params={"n": "4"}) for i in range(4)]
        # Three run at once, the fourth waits for a place: the three time out waiting for it.
        for future in futures[:3]:
            with pytest.raises(ReaderFailedError, match="TimeoutError"):
                future.result(10)
        assert futures[3].result(10)[0].text == "met"  # the fourth of four to arrive
    finally:
        pool.close()


def test_an_async_read_past_its_deadline_is_answered_and_cancelled(readers: ThreadReaders) -> None:
    source = (
        "import asyncio\n\nasync def read(uri, params):\n"
        "    try:\n        await asyncio.sleep(30)\n    finally:\n        SEEN.append('cancelled')\n"
        "    return 'never'\n"
    )
    future = readers.submit_read(key="slow", source=source, uri="demo://slow", params={}, timeout=0.3)
    with pytest.raises(ReaderFailedError, match=r"timed out after 0\.3 s and was cancelled"):
        future.result(10)
    wait_for(lambda: SEEN == ["cancelled"], what="the timed-out read cancelled")
    assert readers.hung_threads() == (0, 0)  # no thread was held by it


def test_output_of_async_reads_running_at_once_stays_with_each(readers: ThreadReaders) -> None:
    seen: dict[str, str] = {}
    readers.add_read_output_listener(lambda out: seen.__setitem__(out.uri, out.text))
    source = MEET.replace("    await asyncio.wait_for", "    print('before', uri[-1])\n    await asyncio.wait_for")
    source = source.replace("    return 'met'", "    print('after', uri[-1])\n    return 'met'")
    one = readers.submit_read(key="talk", source=source, uri="demo://1", params={"n": "2"})
    two = readers.submit_read(key="talk", source=source, uri="demo://2", params={"n": "2"})
    assert one.result(10)[0].text == two.result(10)[0].text == "met"
    assert seen == {"demo://1": "before 1\nafter 1\n", "demo://2": "before 2\nafter 2\n"}


def test_a_failing_async_read_names_its_error_and_prints_its_traceback(readers: ThreadReaders) -> None:
    outputs: list[SnippetOutput] = []
    readers.add_read_output_listener(outputs.append)
    source = "import asyncio\n\nasync def read(uri, params):\n    await asyncio.sleep(0)\n    raise KeyError('gone')\n"
    with pytest.raises(ReaderFailedError, match="KeyError"):
        readers.submit_read(key="bad", source=source, uri="demo://bad", params={}).result(10)
    wait_for(lambda: len(outputs) == 1, what="the traceback reported as the read's output")
    assert "KeyError: 'gone'" in outputs[0].text


def test_closing_cancels_running_async_reads_and_answers_them() -> None:
    pool = ThreadReaders(workers=1, timeout=10.0)
    SEEN.clear()
    pool.set_prelude(f"SEEN = __import__('{__name__}').SEEN\n")
    source = (
        "import asyncio\n\nasync def read(uri, params):\n    SEEN.append('started')\n"
        "    await asyncio.sleep(30)\n    return 'never'\n"
    )
    future = pool.submit_read(key="held", source=source, uri="demo://held", params={})
    wait_for(lambda: SEEN == ["started"], what="the async read running")
    pool.close()
    with pytest.raises(ReaderFailedError, match="closed"):
        future.result(10)


def test_sync_and_async_entries_are_told_apart_from_the_source_alone() -> None:
    assert declares_async_entry("async def read(uri, params):\n    return 1\n", "read")
    assert not declares_async_entry("def read(uri, params):\n    return 1\n", "read")
    redefined = "async def read(uri, params):\n    pass\ndef read(uri, params):\n    pass\n"
    assert not declares_async_entry(redefined, "read")  # the last definition is the one that runs
    assert not declares_async_entry("async def complete(v, value, ctx):\n    pass\n", "read")
    assert declares_async_entry("async def complete(v, value, ctx):\n    pass\n", "complete")
    assert not declares_async_entry("async def read(:\n", "read")  # the call itself says it cannot compile


def test_an_async_reader_that_blocks_its_loop_is_still_answered_at_its_deadline(readers: ThreadReaders) -> None:
    blocking = "import time\n\nasync def read(uri, params):\n    time.sleep(4)\n    return 'late'\n"
    stuck = readers.submit_read(key="blocks", source=blocking, uri="demo://blocks", params={}, timeout=0.3)
    started = time.monotonic()
    with pytest.raises(ReaderFailedError, match="was cancelled"):
        stuck.result(10)
    assert time.monotonic() - started < 3  # at the deadline, not when the sleep ends
    # Sync readers run in the reader threads, not on the blocked lane.
    plain = "def read(uri, params):\n    return 'ok'\n"
    assert readers.submit_read(key="sync", source=plain, uri="demo://s", params={}).result(10)[0].text == "ok"
