"""`resource-studio notify`: publishes typed events a replica's bus receives; one-line errors and exit codes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers.redis_server import RedisServer, redis_server

from resources_qt.bus.cli import notify_main
from resources_qt.bus.events import Envelope, ListChanged, Updated
from resources_qt.bus.redis_bus import RedisBus
from resources_qt.bus.urls import BUS_ENV, CHANNEL_ENV

ROOT = Path(__file__).resolve().parents[3]
CHANNEL = "resource-studio:support-desk"
TIMEOUT = 10.0


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    with redis_server(tmp_path) as started:
        yield started


def _notify(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in (BUS_ENV, CHANNEL_ENV)}
    environment["PYTHONPATH"] = str(ROOT)
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "resources_qt.bus", *args], capture_output=True, text=True,
                          env=environment, cwd=ROOT, timeout=60, check=False)


def _received_while(url: str, action: Callable[[], object], count: int) -> list[Envelope]:
    """Run `action` (in a thread) while a replica's bus listens; what that bus received."""

    async def main() -> list[Envelope]:
        bus = RedisBus(url, channel=CHANNEL, origin="replica-listening")
        got: list[Envelope] = []

        async def keep(envelope: Envelope) -> None:
            got.append(envelope)

        bus.add_listener(keep)
        await bus.start()
        try:
            assert await bus.wait_connected(TIMEOUT)
            await asyncio.to_thread(action)
            deadline = asyncio.get_running_loop().time() + TIMEOUT
            while len(got) < count and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.01)
        finally:
            await bus.close()
        return got

    return asyncio.run(main())


def test_updated_and_list_changed_reach_a_listening_replica(server: RedisServer,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    codes: list[int] = []

    def run() -> None:
        codes.append(notify_main(["--bus", server.url, "--server-name", "Support desk",
                                  "updated", "demo://a", "demo://b", "demo://a"]))
        codes.append(notify_main(["--bus", server.url, "--channel", CHANNEL, "list-changed"]))
        codes.append(notify_main(["--bus", server.url, "--channel", CHANNEL, "updated", "demo://c",
                                  "--session", "s-9"]))

    got = _received_while(server.url, run, 4)
    captured = capsys.readouterr()
    assert codes == [0, 0, 0], captured.err
    assert [(e.event, e.session_id) for e in got] == [
        (Updated("demo://a"), None), (Updated("demo://b"), None), (ListChanged(), None), (Updated("demo://c"), "s-9")
    ]
    assert all(e.origin.startswith("notify-") for e in got)
    assert captured.out.splitlines() == [
        f"Published updated demo://a on {CHANNEL!r} (1 replica listening)",
        f"Published updated demo://b on {CHANNEL!r} (1 replica listening)",
        f"Published list_changed on {CHANNEL!r} (1 replica listening)",
        f"Published updated demo://c for session s-9 on {CHANNEL!r} (1 replica listening)",
    ]


def test_environment_supplies_bus_and_channel(server: RedisServer, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BUS_ENV, server.url)
    monkeypatch.setenv(CHANNEL_ENV, "resource-studio:elsewhere")
    assert notify_main(["list-changed"]) == 0
    assert "'resource-studio:elsewhere' (0 replicas listening)" in capsys.readouterr().out


def test_unreachable_bus_is_exit_1_with_one_line(tmp_path: Path) -> None:
    down = RedisServer(tmp_path)  # a free port nothing listens on
    # The URL in the environment, as recommended: with a password in argv a warning line comes first.
    result = _notify("--channel", CHANNEL, "--timeout", "2", "updated", "demo://a",
                     env={BUS_ENV: down.url.replace("redis://", "redis://:s3cret@")})
    assert result.returncode == 1 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("resource-studio notify: error: the bus at redis://:***@127.0.0.1:")
    assert "unreachable" in lines[0] and "s3cret" not in lines[0]


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--channel", CHANNEL, "list-changed"], "give --bus URL"),
        (["--bus", "http://localhost:6379", "--channel", CHANNEL, "list-changed"], "scheme must be redis://"),
        (["--bus", "redis://localhost:6379/0", "list-changed"], "give --channel or --server-name"),
        (["--bus", "redis://localhost:6379/0", "--channel", CHANNEL, "updated", "bad uri"], "URI: must not contain"),
        (["--bus", "redis://localhost:6379/0", "--channel", CHANNEL, "updated", "demo://a", "--session", ""],
         "--session: must be a non-empty string"),
        (["--bus", "redis://localhost:6379/0", "--server-name", "???", "list-changed"], "gives no channel name"),
        (["--bus", "redis://localhost:6379/0", "--channel", CHANNEL, "--timeout", "0", "list-changed"],
         "--timeout: must be positive"),
    ],
)
def test_usage_errors_are_exit_2_with_one_line(args: list[str], problem: str,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BUS_ENV, raising=False)
    monkeypatch.delenv(CHANNEL_ENV, raising=False)
    assert notify_main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("resource-studio notify: error: ")
    assert problem in lines[0]


def test_argparse_errors_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert notify_main(["frobnicate"]) == 2
    assert "invalid choice" in capsys.readouterr().err
    assert notify_main(["--help"]) == 0
    shown = capsys.readouterr().out
    assert "list-changed" in shown and BUS_ENV in shown


def test_without_the_redis_package_the_extra_is_named() -> None:
    code = ("import sys\nsys.modules['redis'] = None\nfrom resources_qt.bus.cli import notify_main\n"
            "sys.exit(notify_main(sys.argv[1:]))\n")
    result = subprocess.run([sys.executable, "-c", code, "--bus", "redis://localhost:6379/0", "--channel", CHANNEL,
                             "list-changed"], capture_output=True, text=True, cwd=ROOT, timeout=60, check=False,
                            env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "resource-studio notify: error: the notification bus needs the redis package: "
        "pip install 'mcp-resource-studio[redis]'"
    ]
