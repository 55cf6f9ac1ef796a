"""Issue 10's attacks at scale: reduced counts by default, the red team's counts with STRESS_FULL=1."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from stress_client import RpcError, Session
from stress_support import FULL, PYTHON, REPO, child_env, scaled

from resources_qt import Resource, Resources
from resources_qt.errors import ReaderFailedError
from resources_qt.project import Project, ResourceSpec, ServerSettings, dumps_project, load_project, save_project
from resources_qt.server import ResourceServer
from resources_qt.server.watch import ProjectWatcher
from resources_qt.snippets import SnippetPool


def _wait_for(condition: Callable[[], bool], within: float = 60.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are POSIX")
def test_a_fork_storm_leaves_no_process_behind(tmp_path: Path) -> None:
    forks = scaled(30, 300)
    pids_file = tmp_path / "pids"
    source = f"""\
import os, time

def read(uri, params):
    pids = []
    for _ in range({forks}):
        pid = os.fork()
        if pid == 0:
            time.sleep(300)
            os._exit(0)
        pids.append(pid)
    with open({str(pids_file)!r}, "w") as handle:
        handle.write(" ".join(map(str, pids)))
    time.sleep(300)
"""
    pool = SnippetPool(workers=1, timeout=60.0, memory_limit_mb=512, max_processes=forks + 64)
    try:
        pool.submit_read(key="storm", source=source, uri="t://storm", params={})
        _wait_for(lambda: pids_file.exists() and len(pids_file.read_text().split()) == forks)
        children = [int(p) for p in pids_file.read_text().split()]
        assert all(_alive(pid) for pid in children[:5])
    finally:
        pool.close()
    _wait_for(lambda: not any(_alive(pid) for pid in children), within=20)


async def _subscribe_many(url: str, attempts: int) -> tuple[int, int]:
    accepted = refused = 0
    async with httpx.AsyncClient(timeout=30) as http:
        session = Session(http, url)
        await session.initialize()
        for i in range(attempts):
            try:
                await session.call("resources/subscribe", {"uri": f"t://{i}"})
                accepted += 1
            except RpcError as exc:
                assert exc.code == -32602 and "max_subscriptions" in str(exc)
                refused += 1
        await session.close()
    return accepted, refused


def test_a_session_cannot_hold_more_than_max_subscriptions() -> None:
    attempts = scaled(1_500, 100_000)
    resources = Resources()
    resources.add_resource(Resource(name="t", uri_template="t://{id}", reader=lambda uri: "x"))
    server = ResourceServer(resources, name="subs", version="1", max_subscriptions=1000)
    server.enable_resource_subscriptions = True
    url = server.start_http(port=0)
    try:
        accepted, refused = asyncio.run(_subscribe_many(url, attempts))
        assert (accepted, refused) == (1000, attempts - 1000)
        _wait_for(lambda: not server.sessions())
        assert not server.subscribed_uris()
    finally:
        server.close()


def test_stdio_reads_a_huge_line_and_answers(tmp_path: Path) -> None:
    size = scaled(20, 200) * 1024 * 1024
    spec = ResourceSpec(name="g", uri="demo://g", reader="def read(uri, params):\n    return 'g'\n")
    path = save_project(Project(server=ServerSettings(name="t", workers=1), resources=[spec]), tmp_path / "p.toml")
    client = {"name": "s", "version": "1"}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client}}
    huge = {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "demo://" + "a" * size}}
    read = {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "demo://g"}}
    child = subprocess.Popen(
        [PYTHON, "-m", "studio", "serve", str(path), "--stdio"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=child_env(), cwd=REPO,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        notified = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
        lines = [json.dumps(init), notified, json.dumps(huge), json.dumps(read)]

        def write() -> None:
            assert child.stdin is not None
            child.stdin.write(("\n".join(lines) + "\n").encode())
            child.stdin.flush()

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        answers: dict[int, dict[str, Any]] = {}
        while len(answers) < 3:
            message = json.loads(child.stdout.readline())
            if "id" in message:
                answers[message["id"]] = message
        assert answers[2]["error"]["code"] == -32602 and "max_uri_length" in answers[2]["error"]["message"]
        assert answers[3]["result"]["contents"][0]["text"] == "g"
        writer.join(30)
    finally:
        child.kill()
        child.wait(30)
        child.stdin.close()
        child.stdout.close()


def test_watch_never_serves_a_half_written_project(tmp_path: Path) -> None:
    count, pause = scaled(4, 10), (0.6 if FULL else 0.2)
    specs = [
        ResourceSpec(name=f"r{i}", uri=f"demo://r{i}", reader=f"def read(uri, params):\n    return '{i}'\n")
        for i in range(count)
    ]
    path = tmp_path / "p.toml"
    settings = ServerSettings(name="watch", workers=1)
    save_project(Project(server=settings, resources=specs[:1]), path)
    project = load_project(path)
    resources = Resources()
    resources.add_resource(Resource(name="r0", uri="demo://r0", reader=lambda uri: "0"))
    seen: list[int] = []
    resources.add_listener(lambda kind, resource: seen.append(len(resources)))
    server = ResourceServer(resources, name="watch", version="1")
    watcher = ProjectWatcher(
        path, server=server, project=project, make=lambda spec: spec.to_resource(lambda uri: "x"),
        set_prelude=lambda source: None, settle=1.5,
    )
    # The file grows resource by resource: each prefix is valid TOML declaring fewer resources.
    texts = [dumps_project(Project(server=settings, resources=specs[:k])) for k in range(1, count + 1)]
    assert all(texts[-1].startswith(t) for t in texts)
    bounds = [0, *(len(t) for t in texts)]
    watcher.start()
    try:
        with open(path, "w", encoding="utf-8") as handle:
            for start, end in itertools.pairwise(bounds):
                handle.write(texts[-1][start:end])
                handle.flush()
                time.sleep(pause)  # a slow writer: every pause leaves valid, incomplete TOML
        _wait_for(lambda: watcher.reloads >= 1)
        assert len(resources) == count
        assert watcher.reloads == 1
        assert max(seen) == count and all(n >= 1 for n in seen)
    finally:
        watcher.stop()
        server.close()


def test_reads_still_answer_when_the_queue_is_full() -> None:
    queued = scaled(8, 256)
    slow = "import time\ndef read(uri, params):\n    time.sleep(0.3)\n    return 'slow'\n"
    with SnippetPool(workers=1, timeout=10.0, memory_limit_mb=256, max_queued_reads=queued) as pool:
        assert pool.wait_ready(60)
        futures = [pool.submit_read(key="slow", source=slow, uri="t://s", params={}) for _ in range(queued + 20)]
        outcomes = []
        for future in futures:
            try:
                future.result(60)
                outcomes.append("ok")
            except ReaderFailedError as exc:
                outcomes.append(exc.data["reason"])
        assert outcomes.count("busy") >= 19
        assert set(outcomes) <= {"ok", "busy", "timeout"}
