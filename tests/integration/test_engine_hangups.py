"""A client that hangs up while its read waits for a worker frees its place in the queue, in both eras."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from helpers.waiting import eventually

from resources_qt.project import Project, ResourceSpec, ServerSettings
from resources_qt.server import ResourceServer
from resources_qt.snippets import SnippetPool, bind_project

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
WAITING = 6


def _gated_reader(folder: Path) -> str:
    """Notes each read it starts, then holds its worker until the test opens the gate (bounded)."""
    return (
        "import time\n"
        f"LOG, GATE = {str(folder / 'started.log')!r}, {str(folder / 'gate')!r}\n"
        "def read(uri, params):\n"
        "    with open(LOG, 'a') as log:\n"
        "        log.write(params['id'] + '\\n')\n"
        "    deadline = time.monotonic() + 30\n"
        "    while not os.path.exists(GATE) and time.monotonic() < deadline:\n"
        "        time.sleep(0.01)\n"
        "    return 'read ' + params['id']\n"
    )


@pytest.fixture
def gated(tmp_path: Path) -> Iterator[tuple[ResourceServer, SnippetPool, Path]]:
    # One read of the resource at a time: the others queue, however many spare workers start.
    pool = SnippetPool(workers=1, timeout=60.0, memory_limit_mb=256, resource_concurrency=1)
    reader = "import os\n" + _gated_reader(tmp_path)
    spec = ResourceSpec(name="gated", uri_template="gated://{id}", mime_type="text/plain", reader=reader)
    project = Project(server=ServerSettings(name="hangups"), resources=[spec])
    server = ResourceServer(bind_project(project, pool, apply_settings=False), name="hangups", version="1")
    server.start_http(port=0)
    yield server, pool, tmp_path
    (tmp_path / "gate").touch()
    server.close()
    pool.close()


def _started(folder: Path) -> list[str]:
    log = folder / "started.log"
    return log.read_text().split() if log.exists() else []


def _read_body(uri: str, request_id: int, era: str) -> dict[str, object]:
    params: dict[str, object] = {"uri": uri}
    if era == MODERN:
        params["_meta"] = {"io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                           "io.modelcontextprotocol/protocolVersion": MODERN,
                           "io.modelcontextprotocol/clientCapabilities": {}}  # fmt: skip
    return {"jsonrpc": "2.0", "id": request_id, "method": "resources/read", "params": params}


def _headers(url: str, era: str) -> dict[str, str]:
    if era == MODERN:
        return {**HEADERS, "mcp-protocol-version": MODERN, "mcp-method": "resources/read"}
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    with httpx.Client(timeout=10) as http:
        answer = http.post(url, json=init, headers=HEADERS)
        headers = {**HEADERS, "mcp-session-id": answer.headers["mcp-session-id"], "mcp-protocol-version": HANDSHAKE}
        http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return headers


async def _until(condition: Callable[[], bool], what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 20
    while not condition():
        assert loop.time() < deadline, f"not {what} within 20 s"
        await asyncio.sleep(0.02)


async def _post_and_hang_up(url: str, headers: dict[str, str], era: str, folder: Path, pool: SnippetPool) -> None:
    """One read that takes the worker, then WAITING more that queue; every client hangs up."""
    async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=None)) as http:
        def post(name: str, request_id: int) -> asyncio.Task[httpx.Response]:
            uri = f"gated://{name}"
            return asyncio.create_task(http.post(url, json=_read_body(uri, request_id, era),
                                                 headers={**headers, "mcp-name": uri}))  # fmt: skip

        tasks = [post("first", 1)]
        await _until(lambda: _started(folder) == ["first"], "the first read running")
        tasks += [post(f"q{i}", 10 + i) for i in range(WAITING)]
        await _until(lambda: pool.queued() == WAITING, f"{WAITING} reads queued")
        for task in tasks:
            task.cancel()  # every client hangs up: httpx closes their connections
        await asyncio.gather(*tasks, return_exceptions=True)


@pytest.mark.parametrize("era", [HANDSHAKE, MODERN])
def test_reads_whose_clients_hung_up_leave_the_queue_and_never_run(
    gated: tuple[ResourceServer, SnippetPool, Path], era: str
) -> None:
    server, pool, folder = gated
    url = server.url
    assert url is not None
    asyncio.run(_post_and_hang_up(url, _headers(url, era), era, folder, pool))
    eventually(lambda: pool.queued() == 0, 10, what="the queue emptied by the hang-ups")
    (folder / "gate").touch()
    with httpx.Client(timeout=30) as http:  # the worker is free again and serves a new client
        uri = "gated://after"
        answer = http.post(url, json=_read_body(uri, 99, era), headers={**_headers(url, era), "mcp-name": uri})
    assert answer.json()["result"]["contents"][0]["text"] == "read after"
    assert _started(folder) == ["first", "after"]  # none of the abandoned reads ran


def test_a_read_whose_client_stays_still_waits_its_turn(gated: tuple[ResourceServer, SnippetPool, Path]) -> None:
    server, pool, folder = gated
    url = server.url
    assert url is not None
    headers = _headers(url, MODERN)

    async def both() -> list[str]:
        async with httpx.AsyncClient(timeout=30) as http:
            async def read(name: str, request_id: int) -> str:
                uri = f"gated://{name}"
                answer = await http.post(url, json=_read_body(uri, request_id, MODERN),
                                         headers={**headers, "mcp-name": uri})  # fmt: skip
                return str(answer.json()["result"]["contents"][0]["text"])

            first = asyncio.create_task(read("one", 1))
            await _until(lambda: _started(folder) == ["one"], "the first read running")
            second = asyncio.create_task(read("two", 2))
            await _until(lambda: pool.queued() == 1, "the second read queued")
            (folder / "gate").touch()
            return list(await asyncio.gather(first, second))

    assert asyncio.run(both()) == ["read one", "read two"]
    assert _started(folder) == ["one", "two"]
