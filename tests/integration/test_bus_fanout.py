"""`serve --bus`: a client that never reads its stream on one replica leaves that replica hearing the bus."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
from helpers.bus_fleet import Replica, Subscriber, numsub, until
from helpers.redis_server import RedisServer, redis_server
from helpers.stalled_client import StalledClient, long_uris

from resources_qt.bus.events import Updated
from resources_qt.bus.publish import publish_once
from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

CHANNEL = "resource-studio:fanout"
VICTIM = "victim://news"
ATTACKER_URIS = 300
MAX_ROUNDS = 40
PROMPT = 10.0
"""Seconds one round's notification may take to reach a subscriber that reads (two processes and Redis)."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    directory = tmp_path / "redis"
    directory.mkdir()
    with redis_server(directory) as server:
        yield server


def _project() -> Project:
    # max_subscriptions 300: the outboxes hold 1,024, so the attacker's overflows within a few rounds.
    settings = ServerSettings(name="Fanout", version="1", notifications=True, subscriptions=True, workers=1,
                              max_subscriptions=ATTACKER_URIS)
    reader = "def read(uri, params):\n    return 'news'\n"
    return Project(server=settings, resources=[ResourceSpec(name="news", uri=VICTIM, reader=reader)])


async def test_a_stalled_client_does_not_deafen_its_replica(tmp_path: Path, redis: RedisServer) -> None:
    replicas = [Replica(save_project(_project(), tmp_path / f"r{n}.toml"), "--bus", redis.url,
                        "--bus-channel", CHANNEL) for n in range(2)]  # fmt: skip
    try:
        for replica in replicas:
            await replica.started()
        deadline = asyncio.get_running_loop().time() + 20
        while await numsub(redis.url, CHANNEL) < 2:
            assert asyncio.get_running_loop().time() < deadline, "not every replica subscribed"
            await asyncio.sleep(0.05)
        uris = long_uris(ATTACKER_URIS)
        async with AsyncExitStack() as stack:
            readers = [
                await stack.enter_async_context(
                    Subscriber(f"{kind}{n}", replica.url, legacy=kind == "legacy", uris=[VICTIM]).running(
                        redis.url, CHANNEL
                    )
                )
                for n, replica in enumerate(replicas)
                for kind in ("legacy", "listen")
            ]
            attacker = await stack.enter_async_context(StalledClient(replicas[0].url, uris))
            rounds = 0
            # Each round is what `resource-studio notify` sends: updated for every URI, the victim's last.
            while "not reading" not in replicas[0].stderr():
                assert rounds < MAX_ROUNDS, "replica 0 never dropped the stalled session"
                rounds += 1
                await publish_once(redis.url, channel=CHANNEL, events=[*map(Updated, uris), Updated(VICTIM)])
                await until(lambda n=rounds: all(r.received.count(("updated", VICTIM)) >= n for r in readers),  # type: ignore[misc]
                            timeout=PROMPT, what=f"round {rounds} reaching every reader of both replicas")
            assert rounds > 1  # before the fix, replica 0 went deaf from the second round on
            assert attacker.session_id in replicas[0].stderr()
            # Replica 0 still hears the bus after the drop, and the cut stream ends once its client reads.
            await publish_once(redis.url, channel=CHANNEL, events=[Updated(VICTIM)])
            await until(lambda: all(r.received.count(("updated", VICTIM)) == rounds + 1 for r in readers),
                        timeout=PROMPT, what="a notification after the drop")
            await asyncio.wait_for(attacker.read_to_end(), PROMPT)
    finally:
        for replica in replicas:
            replica.stop()
