"""Polling under a crowd of subscribers: a lone subscriber's updates keep their pace, reads stay within budget."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from helpers.live_project import Served, serve_live, write_notes_project
from helpers.waiting import eventually_async
from mcp import Client
from stress_support import scaled

from resources_qt.live.poll import POLL_READS_PER_SECOND

pytestmark = [
    pytest.mark.stress,
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

POLLED = """
[[resources]]
name = "counter"
uri_template = "poll://{{id}}"
mime_type = "text/plain"
watch = {{ interval = {interval} }}
reader = '''
import time

def read(uri, params):
    # The victim's value moves at every read; everybody else's never does.
    return str(time.monotonic_ns()) if params["id"] == "victim" else params["id"]
'''
"""

VICTIM = "poll://victim"


class Updates:
    """Times at which one client was told `updated` for the victim's URI."""

    def __init__(self) -> None:
        self.at: list[float] = []

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification) and message.params.uri == VICTIM:
            self.at.append(time.monotonic())


async def _listen(stack: contextlib.AsyncExitStack, served: Served, uris: list[str], handler: Any = None) -> None:
    client = await stack.enter_async_context(
        Client(served.url, mode="2026-07-28", message_handler=handler, read_timeout_seconds=60)
    )
    await stack.enter_async_context(client.listen(resource_subscriptions=uris))


async def _sessions(served: Served, count: int) -> None:
    await eventually_async(lambda: len(served.server.sessions()) >= count, 60, what=f"{count} listen streams")


def _serve(tmp_path: Path, interval: float) -> Any:
    return serve_live(write_notes_project(tmp_path, extra=POLLED.format(interval=interval)))


async def test_a_lone_subscriber_keeps_its_pace_among_ten_crowded_sessions(tmp_path: Path) -> None:
    interval = 0.5
    per_session = scaled(100, 1000)  # 10 sessions of distinct URIs: 1,000 (10,000 with STRESS_FULL=1)
    wanted = scaled(10, 40)
    with _serve(tmp_path, interval) as served:
        victim = Updates()
        async with contextlib.AsyncExitStack() as stack:
            for n in range(10):
                await _listen(stack, served, [f"poll://s{n}-{i}" for i in range(per_session)])
            await _listen(stack, served, [VICTIM], victim)
            await _sessions(served, 11)
            # The first update after everybody is in starts the clock.
            start = len(victim.at)
            await eventually_async(lambda: len(victim.at) > start, 60, what="a first update")
            first = len(victim.at) - 1
            await eventually_async(lambda: len(victim.at) >= first + 1 + wanted, 120, what=f"{wanted} more updates")
            took = victim.at[first + wanted] - victim.at[first]
            rounds = served.live.poll_round_reads("counter")
    # One update a round, rounds every 0.5 s: 10 take 5 s. Before, each round read all 1,000 crowded URIs
    # and the next began an interval after it ended (one update every ~1.5 s here, every ~10 s at full size).
    assert took <= wanted * interval * 1.6, f"{wanted} updates took {took:.1f} s"
    budget = int(interval * POLL_READS_PER_SECOND)
    assert rounds and max(rounds) <= budget


async def test_a_uri_ten_sessions_share_is_read_once_a_round(tmp_path: Path) -> None:
    interval = scaled(1, 4)
    shared = [f"poll://shared-{i}" for i in range(scaled(100, 1000))]  # within the budget (250 a second)
    with _serve(tmp_path, interval) as served:
        async with contextlib.AsyncExitStack() as stack:
            for _ in range(10):
                await _listen(stack, served, shared)
            await _sessions(served, 10)
            seen = len(served.live.poll_round_reads("counter"))
            await eventually_async(
                lambda: len(served.live.poll_round_reads("counter")) >= seen + 3, 120, what="three more rounds"
            )
            rounds = served.live.poll_round_reads("counter")[seen:]
    # Distinct URIs a round, not sessions x URIs.
    assert rounds[:3] == [len(shared)] * 3
