"""Issue 10, points 1-5: every call answered once, plain-data replies, fair scheduling, process groups, patches."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from functools import partial
from pathlib import Path

import pytest
from snippet_support import OK, WAIT, healthy, read, read_text

from resources_qt.content import ResourceContent
from resources_qt.errors import ReaderFailedError, ValidationError
from resources_qt.snippets import SnippetOutput, SnippetPool, wire
from resources_qt.snippets.protocol import ReadDone

# -- 1. every read answered exactly once -------------------------------------------------

STR_SUBCLASS = """\
class Sneaky(str):
    pass

def read(uri, params):
    return Sneaky("sneaky text")
"""


def test_a_str_subclass_result_is_answered_as_plain_text(pool: SnippetPool) -> None:
    # Before: the reply failed to unpickle in the server, this read never
    # answered and the next innocent read failed with "internal error".
    contents = read(pool, STR_SUBCLASS, key="sneaky")
    assert contents[0].text == "sneaky text"
    assert type(contents[0].text) is str
    assert healthy(pool)


def test_content_whose_meta_is_not_plain_data_fails_only_that_read(pool: SnippetPool) -> None:
    source = "def read(uri, params):\n    return ResourceContent(uri, 'text/plain', text='x', meta={'k': object()})\n"
    with pytest.raises(ReaderFailedError, match="cannot be sent back"):
        read(pool, source, key="meta")
    assert healthy(pool)


@pytest.mark.parametrize("timeout", [1e300, float("inf"), float("nan"), 0.0, -1.0, 3601.0])
def test_timeouts_that_would_overflow_a_timer_are_refused_where_they_enter(timeout: float) -> None:
    with pytest.raises(ValidationError, match="timeout"):
        SnippetPool(timeout=timeout)


def test_a_per_call_timeout_is_validated_too(pool: SnippetPool) -> None:
    with pytest.raises(ValidationError, match="timeout"):
        pool.submit_read(key="k", source=OK, uri="t://x", params={}, timeout=2_200_000.0)


def test_a_reply_that_does_not_decode_is_refused_by_the_pool_side_decoder() -> None:
    good = wire.encode(ReadDone([("t://x", "text/plain", "hi", None, None)]))
    assert wire.decode(good) == ReadDone([("t://x", "text/plain", "hi", None, None)])
    with pytest.raises(wire.WireError):
        wire.decode(good[:-1])
    with pytest.raises(wire.WireError):
        wire.decode(b"\x00\x00\x00\x02{}")
    with pytest.raises(wire.WireError):
        wire.decode(b"\x80\x04\x95")  # a pickle is not a message


# -- 2. the server never unpickles what a snippet produced --------------------------------


def _reduce_source(marker: Path) -> str:
    return f"""\
import os

class Bomb(str):
    def __reduce__(self):
        return (os.system, ("touch {marker}",))

class BombDict(dict):
    def __reduce__(self):
        return (os.system, ("touch {marker}",))

def read(uri, params):
    return ResourceContent(Bomb(uri), Bomb("text/plain"), text=Bomb("boom"), meta=BombDict(a=Bomb("b")))
"""


def test_a_result_with_reduce_runs_no_code_in_the_server(pool: SnippetPool, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    contents = read(pool, _reduce_source(marker), key="bomb")
    assert contents == [ResourceContent("t://x", "text/plain", text="boom", meta={"a": "b"})]
    assert not marker.exists()


# -- 3. fair scheduling ----------------------------------------------------------------


SLOW = "import time\ndef read(uri, params):\n    time.sleep(3)\n    return 'slow'\n"


@pytest.fixture
def fair_pool() -> Iterator[SnippetPool]:
    pool = SnippetPool(workers=2, timeout=5.0, memory_limit_mb=256, max_queued_reads=64)
    assert pool.wait_ready(60)
    yield pool
    pool.close()


def _wait_for(condition: Callable[[], bool], within: float = WAIT) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)


def test_a_fast_read_is_not_queued_behind_32_slow_ones(fair_pool: SnippetPool) -> None:
    slow = [
        fair_pool.submit_read(key="slow", source=SLOW, uri=f"t://slow/{i}", params={}) for i in range(32)
    ]
    # One slow resource may take `resource_concurrency` workers; the rest wait for it.
    _wait_for(lambda: fair_pool.queued() == 32 - fair_pool.resource_concurrency)
    fast = fair_pool.submit_read(key="fast", source=OK, uri="t://fast", params={})
    # Answered while every slow read is still running or queued: it did not wait for them.
    assert fast.result(WAIT)[0].text == "fine"
    assert not any(f.done() for f in slow)
    for future in slow:
        try:
            assert future.result(WAIT)[0].text == "slow"
        except ReaderFailedError as exc:
            assert "timed out" in exc.message


def _note_answer(answered: dict[int, float], index: int, _future: object) -> None:
    answered[index] = time.monotonic()


def test_no_read_is_answered_later_than_its_timeout_plus_one_second(fair_pool: SnippetPool) -> None:
    submitted = time.monotonic()
    answered: dict[int, float] = {}
    futures: list[Future[list[ResourceContent]]] = []
    for i in range(32):
        future = fair_pool.submit_read(key="slow", source=SLOW, uri=f"t://slow/{i}", params={}, timeout=2.0)
        future.add_done_callback(partial(_note_answer, answered, i))
        futures.append(future)
    errors = []
    for future in futures:
        try:
            future.result(WAIT)
        except ReaderFailedError as exc:
            errors.append(exc)
    assert max(answered.values()) - submitted < 2.0 + 1.0
    assert any("waiting for a free worker" in e.message for e in errors)


def test_a_full_queue_answers_busy_at_once() -> None:
    with SnippetPool(workers=1, timeout=5.0, memory_limit_mb=256, max_queued_reads=2) as pool:
        assert pool.wait_ready(60)
        gate = "import time\ndef read(uri, params):\n    time.sleep(1)\n    return 'x'\n"
        # One resource runs one call at a time here (resource_concurrency = workers = 1).
        accepted = [pool.submit_read(key="k", source=gate, uri="t://x", params={}) for _ in range(3)]
        _wait_for(lambda: pool.queued() == 2)
        refused = pool.submit_read(key="k", source=gate, uri="t://x", params={})
        assert refused.done()
        with pytest.raises(ReaderFailedError, match="busy") as caught:
            refused.result(0)
        assert caught.value.code == -32000
        assert caught.value.data["reason"] == "busy"
        assert [f.result(WAIT)[0].text for f in accepted] == ["x", "x", "x"]


# -- 4. process groups -----------------------------------------------------------------


def _forker(pids_file: Path) -> str:
    return f"""\
import os, time

def read(uri, params):
    pids = []
    for _ in range(5):
        pid = os.fork()
        if pid == 0:
            time.sleep(120)
            os._exit(0)
        pids.append(pid)
    with open({str(pids_file)!r}, "w") as handle:
        handle.write(" ".join(map(str, pids)))
    time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def _children(pids_file: Path) -> list[int]:
    _wait_for(lambda: pids_file.exists() and pids_file.read_text().strip() != "")
    return [int(p) for p in pids_file.read_text().split()]


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are POSIX")
def test_children_a_snippet_forked_do_not_survive_its_worker_being_replaced(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    with SnippetPool(workers=1, timeout=1.5, memory_limit_mb=256) as pool:
        future = pool.submit_read(key="forker", source=_forker(pids_file), uri="t://f", params={})
        children = _children(pids_file)
        with pytest.raises(ReaderFailedError, match="timed out"):
            future.result(WAIT)
        _wait_for(lambda: not any(_alive(pid) for pid in children), within=10)
        assert healthy(pool)


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are POSIX")
def test_children_a_snippet_forked_do_not_survive_the_pool_closing(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    pool = SnippetPool(workers=1, timeout=60.0, memory_limit_mb=256)
    try:
        pool.submit_read(key="forker", source=_forker(pids_file), uri="t://f", params={})
        children = _children(pids_file)
    finally:
        pool.close()
    _wait_for(lambda: not any(_alive(pid) for pid in children), within=10)


def test_max_file_size_is_enforced_in_workers(tmp_path: Path) -> None:
    target = tmp_path / "big"
    source = f"""\
def read(uri, params):
    try:
        with open({str(target)!r}, "wb") as handle:
            handle.write(b"x" * (3 * 1024 * 1024))
    except OSError as exc:
        return "refused: " + type(exc).__name__
    return "written"
"""
    with SnippetPool(workers=1, timeout=5.0, memory_limit_mb=256, max_file_size_mb=1) as pool:
        assert read_text(pool, source, key="big").startswith("refused")
    assert target.stat().st_size <= 1024 * 1024


def test_a_worker_runs_in_a_process_group_of_its_own(pool: SnippetPool) -> None:
    source = "import os\ndef read(uri, params):\n    return f'{os.getpid()} {os.getppid()} {os.getpgid(0)}'\n"
    pid, parent, group = read_text(pool, source).split()
    # On Linux the worker's supervisor (its parent, the subreaper of what snippets start) leads the group.
    assert group == (parent if sys.platform.startswith("linux") else pid)
    assert int(group) != os.getpgid(0)


# -- 5. monkeypatches do not leak across resources --------------------------------------

PATCHER = """\
import json, base64
import resources_qt.content as content

def read(uri, params):
    json.dumps = lambda *a, **k: '"HIJACKED"'
    json.JSONEncoder.encode = lambda self, o: '"HIJACKED"'
    base64.b64encode = lambda data: b"SElKQUNLRUQ="
    content.to_contents = None
    return "patched"
"""

VICTIM = "def read(uri, params):\n    return {'answer': 42}\n"
VICTIM_JSON = "import json\ndef read(uri, params):\n    return json.dumps([1, 2])\n"
VICTIM_BLOB = "def read(uri, params):\n    return b'\\x00\\x01'\n"


def test_a_snippet_patching_json_does_not_change_another_resources_answer(solo_pool: SnippetPool) -> None:
    for _ in range(3):
        assert read_text(solo_pool, PATCHER, key="patcher") == "patched"
        assert read_text(solo_pool, VICTIM, key="victim") == '{\n  "answer": 42\n}'
        assert read_text(solo_pool, VICTIM_JSON, key="victim_json") == "[1, 2]"
        assert read(solo_pool, VICTIM_BLOB, key="victim_blob")[0].blob == "AAE="


def test_a_patch_made_in_a_thread_does_not_change_the_conversion(solo_pool: SnippetPool) -> None:
    # A thread that keeps patching outlives the call's restore; conversion still uses bound functions.
    source = """\
import json, threading, time

def keep_patching():
    while True:
        json.dumps = lambda *a, **k: '"HIJACKED"'
        time.sleep(0.001)

def read(uri, params):
    threading.Thread(target=keep_patching, daemon=True).start()
    return "started"
"""
    assert read_text(solo_pool, source, key="threads") == "started"
    assert read_text(solo_pool, VICTIM, key="victim") == '{\n  "answer": 42\n}'


# -- contract 3: output per read ----------------------------------------------------------


def test_each_read_reports_its_output_streams_in_order(pool: SnippetPool) -> None:
    outputs: list[SnippetOutput] = []
    texts: list[tuple[str, str]] = []
    unsubscribe = pool.add_read_output_listener(outputs.append)
    pool.add_output_listener(lambda key, text: texts.append((key, text)))
    source = (
        "import sys\ndef read(uri, params):\n    print('out one')\n    sys.stdout.flush()\n"
        "    print('err', file=sys.stderr)\n    return 'x'\n"
    )
    before = time.time()
    read(pool, source, key="printer", uri="t://printed")
    assert len(outputs) == 1
    output = outputs[0]
    assert (output.key, output.uri) == ("printer", "t://printed")
    assert before - 1 <= output.started <= time.time()
    assert output.chunks == (("stdout", "out one\n"), ("stderr", "err\n"))
    assert "".join(t for k, t in texts if k == "printer") == "out one\nerr\n"
    read(pool, OK, key="quiet")
    assert len(outputs) == 1  # a read that printed nothing reports nothing
    unsubscribe()
    read(pool, source, key="printer")
    assert len(outputs) == 1


def test_completion_output_has_an_empty_uri(pool: SnippetPool) -> None:
    outputs: list[SnippetOutput] = []
    pool.add_read_output_listener(outputs.append)
    source = "def complete(variable, value, context):\n    print('hello')\n    return ['a']\n"
    assert pool.submit_complete(key="c", source=source, variable="v", value="", context={}).result(WAIT) == ["a"]
    assert [(o.uri, o.chunks) for o in outputs] == [("", (("stdout", "hello\n"),))]



def test_the_spec_opt_out_of_value_checks_reaches_the_served_resource() -> None:
    from resources_qt.project import ResourceSpec
    from resources_qt.snippets import snippet_resource

    with SnippetPool(workers=1) as pool:
        checked = snippet_resource(ResourceSpec(name="a", uri_template="f://{+p}", reader=OK), pool)
        unchecked = snippet_resource(
            ResourceSpec(name="b", uri_template="f://{+p}", reader=OK, unchecked_values=True), pool
        )
    assert (checked.unchecked_values, unchecked.unchecked_values) == (False, True)


def test_stdout_and_stderr_chunks_keep_the_order_written(pool: SnippetPool) -> None:
    outputs: list[SnippetOutput] = []
    pool.add_read_output_listener(outputs.append)
    source = (
        "import sys\ndef read(uri, params):\n    print('out 1')\n    print('err 2', file=sys.stderr)\n"
        "    print('out 3')\n    sys.stderr.write('err 4\\n')\n    return 'x'\n"
    )
    read(pool, source, key="order")
    assert outputs[0].chunks == (
        ("stdout", "out 1\n"),
        ("stderr", "err 2\n"),
        ("stdout", "out 3\n"),
        ("stderr", "err 4\n"),
    )
