"""The bus password: never in serve's or notify's output in any form; the env and file forms keep it out of ps."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from helpers.bus_fleet import ROOT, Replica, numsub, until
from helpers.redis_server import RedisServer, redis_server

from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

# Every character a URL gives a meaning to, so a password written raw breaks the URL in each way.
SECRET = "Zq9#xW/v7?kP@m%Q2:y"
CHANNEL = "resource-studio:secrets"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    directory = tmp_path / "redis"
    directory.mkdir()
    with redis_server(directory, password=SECRET) as server:
        yield server


def _forms() -> list[str]:
    """The secret as it could be written, and every stretch of it long enough to give it away."""
    whole = {SECRET, quote(SECRET, safe=""), quote(SECRET), quote_plus(SECRET), SECRET.replace("%", "%25")}
    return sorted(whole | {text[i:i + 5] for text in whole for i in range(len(text) - 4)})


def _leaks(text: str) -> list[str]:
    return [form for form in _forms() if form in text]


def _project(tmp_path: Path) -> Path:
    greeting = ResourceSpec(name="greeting", uri="demo://greeting", reader="def read(uri, params):\n    return 'hi'\n")
    settings = ServerSettings(name="Secrets", version="1", notifications=True, subscriptions=True, workers=1)
    return save_project(Project(server=settings, resources=[greeting]), tmp_path / "p.toml")


def _base(redis: RedisServer) -> str:
    return f"redis://127.0.0.1:{redis.port}/0"


def _cmdline(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")


@pytest.mark.parametrize("form", ["userinfo", "query", "env", "file"])
async def test_serve_connects_with_the_password_and_never_shows_it(tmp_path: Path, redis: RedisServer,
                                                                   form: str) -> None:
    base = _base(redis)
    password_file = tmp_path / "redis-password"
    password_file.write_text(SECRET + "\n", encoding="utf-8")
    encoded = f"redis://:{quote(SECRET, safe='')}@127.0.0.1:{redis.port}/0"
    args, env = {
        "userinfo": (["--bus", encoded], {}),
        "query": (["--bus", f"{base}?password={quote(SECRET, safe='')}"], {}),
        "env": ([], {"RESOURCE_STUDIO_BUS": encoded}),
        "file": (["--bus", base, "--bus-password-file", str(password_file)], {}),
    }[form]
    replica = Replica(_project(tmp_path), *args, "--bus-channel", CHANNEL, "--log-level", "info", env=env)
    try:
        await replica.started()
        await until(lambda: "connected (channel" in replica.stderr(), what="the bus connected")
        await until(lambda: "Sharing notifications on redis://" in replica.stderr(), what="the sharing line")
        assert await numsub(encoded, CHANNEL) == 1  # subscribed, so authenticated
        in_ps = _cmdline(replica.process.pid)
    finally:
        replica.stop()
    output = replica.stderr()
    assert "Sharing notifications on redis://" in output
    assert _leaks(output) == [], output
    # On the command line the password is there for ps to show, and serve says so; the other forms keep it out.
    warned = "the bus password is on the command line" in output
    assert warned == (form in ("userinfo", "query")), output
    assert (quote(SECRET, safe="") in in_ps) == (form in ("userinfo", "query"))


async def test_a_wrong_password_is_reported_without_either_password(tmp_path: Path, redis: RedisServer) -> None:
    wrong = SECRET[::-1]
    password_file = tmp_path / "wrong"
    password_file.write_text(wrong, encoding="utf-8")
    replica = Replica(_project(tmp_path), "--bus", _base(redis), "--bus-password-file", str(password_file),
                      "--bus-channel", CHANNEL)
    try:
        await replica.started()
        await until(lambda: "is unavailable" in replica.stderr(), what="the refused login logged")
    finally:
        replica.stop()
    output = replica.stderr()
    assert "invalid" in output.lower() or "auth" in output.lower(), output
    assert _leaks(output) == [] and wrong not in output and quote(wrong, safe="") not in output, output


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "RESOURCE_STUDIO_BUS"}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "studio", "serve", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=60, check=False)


def _notify(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "RESOURCE_STUDIO_BUS"}
    environment["PYTHONPATH"] = str(ROOT)
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "studio", "notify", "--channel", CHANNEL, *args, "list-changed"],
                          capture_output=True, text=True, env=environment, cwd=ROOT, timeout=60, check=False)


MALFORMED = {
    "raw password with # / ? @ %": f"redis://:{SECRET}@127.0.0.1:6379/0",
    "password with / only": "redis://:Zq9xW/v7kPmQ2y@127.0.0.1:6379/0",
    "password with ? only": "redis://user:Zq9xW?v7kPmQ2y@127.0.0.1:6379/0",
    "password without a colon": "redis://Zq9xWv7kPmQ2y@127.0.0.1:6379/0",
    "bad port": "redis://:Zq9xWv7kPmQ2y@127.0.0.1:Zq9xWv7kPmQ2y/0",
    "bad scheme": "http://:Zq9xWv7kPmQ2y@127.0.0.1:6379/0",
    "bad database": f"redis://127.0.0.1:6379/Zq9xWv7kPmQ2y?password={quote(SECRET, safe='')}",
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_url_is_described_never_echoed(tmp_path: Path, name: str) -> None:
    url = MALFORMED[name]
    secrets = [*_forms(), "Zq9xW", "v7kPmQ2y"]
    done = _serve(str(_project(tmp_path)), "--http", "0", "--bus", url)
    told = _notify("--bus", url)
    for result in (done, told):
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "error: " in lines[0] and "bus URL" in lines[0], result.stderr
        assert [form for form in secrets if form in result.stderr + result.stdout] == [], result.stderr


def test_notify_publishes_with_the_password_from_a_file_or_the_environment(tmp_path: Path,
                                                                           redis: RedisServer) -> None:
    password_file = tmp_path / "redis-password"
    password_file.write_text(SECRET + "\r\n", encoding="utf-8")
    encoded = f"redis://:{quote(SECRET, safe='')}@127.0.0.1:{redis.port}/0"
    results = {
        "file": _notify("--bus", _base(redis), "--bus-password-file", str(password_file)),
        "env": _notify(env={"RESOURCE_STUDIO_BUS": encoded}),
        "argv": _notify("--bus", encoded),
        "twice": _notify("--bus", encoded, "--bus-password-file", str(password_file)),
        "missing file": _notify("--bus", _base(redis), "--bus-password-file", str(tmp_path / "nope")),
    }
    for name, result in results.items():
        assert _leaks(result.stdout + result.stderr) == [], (name, result.stderr)
    for name in ("file", "env", "argv"):
        assert results[name].returncode == 0, (name, results[name].stderr)
        assert "Published list_changed" in results[name].stdout
    assert "the bus password is on the command line" in results["argv"].stderr
    assert "command line" not in results["file"].stderr + results["env"].stderr
    assert results["twice"].returncode == 2 and "password once" in results["twice"].stderr
    assert results["missing file"].returncode == 2 and "--bus-password-file" in results["missing file"].stderr
