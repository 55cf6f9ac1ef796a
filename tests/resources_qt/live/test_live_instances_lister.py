"""InstanceLister on a real pool: answers kept for their TTL, renewed by fresh calls and edits, runs shared."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.pools import MEMORY_MB

from resources_qt.live.instances import MAX_INSTANCES, MAX_INSTANCES_BYTES, InstanceLister, InstancesError
from resources_qt.resource import Resource
from resources_qt.snippets import SnippetPool

COUNTED = """
import time
def instances():
    with open("runs.log", "a") as log:
        log.write("{tag}\\n")
    time.sleep({sleep})
    return {answer}
"""


def _source(tag: str, *, sleep: float = 0.0, answer: str = '[{"id": "1"}, {"id": "2"}]') -> str:
    return COUNTED.format(tag=tag, sleep=sleep, answer=answer)


def _template() -> Resource:
    return Resource(name="t", uri_template="t://{id}", mime_type="text/plain", reader=lambda uri, params: "")


def _runs(folder: Path) -> list[str]:
    log = folder / "runs.log"
    return log.read_text().splitlines() if log.exists() else []


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[SnippetPool]:
    pool = SnippetPool(workers=2, timeout=1.0, memory_limit_mb=MEMORY_MB, project_dir=tmp_path)
    assert pool.wait_ready(60)
    yield pool
    pool.close()


def test_an_answer_is_kept_for_its_ttl_and_renewed_by_fresh_calls_and_edits(pool: SnippetPool, tmp_path: Path) -> None:
    now = [0.0]
    lister = InstanceLister(pool, ttl=10.0, clock=lambda: now[0])
    template = _template()

    async def main() -> None:
        first = await lister.list(template, _source("a"), fresh=False)
        assert [r.uri for r in first] == ["t://1", "t://2"]
        assert await lister.list(template, _source("a"), fresh=False) is first
        now[0] = 9.9
        assert await lister.list(template, _source("a"), fresh=False) is first
        assert _runs(tmp_path) == ["a"]
        now[0] = 10.0  # the TTL is over: it runs again; the same answer comes back as the same tuple
        assert await lister.list(template, _source("a"), fresh=False) is first
        assert await lister.list(template, _source("a")) is first  # outside a request: fresh
        assert await lister.list(template, _source("a"), fresh=True) is first
        assert _runs(tmp_path) == ["a"] * 4
        await lister.list(template, _source("b"), fresh=False)  # the snippet was edited
        pool.set_prelude("PRELUDE = 1\n")
        await lister.list(template, _source("b"), fresh=False)
        replaced = _template()  # an edit or reload replaced the template in the collection
        again = await lister.list(replaced, _source("b"), fresh=False)
        assert again[0].reader is replaced.reader
        assert await lister.list(replaced, _source("b"), fresh=False) is again

    asyncio.run(main())
    assert _runs(tmp_path) == ["a"] * 4 + ["b"] * 3 and lister.runs == 7


def test_concurrent_calls_share_one_run_and_a_caller_giving_up_leaves_it_to_the_others(
    pool: SnippetPool, tmp_path: Path
) -> None:
    lister = InstanceLister(pool)
    template = _template()

    async def main() -> None:
        source = _source("slow", sleep=0.5)
        waiting = [asyncio.create_task(lister.list(template, source, fresh=False)) for _ in range(10)]
        await asyncio.sleep(0.1)
        waiting[0].cancel()
        found = await asyncio.gather(*waiting[1:])
        assert all(f is found[0] and len(f) == 2 for f in found)
        with pytest.raises(asyncio.CancelledError):
            await waiting[0]

    asyncio.run(main())
    assert _runs(tmp_path) == ["slow"] and lister.runs == 1


def test_a_raising_snippet_is_kept_a_timed_out_one_is_tried_again(pool: SnippetPool, tmp_path: Path) -> None:
    lister = InstanceLister(pool)
    template = _template()

    async def main() -> list[str]:
        messages = []
        for source in [_source("raise", answer="1 / 0")] * 2 + [_source("late", sleep=3)] * 2:
            with pytest.raises(InstancesError) as caught:
                await lister.list(template, source, fresh=False)
            messages.append(str(caught.value))
        return messages

    messages = asyncio.run(main())
    assert "instances() failed: ZeroDivisionError" in messages[0] and messages[1] == messages[0]
    assert messages[2].startswith("instances() timed out after 1 s")
    assert _runs(tmp_path) == ["raise", "late", "late"]


def test_answers_past_the_caps_are_refused_in_the_worker_naming_the_cap(pool: SnippetPool, tmp_path: Path) -> None:
    lister = InstanceLister(pool)
    many = _source("many", answer=f"[str(i) for i in range({MAX_INSTANCES + 1})]")
    large = _source("large", answer=f"[{{'id': str(i), 'description': 'x' * 20_000}} for i in range({500})]")

    async def main() -> list[str]:
        messages = []
        for source in (many, large):
            with pytest.raises(InstancesError) as caught:
                await lister.list(_template(), source, fresh=False)
            messages.append(str(caught.value))
        return messages

    items, size = asyncio.run(main())
    assert items == (f"instances() returned {MAX_INSTANCES + 1:,} items; at most {MAX_INSTANCES:,} are listed "
                     "(the instances item cap)")
    assert size.startswith("instances() returned 10,0") and size.endswith(
        f"bytes of JSON; at most {MAX_INSTANCES_BYTES:,} (8 MiB) are listed (the instances size cap)")


def test_a_caller_that_joined_a_timed_out_run_gets_one_run_of_its_own(pool: SnippetPool, tmp_path: Path) -> None:
    lister = InstanceLister(pool)
    template = _template()
    first_is_late = """
import os, time
def instances():
    late = not os.path.exists("runs.log")
    with open("runs.log", "a") as log:
        log.write("run\\n")
    if late:
        time.sleep(3)
    return ["t://1"]
"""

    async def main() -> tuple[BaseException | tuple[Resource, ...], ...]:
        starter = asyncio.create_task(lister.list(template, first_is_late, fresh=False))
        await asyncio.sleep(0)
        joiner = asyncio.create_task(lister.list(template, first_is_late, fresh=False))
        return tuple(await asyncio.gather(starter, joiner, return_exceptions=True))

    started, joined = asyncio.run(main())
    assert isinstance(started, InstancesError) and "timed out after 1 s" in str(started)
    assert not isinstance(joined, BaseException) and [r.uri for r in joined] == ["t://1"]
    assert _runs(tmp_path) == ["run", "run"] and lister.runs == 2
