"""SnippetPool with real workers: the contract, prelude, hot reload, state, concurrency, loops, lifecycle."""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import threading
from pathlib import Path

import pytest
from snippet_support import complete, healthy, read, read_text

from resources_qt.content import ResourceContent
from resources_qt.errors import ReaderFailedError, ValidationError
from resources_qt.snippets import SnippetPool
from resources_qt.snippets.call_runner import MAX_COMPLETIONS


def test_returns_convert_like_the_core(pool: SnippetPool) -> None:
    assert read(pool, "def read(uri, params):\n    return 'hi'\n", mime_type="text/markdown") == [
        ResourceContent("t://x", "text/markdown", text="hi")
    ]
    (data,) = read(pool, "def read(uri, params):\n    return {'uri': uri, 'params': params}\n", params={"id": "7"})
    assert data.mime_type == "application/json"
    assert data.text == '{\n  "uri": "t://x",\n  "params": {\n    "id": "7"\n  }\n}'
    (raw,) = read(pool, "def read(uri, params):\n    return b'\\x00\\x01'\n")
    assert (raw.mime_type, raw.data()) == ("application/octet-stream", b"\x00\x01")
    both = read(pool, "def read(uri, params):\n    return [text('a'), text('b', 'text/csv', uri=uri + '/b')]\n")
    assert [(c.uri, c.mime_type, c.text) for c in both] == [("t://x", "text/plain", "a"), ("t://x/b", "text/csv", "b")]


def test_ticket_attachment_is_text_or_image_per_instance(pool: SnippetPool) -> None:
    source = (
        "PNG = b'\\x89PNG\\r\\n\\x1a\\n'\n"
        "def read(uri, params):\n"
        "    if params['id'] == '1':\n"
        "        return text('stack trace ...', 'text/plain')\n"
        "    return blob(PNG, 'image/png')\n"
    )
    (log,) = read(pool, source, uri="tickets://1/attachment", params={"id": "1"})
    (image,) = read(pool, source, uri="tickets://2/attachment", params={"id": "2"})
    assert (log.uri, log.mime_type, log.text) == ("tickets://1/attachment", "text/plain", "stack trace ...")
    assert (image.uri, image.mime_type) == ("tickets://2/attachment", "image/png")
    assert base64.b64decode(image.blob or "") == b"\x89PNG\r\n\x1a\n"


def test_async_read(pool: SnippetPool) -> None:
    source = (
        "import asyncio\n"
        "async def read(uri, params):\n"
        "    await asyncio.sleep(0.01)\n"
        "    return text(f'async {uri}', 'text/x-demo')\n"
    )
    contents = asyncio.run(pool.read(key="a", source=source, uri="t://async", params={}, mime_type=""))
    assert [(c.mime_type, c.text) for c in contents] == [("text/x-demo", "async t://async")]


def test_prelude_is_visible_and_can_change(pool: SnippetPool) -> None:
    reader = "def read(uri, params):\n    return greet(params['who'])\n"
    pool.set_prelude("import string\ndef greet(name):\n    return string.capwords('hello ' + name)\n")
    assert read_text(pool, reader, params={"who": "ada"}) == "Hello Ada"
    pool.set_prelude("def greet(name):\n    return 'bye ' + name\n")
    assert read_text(pool, reader, params={"who": "ada"}) == "bye ada"


def test_hot_reload_uses_the_new_version_and_never_the_old_one(pool: SnippetPool) -> None:
    assert read_text(pool, "def read(uri, params):\n    return 'v1'\n", key="r") == "v1"
    assert read_text(pool, "def read(uri, params):\n    return 'v2'\n", key="r") == "v2"
    for _ in range(3):  # on every worker, not only the one that saw the edit
        with pytest.raises(ReaderFailedError, match="does not compile"):
            read(pool, "def read(uri, params):\n    return 'v3\n", key="r")
    assert read_text(pool, "def read(uri, params):\n    return 'v3'\n", key="r") == "v3"


def test_module_state_lives_as_long_as_the_worker(solo_pool: SnippetPool) -> None:
    counter = "calls = 0\ndef read(uri, params):\n    global calls\n    calls += 1\n    return str(calls)\n"
    assert [read_text(solo_pool, counter, key="n") for _ in range(3)] == ["1", "2", "3"]
    # An edit is a new module, with fresh state.
    assert read_text(solo_pool, counter + "# edited\n", key="n") == "1"
    # The same source under another key is another module.
    assert read_text(solo_pool, counter, key="other") == "1"


def test_completions(pool: SnippetPool) -> None:
    source = (
        "SECTIONS = ['billing', 'getting-started', 'troubleshooting']\n"
        "def complete(name, value, context):\n"
        "    return [s for s in SECTIONS if s.startswith(value) and context.get('lang', 'en') == 'en']\n"
    )
    assert complete(pool, source, value="") == ["billing", "getting-started", "troubleshooting"]
    assert complete(pool, source, value="t") == ["troubleshooting"]
    assert complete(pool, source, value="", context={"lang": "de"}) == []
    # The worker sends at most MAX_COMPLETIONS values (the server shows the first 100 and the total).
    many = "def complete(name, value, context):\n    return (f'{name}{i}' for i in range(20_000))\n"
    assert complete(pool, many, variable="id") == [f"id{i}" for i in range(MAX_COMPLETIONS)]
    assert complete(pool, "def complete(name, value, context):\n    return None\n") == []
    with pytest.raises(ReaderFailedError, match="Completion snippet of 'c' failed: TypeError: complete"):
        complete(pool, "def complete(name, value, context):\n    return 'abc'\n")
    async_source = "async def complete(name, value, context):\n    return [value + '!']\n"
    assert asyncio.run(pool.complete(key="c", source=async_source, variable="v", value="a", context={})) == ["a!"]


def _gated(gate: Path, result: str) -> str:
    """A reader that holds its worker until the test creates `gate`."""
    return (
        "import os, time\n"
        "def read(uri, params):\n"
        f"    while not os.path.exists({str(gate)!r}):\n"
        "        time.sleep(0.01)\n"
        f"    return {result}\n"
    )


def test_slow_reader_does_not_hold_up_fast_ones(pool: SnippetPool, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    slow_source = _gated(gate, "'slow'")
    slow = [pool.submit_read(key="slow", source=slow_source, uri="t://slow", params={}) for _ in range(2)]
    # Both workers are busy now; the pool grows instead of queueing behind them.
    try:
        assert healthy(pool)
        assert not any(future.done() for future in slow)
    finally:
        gate.touch()
    assert [future.result(30)[0].text for future in slow] == ["slow", "slow"]


def test_usable_from_two_event_loops_in_two_threads(pool: SnippetPool) -> None:
    results: dict[str, list[str]] = {}
    source = "import asyncio\nasync def read(uri, params):\n    await asyncio.sleep(0.01)\n    return uri\n"

    async def many(name: str) -> list[str]:
        reads = [pool.read(key="k", source=source, uri=f"t://{name}/{i}", params={}) for i in range(10)]
        return [contents[0].text or "" for contents in await asyncio.gather(*reads)]

    def run(name: str) -> None:
        loop = asyncio.new_event_loop()
        try:
            results[name] = loop.run_until_complete(many(name))
        finally:
            loop.close()

    threads = [threading.Thread(target=run, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert results == {name: [f"t://{name}/{i}" for i in range(10)] for name in ("a", "b")}


def test_cancelled_read_leaves_the_pool_healthy(solo_pool: SnippetPool) -> None:
    source = "import time\ndef read(uri, params):\n    time.sleep(0.5)\n    return 'late'\n"

    async def cancel_one() -> None:
        task = asyncio.ensure_future(solo_pool.read(key="s", source=source, uri="t://s", params={}))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_one())
    assert healthy(solo_pool)


def test_configure_resizes_and_replaces_workers(pool: SnippetPool) -> None:
    pool.configure(workers=3)
    assert pool.wait_ready(60)
    assert len(pool.worker_pids()) == 3
    before = set(pool.worker_pids())
    pool.configure(memory_limit_mb=300, timeout=2.5)
    assert pool.timeout == 2.5 and pool.memory_limit_mb == 300
    assert healthy(pool)
    assert pool.wait_ready(60)
    for _ in range(50):
        if not before & set(pool.worker_pids()):
            break
        threading.Event().wait(0.1)
    assert not before & set(pool.worker_pids())
    with pytest.raises(ValidationError):
        pool.configure(workers=0)


def test_close_stops_every_worker_and_fails_later_calls() -> None:
    pool = SnippetPool(workers=2, timeout=5)
    assert pool.wait_ready(60)
    pids = pool.worker_pids()
    slow = pool.submit_read(
        key="slow", source="import time\ndef read(uri, params):\n    time.sleep(30)\n", uri="t://s", params={}
    )
    threading.Event().wait(0.2)
    pool.close()
    pool.close()
    with pytest.raises(ReaderFailedError, match="closed"):
        slow.result(10)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    with pytest.raises(ReaderFailedError, match="closed"):
        read(pool, "def read(uri, params):\n    return 'x'\n")


def test_bad_arguments_are_rejected_where_they_enter(pool: SnippetPool) -> None:
    with pytest.raises(ValidationError):
        pool.submit_read(key="", source="", uri="t://x", params={})
    with pytest.raises(ValidationError):
        pool.submit_read(key="k", source="", uri="", params={})
    with pytest.raises(ValidationError):
        SnippetPool(timeout=0)
    with pytest.raises(ValidationError):
        SnippetPool(memory_limit_mb=1)


def test_single_worker_grows_for_a_fast_read_and_queues_beyond(solo_pool: SnippetPool, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    slow_source = _gated(gate, "uri")
    slow = solo_pool.submit_read(key="slow", source=slow_source, uri="t://slow", params={})
    try:
        assert healthy(solo_pool)
        assert not slow.done()
        # More slow reads than the pool may grow to: they queue, and all complete.
        more = [solo_pool.submit_read(key="slow", source=slow_source, uri=f"t://{i}", params={}) for i in range(3)]
    finally:
        gate.touch()
    assert [f.result(30)[0].text for f in more] == ["t://0", "t://1", "t://2"]
    assert slow.result(30)[0].text == "t://slow"


def test_worker_killed_while_idle_is_replaced(pool: SnippetPool) -> None:
    before = set(pool.worker_pids())
    for pid in before:
        os.kill(pid, signal.SIGKILL)
    for _ in range(100):
        after = set(pool.worker_pids())
        if len(after) == 2 and not after & before:
            break
        threading.Event().wait(0.1)
    assert len(after) == 2 and not after & before
    assert healthy(pool)


def test_a_worker_keeps_its_own_modules_out_of_the_collectors_sight(solo_pool: SnippetPool) -> None:
    source = "import gc\ndef read(uri, params):\n    return str(gc.get_freeze_count())\n"
    frozen = int(solo_pool.submit_read(key="gc", source=source, uri="t://gc", params={}).result(30)[0].text or "0")
    # The worker's imports (the SDK-free core, the capture, the guard) were frozen before its first call.
    assert frozen > 1000
