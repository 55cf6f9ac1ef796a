"""No process a reader starts outlives its worker: new sessions, double forks, timeouts, crashes, `serve` stopped."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from engine_support import connect
from helpers.bus_fleet import Replica
from helpers.waiting import eventually, holds_within
from mcp import MCPError

from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)"),
]

GONE_WITHIN = 15.0

# Each reader starts `sleep 600` out of the worker's reach as it stood before: in a session of its
# own (so the worker's process group does not hold it), directly or through a child that exits at
# once (a double fork: the sleep is orphaned straight away). It writes the sleep's pid to a file
# before answering, so the test knows it even when the read never answers.
_SPAWN = """\
import os, subprocess, sys, time

def spawn(how):
    if how == "session":
        child = subprocess.Popen(["sleep", "600"], start_new_session=True, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return child.pid
    code = ("import subprocess; p = subprocess.Popen(['sleep', '600'], start_new_session=True, "
            "stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(done.stdout)

def read(uri, params):
    how, then = params["how"], params["then"]
    pid = spawn(how)
    with open(os.path.join(PROJECT_DIR, f"{how}-{then}.pid"), "w") as handle:
        handle.write(str(pid))
    if then == "hang":
        time.sleep(60)
    if then == "exit":
        os._exit(3)
    if then == "sigkill":
        os.kill(os.getpid(), 9)
    return str(pid)
"""


def _project(tmp_path: Path) -> Path:
    spawner = ResourceSpec(name="spawner", uri_template="spawn://{how}/{then}", mime_type="text/plain", reader=_SPAWN)
    settings = ServerSettings(name="descendants", version="1", workers=1, reader_timeout=1.0)
    return save_project(Project(server=settings, resources=[spawner]), tmp_path / "p.toml")


def _running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie waiting to be reaped has ended)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def _pid_file(project: Path, how: str, then: str) -> int:
    path = project.with_name(f"{how}-{then}.pid")
    eventually(lambda: path.exists() and path.read_text().strip().isdigit(), 30, what=f"{path.name} written")
    return int(path.read_text())


@pytest.fixture
def leftovers() -> list[int]:
    # Whatever a failing test leaves running is killed here, so one failure does not leak sleeps.
    pids: list[int] = []
    yield pids
    for pid in pids:
        if _running(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize(("how", "stop"), [("session", "SIGTERM"), ("double-fork", "SIGTERM"),
                                           ("double-fork", "SIGKILL")])
async def test_what_readers_started_ends_when_serve_is_stopped(tmp_path: Path, how: str, stop: str,
                                                               leftovers: list[int]) -> None:
    project = _project(tmp_path)
    replica = Replica(project)
    try:
        url = await replica.started()
        async with connect(url, "2026-07-28") as client:
            read = await client.read_resource(f"spawn://{how}/answer", cache_mode="bypass")
        pid = int(read.contents[0].text)
        leftovers.append(pid)
        assert _running(pid)
    finally:
        if stop == "SIGKILL":
            replica.kill()  # no clean-up in serve at all: the workers' supervisors notice on their own
        else:
            assert replica.stop() == 0, replica.stderr()  # as a service manager stops it
    eventually(lambda: not _running(pid), GONE_WITHIN, what=f"the reader's {how} sleep ending with serve")


@pytest.mark.parametrize(("how", "then"), [("session", "hang"), ("double-fork", "hang"), ("session", "exit"),
                                           ("double-fork", "sigkill")])
async def test_what_readers_started_ends_with_a_worker_killed_or_dying(tmp_path: Path, how: str, then: str,
                                                                      leftovers: list[int]) -> None:
    # "hang": the read outlives reader_timeout and the pool kills the worker; "exit" and "sigkill":
    # the worker ends on its own (sigkill stands for the out-of-memory killer), without the pool.
    project = _project(tmp_path)
    replica = Replica(project)
    try:
        url = await replica.started()
        async with connect(url, "2026-07-28") as client:
            with pytest.raises(MCPError) as failure:
                await client.read_resource(f"spawn://{how}/{then}", cache_mode="bypass")
            pid = _pid_file(project, how, then)
            leftovers.append(pid)
            expected = {"hang": "timed out", "exit": "exit code 3", "sigkill": "SIGKILL"}[then]
            assert expected in failure.value.message
            # Serving goes on: the sleep must end with the worker, not with serve.
            eventually(lambda: not _running(pid), GONE_WITHIN, what=f"the {how} sleep ending with its worker")
            read = await client.read_resource(f"spawn://{how}/answer", cache_mode="bypass")
            leftovers.append(int(read.contents[0].text))
    finally:
        assert replica.stop() == 0, replica.stderr()
    assert holds_within(lambda: not any(_running(p) for p in leftovers), GONE_WITHIN)
