"""HTTP edges: garbage Last-Event-ID, a 2026-07-28 POST cut short, streams capped below the open-file limit."""

from __future__ import annotations

import logging
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest
from helpers.stalled_client import HANDSHAKE, HEADERS
from helpers.waiting import eventually

from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project
from resources_qt.server import ResourceServer
from resources_qt.server.streams import stream_limit_for

ROOT = Path(__file__).resolve().parents[2]
OPEN_FILES = 320
"""The serve process's open-file limit (soft and hard): streams stop at stream_limit_for(320) = 192."""


@contextmanager
def _uvicorn_records(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    # uvicorn's loggers do not propagate to the root logger caplog listens on.
    uvicorn_logger = logging.getLogger("uvicorn.error")
    uvicorn_logger.addHandler(caplog.handler)
    try:
        yield
    finally:
        uvicorn_logger.removeHandler(caplog.handler)


MODERN_LISTEN = {**HEADERS, "mcp-protocol-version": "2026-07-28", "mcp-method": "subscriptions/listen"}


def _listen_body() -> dict[str, object]:
    meta = {"io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    return {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
            "params": {"notifications": {"resourcesListChanged": True}, "_meta": meta}}


def _session(http: httpx.Client, url: str) -> dict[str, str]:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    answer = http.post(url, json=init, headers=HEADERS)
    answer.raise_for_status()
    headers = {**HEADERS, "mcp-session-id": answer.headers["mcp-session-id"], "mcp-protocol-version": HANDSHAKE}
    http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return headers


@pytest.mark.parametrize("last_event_id", ["_GET_stream/\u00b2".encode("latin-1"), b"_GET_stream/" + b"9" * 5000],
                         ids=["superscript-two", "5000-digits"])
def test_a_garbage_last_event_id_gets_an_empty_stream_and_no_error_log(
    live_server: ResourceServer, caplog: pytest.LogCaptureFixture, last_event_id: bytes
) -> None:
    assert live_server.url is not None
    with httpx.Client(timeout=10.0) as http:
        headers = _session(http, live_server.url)
        with http.stream("GET", live_server.url, headers={**headers, "last-event-id": last_event_id}) as stream:
            # As for an id this store never minted: nothing to replay, the stream ends.
            assert stream.status_code == 200
            assert stream.read() == b""
    noisy = [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert noisy == []


def test_a_2026_post_cut_short_is_one_info_line(live_server: ResourceServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="resources_qt.server.streams")
    assert live_server.port is not None
    with _uvicorn_records(caplog):
        with socket.create_connection(("127.0.0.1", live_server.port)) as sock:
            sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                         b"accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\n"
                         b"mcp-method: resources/list\r\ncontent-length: 1000\r\n\r\n{\"jsonrpc\"")

        def logged() -> bool:
            return any("hung up before" in r.getMessage() for r in caplog.records)

        eventually(logged, 10, what="the hang-up being logged")
        records = [r for r in caplog.records if r.name in ("uvicorn.error", "resources_qt.server.streams")]
    assert [(r.levelname, r.exc_info) for r in records] == [("INFO", None)]


_LIMITED = ("import os, resource, sys; resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[1]),) * 2); "
            "os.execv(sys.executable, [sys.executable, '-m', 'studio', *sys.argv[2:]])")
"""Runs `studio` under an open-file limit (argv[1]), which the exec keeps."""


def _serve(project: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    command = [sys.executable, "-c", _LIMITED, str(OPEN_FILES),
               "serve", str(project), "--http", "127.0.0.1:0", "--log-level", "info"]
    with log.open("wb") as err:
        return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=ROOT)


def test_streams_stop_below_the_open_file_limit_and_new_clients_still_get_in(tmp_path: Path) -> None:
    reader = "def read(uri, params):\n    return 'hello'\n"
    project = save_project(
        Project(server=ServerSettings(name="fds", version="1", notifications=True, workers=1),
                resources=[ResourceSpec(name="greeting", uri="demo://greeting", reader=reader)]),
        tmp_path / "fds.toml",
    )
    log = tmp_path / "serve.log"
    process = _serve(project, log)
    cap = stream_limit_for(OPEN_FILES)
    try:
        found: list[str] = []

        def serving() -> bool:
            found[:] = re.findall(r"Serving .* at (http://\S+/mcp)", log.read_text(errors="replace"))
            assert process.poll() is None, log.read_text(errors="replace")
            return bool(found)

        eventually(serving, 30, what="serve starting")
        url = found[0]
        assert f"Open-file limit {OPEN_FILES}: at most {cap} streams open at once" in log.read_text()
        limits = httpx.Limits(max_connections=OPEN_FILES + 16, max_keepalive_connections=4)
        with httpx.Client(timeout=5.0, limits=limits) as http, ExitStack() as streams:
            opened, refusal = 0, None
            for _ in range(OPEN_FILES):
                try:
                    headers = _session(http, url)
                    stream = streams.enter_context(http.stream("GET", url, headers=headers))
                except httpx.TimeoutException:
                    raise AssertionError(f"the server stopped answering after {opened} open streams") from None
                if stream.status_code != 200:
                    refusal = stream
                    break
                opened += 1
            assert refusal is not None and refusal.status_code == 503
            assert opened == cap
            error = refusal.read().decode()
            assert "max_open_streams" in error and f"at most {cap}" in error
            # A 2026-07-28 listen stream counts in the same budget.
            listen = http.post(url, headers=MODERN_LISTEN, json=_listen_body())
            assert listen.json()["error"]["data"] == {"limit": "max_open_streams", "max": cap}
            # A newcomer still gets in and is answered while every stream stays open.
            fresh = _session(http, url)
            answer = http.post(url, headers=fresh, json={"jsonrpc": "2.0", "id": 1, "method": "resources/list"})
            assert answer.json()["result"]["resources"][0]["uri"] == "demo://greeting"
        assert "Traceback" not in log.read_text(errors="replace")
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)
