"""Load: concurrent clients reading while subscribing and unsubscribing; nothing fails, nothing is lost."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import httpx
import pytest
from stress_client import RpcError, Session
from stress_support import PYTHON, REPO, child_env, scaled

from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project

pytestmark = pytest.mark.stress

CHILD = Path(__file__).with_name("engine_child.py")
STABLE = ["docs://doc0", "docs://doc1"]  # held for the whole run: every update must arrive
CHURN = ["docs://doc2", "docs://doc3"]  # subscribed and unsubscribed during the run


def _project(path: Path) -> Path:
    specs = [ResourceSpec(name=f"doc{i}", uri=f"docs://doc{i}", mime_type="text/plain",
                          reader=f"def read(uri, params):\n    return 'document {i}'\n") for i in range(4)]
    specs.append(ResourceSpec(name="item", uri_template="items://{id}", mime_type="text/plain",
                              reader="def read(uri, params):\n    return 'item ' + params['id']\n"))
    server = ServerSettings(name="stress", workers=2, subscriptions=True, notifications=True)
    return save_project(Project(server=server, resources=specs), path)


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


class Child:
    """The server process and its command channel."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lock = asyncio.Lock()

    async def ask(self, command: str) -> list[str]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        async with self.lock:
            self.proc.stdin.write(f"{command}\n".encode())
            await self.proc.stdin.drain()
            line = await asyncio.wait_for(self.proc.stdout.readline(), 40)
        return line.decode().split()


async def _client(index: int, session: Session, reads: int, errors: list[str]) -> None:
    churn = CHURN[index % 2]
    for j in range(reads):
        try:
            if j % 20 == 10:
                await session.call("resources/subscribe", {"uri": churn})
            elif j % 20 == 19:
                await session.call("resources/unsubscribe", {"uri": churn})
            elif j % 3 == 0:
                result = await session.call("resources/read", {"uri": f"items://{index}-{j}"})
                if result["contents"][0]["text"] != f"item {index}-{j}":
                    errors.append(f"wrong item content {result!r}")
            else:
                k = j % 4
                result = await session.call("resources/read", {"uri": f"docs://doc{k}"})
                if result["contents"][0]["text"] != f"document {k}":
                    errors.append(f"wrong doc content {result!r}")
        except (TimeoutError, RpcError, httpx.HTTPError, KeyError, RuntimeError) as exc:
            errors.append(f"client {index} op {j}: {type(exc).__name__}: {exc}")


async def _until_a_read_is_answered(session: Session, timeout: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            await session.call("resources/read", {"uri": "docs://doc0"})
            return
        except RpcError:
            if asyncio.get_running_loop().time() > deadline:
                raise


async def _scenario(project: Path, clients: int, reads: int) -> dict[str, Any]:
    log = (project.parent / "server.log").open("wb")
    proc = await asyncio.create_subprocess_exec(
        PYTHON, str(CHILD), str(project), cwd=str(REPO), env=child_env(),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=log,
    )
    child = Child(proc)
    try:
        assert proc.stdout is not None
        first = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode().split()
        assert first and first[0] == "url", first
        url = first[1]
        # Idle pooled connections expire on our side first: uvicorn closes a keep-alive connection after
        # 5 s idle, httpx's default expiry is also 5 s, and a request sent into that race gets a ReadError.
        limits = httpx.Limits(max_connections=2 * clients + 8, max_keepalive_connections=2 * clients + 8,
                              keepalive_expiry=2.0)
        async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(20.0, read=None)) as http:
            sessions = [Session(http, url) for _ in range(clients)]
            for i, session in enumerate(sessions):
                await session.initialize(f"load-{i}")
                await session.stream()
                await session.call("resources/subscribe", {"uri": STABLE[i % 2]})
            # Workers replaced by the project's settings can take longer than the 5 s reader timeout
            # to come up on a loaded machine: the load starts once one read is answered.
            await _until_a_read_is_answered(sessions[0])
            errors: list[str] = []
            # Warm-up: imports, worker start, first allocations; memory is measured after it.
            await asyncio.gather(*(_client(i, s, 20, errors) for i, s in enumerate(sessions)))
            rss_warm = _rss_kb(proc.pid)
            sent = {uri: 0 for uri in STABLE}
            recipients: list[tuple[str, int, int]] = []
            running = True

            async def notifier() -> None:
                turn = 0
                while running:
                    uri = STABLE[turn % 2]
                    reply = await child.ask(f"notify {uri}")
                    sent[uri] += 1
                    expected = sum(1 for i in range(clients) if STABLE[i % 2] == uri)
                    recipients.append((uri, int(reply[2]), expected))
                    turn += 1
                    await asyncio.sleep(0.05)

            notifying = asyncio.create_task(notifier())
            await asyncio.gather(*(_client(i, s, reads, errors) for i, s in enumerate(sessions)))
            running = False
            await notifying
            # Updates already sent may still be in flight on the GET streams.
            for _ in range(200):
                if all(s.updates[STABLE[i % 2]] >= sent[STABLE[i % 2]] for i, s in enumerate(sessions)):
                    break
                await asyncio.sleep(0.05)
            lost = {i: sent[STABLE[i % 2]] - s.updates[STABLE[i % 2]] for i, s in enumerate(sessions)}
            stray = {i: s.updates[STABLE[(i + 1) % 2]] for i, s in enumerate(sessions)}
            rss_after = _rss_kb(proc.pid)
            for session in sessions:
                with contextlib.suppress(httpx.HTTPError, asyncio.TimeoutError):
                    await session.close()
        left = await child.ask("sessions")
        for _ in range(100):
            if left[1:] == ["0", "0"]:
                break
            await asyncio.sleep(0.1)
            left = await child.ask("sessions")
        return {"errors": errors, "sent": sent, "recipients": recipients, "lost": lost, "stray": stray,
                "rss_warm_kb": rss_warm, "rss_after_kb": rss_after, "left": left}
    finally:
        if proc.returncode is None:
            with contextlib.suppress(Exception):
                await child.ask("quit")
            try:
                await asyncio.wait_for(proc.wait(), 20)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        log.close()


def test_load_reads_with_subscriptions(tmp_path: Path) -> None:
    clients, reads = scaled(8, 32), scaled(100, 2000)
    outcome = asyncio.run(_scenario(_project(tmp_path / "load.toml"), clients, reads))
    server_log = (tmp_path / "server.log").read_text(errors="replace")[-3000:]
    assert outcome["errors"] == [], (outcome["errors"][:10], server_log)
    assert all(n > 0 for n in outcome["sent"].values()), outcome["sent"]
    assert [r for r in outcome["recipients"] if r[1] != r[2]] == [], "an update missed a subscriber"
    assert all(v == 0 for v in outcome["lost"].values()), f"lost updates per client: {outcome['lost']}"
    assert all(v == 0 for v in outcome["stray"].values()), f"updates for unsubscribed URIs: {outcome['stray']}"
    warm, after = outcome["rss_warm_kb"], outcome["rss_after_kb"]
    # Flat: allow allocator slack and caches, not growth with the number of requests.
    assert after <= warm + max(40_000, warm * 0.3), f"server RSS grew from {warm} kB to {after} kB"
    assert outcome["left"] == ["sessions", "0", "0"], f"sessions left after every client closed: {outcome['left']}"
