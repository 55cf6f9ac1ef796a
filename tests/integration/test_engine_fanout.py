"""One client that never reads its notification stream neither stalls anyone else's notifications nor stays."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
import pytest
from engine_support import connect, settle_legacy
from helpers.stalled_client import StalledClient, long_uris
from helpers.waiting import eventually_async
from mcp.shared.subscriptions import ResourceUpdated

from resources_qt import Resources
from resources_qt.notifications import Updated
from resources_qt.server import ResourceServer

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

VICTIM = "victim://news"
ATTACKER_URIS = 300
MAX_EDITS = 40
"""Edits made at most until the attacker's outbox overflows (about 5 here: ~4 MB fill the socket buffers)."""
PROMPT = 5.0
"""Seconds an edit's notification may take to reach a client that reads its stream."""


@pytest.fixture
def server() -> Iterator[ResourceServer]:
    # Outboxes hold max(1024, 2 x max_subscriptions): 600 here, so the attacker's overflows within EDITS.
    server = ResourceServer(Resources(), name="fanout", version="1", max_subscriptions=ATTACKER_URIS)
    server.enable_resource_notifications = True
    server.enable_resource_subscriptions = True
    server.start_http(port=0)
    yield server
    server.close()


async def _edit(server: ResourceServer, uris: list[str]) -> None:
    # What saving a template resource does: updated for every subscribed URI it serves, the victim's among them.
    for uri in uris:
        await server.notify(Updated(uri))
    await server.notify(Updated(VICTIM))


@asynccontextmanager
async def _victims(server: ResourceServer) -> AsyncIterator[tuple[list[str], list[str]]]:
    """A handshake-era SDK client and a 2026-07-28 listen stream, both subscribed to VICTIM, both reading."""
    legacy: list[str] = []
    listen: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            legacy.append(str(message.params.uri))

    async def consume(sub: Any) -> None:
        async for event in sub:
            if isinstance(event, ResourceUpdated):
                listen.append(event.uri)

    assert server.url is not None
    async with connect(server.url, "legacy", message_handler=on_message) as old, \
            connect(server.url, "2026-07-28") as new:  # fmt: skip
        await old.subscribe_resource(VICTIM)
        await settle_legacy(old, server)
        async with new.listen(resource_subscriptions=[VICTIM]) as sub:
            task = asyncio.create_task(consume(sub))
            try:
                yield legacy, listen
            finally:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)


async def test_a_client_that_never_reads_its_stream_stalls_no_one_else_and_is_dropped(
    server: ResourceServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="resources_qt.server")
    assert server.url is not None
    uris = long_uris(ATTACKER_URIS)
    async with _victims(server) as (legacy, listen):
        readers = server.streams.open  # the victims' two streams
        async with StalledClient(server.url, uris) as attacker:
            await _stall_and_drop(server, attacker, uris, legacy, listen, readers)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(attacker.session_id in w and "not reading" in w for w in warnings), warnings


async def _stall_and_drop(server: ResourceServer, attacker: StalledClient, uris: list[str], legacy: list[str],
                          listen: list[str], readers: int) -> None:
    assert attacker.stream_status == 200
    assert attacker.session_id in {s.id for s in server.sessions()}
    edits = 0
    while attacker.session_id in {s.id for s in server.sessions()}:
        assert edits < MAX_EDITS, "the stalled session was never dropped"
        edits += 1
        future = server.submit(_edit(server, uris))
        assert future is not None
        await eventually_async(lambda n=edits: legacy.count(VICTIM) >= n and listen.count(VICTIM) >= n,  # type: ignore[misc]
                               PROMPT, what=f"edit {edits}'s notification reaching both readers")
        # Fan-out never waits on the attacker's socket: the edit has been sent out to everyone.
        await eventually_async(future.done, PROMPT, what=f"edit {edits}'s fan-out ending")
    assert edits > 1  # the stall began at the second edit before the fix
    # Its outbox overflowed: the session is gone and its stream cut, while its client still holds the socket.
    assert server.streams.open == readers + 1  # its socket is open: the stream keeps its place until it ends
    # Reading at last, the client gets what was buffered, then the end of the stream.
    await asyncio.wait_for(attacker.read_to_end(), PROMPT)
    await eventually_async(lambda: server.streams.open == readers, PROMPT, what="the stream's place being freed")
    assert legacy.count(VICTIM) == edits and listen.count(VICTIM) == edits
