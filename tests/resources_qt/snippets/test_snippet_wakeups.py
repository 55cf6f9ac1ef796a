"""Queued calls reach a thread that can run them when it matters, not at the next periodic liveness check.

Slot threads whose worker is lent, and idle spares, sleep apart from the others (so a burst of queued
reads does not wake them all); each test stretches the periodic checks (liveness, a spare's retirement)
to a minute, so a lost wake-up shows as a read never answered within the test's wait instead of one
answered a second late.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import pytest
from helpers.pools import MEMORY_MB
from helpers.waiting import eventually

from resources_qt.content import ResourceContent
from resources_qt.snippets import SnippetPool, dispatch

GATED = (
    "import os, time\n"
    "def read(uri, params):\n"
    "    while not os.path.exists(params['gate']):\n"
    "        time.sleep(0.005)\n"
    "    if params.get('exit'):\n"
    "        os._exit(3)\n"
    "    return 'gated'\n"
)
FAST = "def read(uri, params):\n    return 'fast'\n"
ANSWER_WITHIN = 20.0
"""Far below the stretched liveness check, far above any answer that was not forgotten."""


@pytest.fixture(autouse=True)
def no_periodic_rescue(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(dispatch, "_LIVENESS_SECONDS", 60.0)
    monkeypatch.setattr(dispatch, "_SURGE_IDLE_SECONDS", 60.0)  # an idle spare's own wake-up, to retire
    yield


def _gated(pool: SnippetPool, key: str, gate: Path, *, exits: bool = False) -> Future[list[ResourceContent]]:
    params: dict[str, object] = {"gate": str(gate)}
    if exits:
        params["exit"] = True
    return pool.submit_read(key=key, source=GATED, uri=f"t://{key}", params=params)


@pytest.mark.parametrize("how", ["retires", "is replaced"])
def test_a_read_made_runnable_by_a_slot_that_steps_aside_is_taken_by_the_spare(tmp_path: Path, how: str) -> None:
    with SnippetPool(workers=3, timeout=30, memory_limit_mb=MEMORY_MB, resource_concurrency=1) as pool:
        assert pool.wait_ready(60)
        core = pool._core
        gates = {key: tmp_path / key for key in "abc"}
        held = [_gated(pool, key, gates[key], exits=how == "is replaced") for key in "ab"]
        eventually(lambda: core.running.get("a") == 1 and core.running.get("b") == 1 and not core.jobs, 30,
                   what="two gated reads running")
        if how == "retires":
            pool.configure(workers=2)  # one of the two busy slots retires when its call ends
            with core.cond:
                key = next(s for s in core.slots if s.retiring).running_key
        else:
            key = "a"  # its worker exits at the end of the call and is replaced
        assert key is not None
        third = _gated(pool, "c", gates["c"])
        eventually(lambda: core.running.get("c") == 1 and not core.jobs, 30, what="the third gated read running")
        # Every permanent worker is busy: this read gets a spare, which then waits idle.
        assert pool.submit_read(key="d", source=FAST, uri="t://d", params={}).result(30)[0].text == "fast"
        eventually(lambda: any(s.temporary and s.state == "idle" and s.parked for s in core.slots), 30,
                   what="an idle spare")
        queued = pool.submit_read(key=key, source=FAST, uri=f"t://{key}/next", params={})  # at its limit: queued
        gates[key].touch()  # its holder ends the call and steps aside: the spare must hear of the queued read
        assert queued.result(ANSWER_WITHIN)[0].text == "fast"
        for gate in gates.values():
            gate.touch()
        for future in [*held, third]:
            try:
                future.result(30)
            except Exception as exc:  # the replaced worker's own call fails, naming the exit
                assert how == "is replaced" and "exit" in str(exc)


def test_a_threads_read_does_not_wait_for_a_loop_that_holds_the_only_worker(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The spare's grace for a loop's own queue must not apply to a caller that loop will never run.
    monkeypatch.setattr(dispatch, "_SPARE_DELAY_SECONDS", 60.0)
    gate = tmp_path / "gate"
    with SnippetPool(workers=1, timeout=30, memory_limit_mb=MEMORY_MB) as pool:
        assert pool.wait_ready(60)
        core = pool._core
        eventually(lambda: all(s.parked for s in core.slots), 30, what="a lendable worker")

        async def main() -> None:
            held = asyncio.ensure_future(
                pool.read(key="held", source=GATED, uri="t://held", params={"gate": str(gate)})
            )
            try:
                await asyncio.sleep(0)
                assert any(s.lent_to is asyncio.get_running_loop() for s in core.slots)
                other = await asyncio.to_thread(
                    lambda: pool.submit_read(key="other", source=FAST, uri="t://other", params={})
                )
                assert (await asyncio.wrap_future(other))[0].text == "fast"
            finally:
                gate.touch()
            assert (await held)[0].text == "gated"

        asyncio.run(asyncio.wait_for(main(), ANSWER_WITHIN + 10))


def test_a_worker_lent_to_a_loop_that_closed_is_taken_back_for_the_next_read(tmp_path: Path) -> None:
    with SnippetPool(workers=1, timeout=30, memory_limit_mb=MEMORY_MB) as pool:
        assert pool.wait_ready(60)
        core = pool._core
        eventually(lambda: all(s.parked for s in core.slots), 30, what="a lendable worker")
        loop = asyncio.new_event_loop()
        task = loop.create_task(
            pool.read(key="held", source=GATED, uri="t://held", params={"gate": str(tmp_path / "never")})
        )
        while not any(s.lent_to is loop for s in core.slots):
            loop.run_until_complete(asyncio.sleep(0.01))
        # The pool's other slot (its spare, 2 x workers) is busy with a thread's slow read.
        slow = _gated(pool, "slow", tmp_path / "slow")
        eventually(lambda: core.running.get("slow") == 1 and not core.jobs, 30, what="the slow read running")
        # The awaiting task gives up (a lent call runs on to its end), then the loop closes mid-call: the
        # lent worker's thread must take it back when the next read queues.
        task.cancel()
        loop.run_until_complete(asyncio.gather(task, return_exceptions=True))
        loop.close()
        assert pool.submit_read(key="f", source=FAST, uri="t://f", params={}).result(ANSWER_WITHIN)[0].text == "fast"
        (tmp_path / "slow").touch()
        slow.result(30)
