"""`serve --bus`: replicas as real processes share notifications through a real redis-server, exactly once."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
from helpers.bus_fleet import ROOT, Replica, Subscriber, numsub, until
from helpers.redis_server import RedisServer, redis_server

from resources_qt.bus.cli import notify_main
from resources_qt.bus.events import Updated
from resources_qt.bus.publish import publish_once
from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

CHANNEL = "resource-studio:fleet"
GREETING = "demo://greeting"
FENCES = [f"fence://{n}" for n in range(8)]
LC = ("list_changed", "")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    directory = tmp_path / "redis"
    directory.mkdir()
    with redis_server(directory) as server:
        yield server


def _project(greeting: str = "hello", extra: bool = False) -> Project:
    resources = [
        ResourceSpec(name="greeting", uri=GREETING, mime_type="text/plain",
                     reader=f"def read(uri, params):\n    return {greeting!r}\n"),
    ]
    if extra:
        resources.append(ResourceSpec(name="extra", uri="demo://extra",
                                      reader="def read(uri, params):\n    return 'x'\n"))
    return Project(server=ServerSettings(name="Fleet", version="1", notifications=True, subscriptions=True, workers=1),
                   resources=resources)


async def _fleet(tmp_path: Path, redis: RedisServer, count: int, *extra: str) -> list[Replica]:
    replicas = []
    for index in range(count):
        # Each replica watches its own copy, so a save raises a change on that replica alone.
        path = save_project(_project(), tmp_path / f"replica{index}.toml")
        replicas.append(Replica(path, "--bus", redis.url, "--watch", *extra))
    for replica in replicas:
        await replica.started()
    return replicas


async def _all_subscribed(redis: RedisServer, count: int) -> None:
    deadline = asyncio.get_running_loop().time() + 20
    while await numsub(redis.url, CHANNEL) < count:
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("not every replica subscribed to the channel")
        await asyncio.sleep(0.05)


async def _notify(redis: RedisServer, *args: str) -> int:
    # notify_main runs its own event loop, as the command does: in a thread, not on the test's loop.
    return await asyncio.to_thread(notify_main, ["--bus", redis.url, "--channel", CHANNEL, *args])


class Steps:
    """Runs one change at a time, each closed by a fence, and keeps what each subscriber should have."""

    def __init__(self, redis: RedisServer, subscribers: list[Subscriber]) -> None:
        self.redis = redis
        self.subscribers = subscribers
        self.expected: dict[str, list[tuple[str, str]]] = {s.name: [] for s in subscribers}
        self.fences = 0

    async def expect(self, entry: tuple[str, str], only: list[Subscriber] | None = None) -> None:
        targets = self.subscribers if only is None else only
        for subscriber in targets:
            self.expected[subscriber.name].append(entry)
        await until(lambda: all(s.received[: len(self.expected[s.name])] == self.expected[s.name]
                                for s in self.subscribers), what=f"{entry} everywhere")
        # A fence through Redis: whatever an echo or a second delivery would add arrives before it.
        fence = FENCES[self.fences]
        self.fences += 1
        await publish_once(self.redis.url, channel=CHANNEL, events=[Updated(fence)])
        for subscriber in self.subscribers:
            self.expected[subscriber.name].append(("updated", fence))
        await until(lambda: all(("updated", fence) in s.received for s in self.subscribers), what=fence)
        for subscriber in self.subscribers:
            assert subscriber.received == self.expected[subscriber.name], subscriber.name


@pytest.fixture
async def stack() -> AsyncIterator[AsyncExitStack]:
    async with AsyncExitStack() as exits:
        yield exits


async def _subscribe(stack: AsyncExitStack, redis: RedisServer, replicas: list[Replica]) -> list[Subscriber]:
    subscribers = []
    for index, replica in enumerate(replicas):
        for legacy in (True, False):
            subscriber = Subscriber(f"r{index}-{'legacy' if legacy else 'listen'}", replica.url, legacy=legacy,
                                    uris=[GREETING, *FENCES])
            subscribers.append(await stack.enter_async_context(subscriber.running(redis.url, CHANNEL)))
    return subscribers


async def test_every_subscriber_of_every_replica_gets_each_notification_once(
    tmp_path: Path, redis: RedisServer, stack: AsyncExitStack
) -> None:
    replicas = await _fleet(tmp_path, redis, 2)
    stack.callback(lambda: [r.stop() for r in replicas])
    await _all_subscribed(redis, 2)
    subscribers = await _subscribe(stack, redis, replicas)
    steps = Steps(redis, subscribers)
    # From outside (the notify command).
    assert await _notify(redis, "updated", GREETING) == 0
    await steps.expect(("updated", GREETING))
    assert await _notify(redis, "list-changed") == 0
    await steps.expect(LC)
    # From replica 0: its --watch reload of changed content.
    save_project(_project("bonjour"), replicas[0].project)
    await steps.expect(("updated", GREETING))
    # From replica 1: a resource added to its catalogue.
    save_project(_project(extra=True), replicas[1].project)
    await steps.expect(LC)
    # One session: only the replica that holds it delivers.
    legacy_on_1 = subscribers[2]
    assert legacy_on_1.legacy and legacy_on_1.session_id
    assert await _notify(redis, "updated", GREETING, "--session", legacy_on_1.session_id) == 0
    await steps.expect(("updated", GREETING), only=[legacy_on_1])
    assert subscribers[0].client is not None
    read = await subscribers[0].client.read_resource(GREETING, cache_mode="bypass")
    assert read.contents[0].text == "bonjour"


async def test_replicas_watching_one_file_announce_each_change_once(
    tmp_path: Path, redis: RedisServer, stack: AsyncExitStack
) -> None:
    shared = save_project(_project(), tmp_path / "shared.toml")
    replicas = [Replica(shared, "--bus", redis.url, "--watch") for _ in range(2)]
    stack.callback(lambda: [r.stop() for r in replicas])
    for replica in replicas:
        await replica.started()
    await _all_subscribed(redis, 2)
    subscribers = await _subscribe(stack, redis, replicas)
    steps = Steps(redis, subscribers)
    # Both replicas see the save; each subscriber hears of it once, from whichever replica was first.
    save_project(_project("bonjour"), shared)
    await steps.expect(("updated", GREETING))
    for subscriber in subscribers:
        assert subscriber.client is not None
        read = await subscriber.client.read_resource(GREETING, cache_mode="bypass")
        assert read.contents[0].text == "bonjour", subscriber.name
    save_project(_project("bonjour", extra=True), shared)
    await steps.expect(LC)


async def test_reads_survive_a_redis_outage_and_delivery_resumes(
    tmp_path: Path, redis: RedisServer, stack: AsyncExitStack
) -> None:
    replicas = await _fleet(tmp_path, redis, 2)
    stack.callback(lambda: [r.stop() for r in replicas])
    await _all_subscribed(redis, 2)
    subscribers = await _subscribe(stack, redis, replicas)
    steps = Steps(redis, subscribers)
    assert await _notify(redis, "updated", GREETING) == 0
    await steps.expect(("updated", GREETING))
    redis.stop()
    assert await _notify(redis, "--timeout", "2", "list-changed") == 1
    for subscriber in subscribers:
        assert subscriber.client is not None
        read = await subscriber.client.read_resource(GREETING, cache_mode="bypass")
        assert read.contents[0].text == "hello"
    # A change on replica 0 while Redis is away reaches replica 0's subscribers only.
    save_project(_project("offline"), replicas[0].project)
    local = [s for s in subscribers if s.name.startswith("r0-")]
    await until(lambda: all(("updated", GREETING) in s.received[2:] for s in local), what="local delivery")
    await until(lambda: "not published" in replicas[0].stderr(), what="the not-published log line")
    for subscriber in local:
        steps.expected[subscriber.name].append(("updated", GREETING))
    redis.start()
    await _all_subscribed(redis, 2)
    assert await _notify(redis, "list-changed") == 0
    await steps.expect(LC)
    for replica in replicas:
        log = replica.stderr()
        assert log.count("is unavailable (") == 1, log
        assert "Traceback" not in log


async def test_a_replica_killed_does_not_affect_the_others(
    tmp_path: Path, redis: RedisServer, stack: AsyncExitStack
) -> None:
    replicas = await _fleet(tmp_path, redis, 3)
    stack.callback(lambda: [r.stop() for r in replicas])
    await _all_subscribed(redis, 3)
    subscribers = await _subscribe(stack, redis, replicas[:2])
    replicas[2].kill()
    steps = Steps(redis, subscribers)
    assert await _notify(redis, "updated", GREETING) == 0
    await steps.expect(("updated", GREETING))
    save_project(_project(extra=True), replicas[0].project)
    await steps.expect(LC)
    assert replicas[2].process.returncode == -9
    assert await numsub(redis.url, CHANNEL) == 2  # Redis dropped the dead replica's subscription


async def test_redis_missing_at_start_serves_and_warns_once(tmp_path: Path) -> None:
    down = RedisServer(tmp_path)  # a free port with nothing on it
    path = save_project(_project(), tmp_path / "p.toml")
    replica = Replica(path, "--bus", down.url, "--bus-channel", CHANNEL)
    try:
        url = await replica.started()
        subscriber = Subscriber("alone", url, legacy=False, uris=[GREETING])
        async with subscriber.running(down.url, CHANNEL):
            assert subscriber.client is not None
            read = await subscriber.client.read_resource(GREETING, cache_mode="bypass")
            assert read.contents[0].text == "hello"
        log = replica.stderr()
        assert log.count("is unavailable (") == 1 and "retrying with back-off" in log and "Traceback" not in log
    finally:
        assert replica.stop() == 0


def _serve(*args: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    code = prelude + "import sys\nfrom resources_qt.server.cli import serve_main\nsys.exit(serve_main(sys.argv[1:]))\n"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False,
                          cwd=ROOT, timeout=60, env={"PYTHONPATH": str(ROOT), "PATH": ""})


def test_bad_bus_options_are_one_line_errors(tmp_path: Path) -> None:
    path = save_project(_project(), tmp_path / "p.toml")
    bad_url = _serve(str(path), "--http", "0", "--bus", "http://localhost:6379")
    # Without the redis package (hidden from this process), --bus names the extra to install.
    no_redis = _serve(str(path), "--http", "0", "--bus", "redis://localhost:6379/0",
                      prelude="import sys\nsys.modules['redis'] = None\n")
    for result in (bad_url, no_redis):
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("resource-studio serve: error: --bus"), result.stderr
    assert "redis://" in bad_url.stderr
    assert "pip install 'mcp-resource-studio[redis]'" in no_redis.stderr
