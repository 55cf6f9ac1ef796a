"""Issue 21's stalled readers at scale: many clients that never read, many that do, every edit reaching the latter."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import AsyncExitStack

import httpx
import pytest
from helpers.stalled_client import StalledClient, long_uris
from helpers.waiting import eventually_async
from stress_client import Session
from stress_support import scaled

from resources_qt import Resources
from resources_qt.notifications import Updated
from resources_qt.server import ResourceServer

pytestmark = [pytest.mark.stress, pytest.mark.anyio]

VICTIM = "victim://news"
PRIME = "prime://readers"
ATTACKER_URIS = 300
MAX_EDITS = 40
PROMPT = 20.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def server() -> Iterator[ResourceServer]:
    server = ResourceServer(Resources(), name="fanout-stress", version="1", max_subscriptions=ATTACKER_URIS)
    server.enable_resource_subscriptions = True
    server.start_http(port=0)
    yield server
    server.close()


async def _edit(server: ResourceServer, uris: list[str]) -> None:
    for uri in uris:
        await server.notify(Updated(uri))
    await server.notify(Updated(VICTIM))


async def test_stalled_readers_are_dropped_and_every_reader_gets_every_edit(server: ResourceServer) -> None:
    attackers, readers = scaled(2, 20), scaled(10, 200)
    assert server.url is not None
    url = server.url
    uris = long_uris(ATTACKER_URIS)
    limits = httpx.Limits(max_connections=2 * readers + 8, max_keepalive_connections=2 * readers + 8)
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(httpx.AsyncClient(limits=limits, timeout=20.0))
        sessions = [Session(http, url) for _ in range(readers)]
        for session in sessions:
            await session.initialize("reader")
            await session.call("resources/subscribe", {"uri": VICTIM})
            await session.call("resources/subscribe", {"uri": PRIME})
            await session.stream()
            stack.push_async_callback(session.close)
        # A GET stream delivers from a moment after its headers: prime until every reader has heard one.
        while not all(s.updates[PRIME] for s in sessions):
            await server.notify(Updated(PRIME))
            await asyncio.sleep(0.05)
        stalled = [await stack.enter_async_context(StalledClient(url, uris)) for _ in range(attackers)]
        ids = {a.session_id for a in stalled}
        edits = 0
        while ids & {s.id for s in server.sessions()}:
            assert edits < MAX_EDITS, "a stalled session was never dropped"
            edits += 1
            future = server.submit(_edit(server, uris))
            assert future is not None
            await eventually_async(
                lambda n=edits: all(s.updates[VICTIM] >= n for s in sessions),  # type: ignore[misc]
                PROMPT, what=f"edit {edits} reaching all {readers} readers")
            await eventually_async(future.done, PROMPT, what=f"edit {edits}'s fan-out ending")
        assert edits > 1
        assert [s.updates[VICTIM] for s in sessions] == [edits] * readers
        for attacker in stalled:
            await asyncio.wait_for(attacker.read_to_end(), PROMPT)
        await eventually_async(lambda: server.streams.open == readers, PROMPT, what="the cut streams' places freed")
