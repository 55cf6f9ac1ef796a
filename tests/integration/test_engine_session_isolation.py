"""One session's messages are never replayed to another, and requests that open no session evict nobody."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import time
from collections.abc import Callable, Iterator

import httpx
import httpx2
import pytest
from engine_support import connect
from mcp.client.streamable_http import streamable_http_client

from resources_qt import Resource, Resources
from resources_qt.notifications import Updated
from resources_qt.server import ResourceServer

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
VERSION = "2025-11-25"


def _notes(uri: str, params: dict[str, str]) -> str:
    return f"PRIVATE notes of {params['name']}"


def _server(*, max_sessions: int | None = None, token: str | None = None) -> ResourceServer:
    resources = Resources()
    resources.add_resource(Resource(name="notes", uri_template="user://{name}/notes", reader=_notes))
    server = ResourceServer(resources, name="isolation", version="1", max_sessions=max_sessions)
    server.enable_resource_subscriptions = True
    server.enable_resource_notifications = True
    server.start_http(port=0, token=token)
    return server


@pytest.fixture
def served() -> Iterator[ResourceServer]:
    server = _server()
    yield server
    server.close()


def _open(http: httpx.Client, url: str) -> dict[str, str]:
    """Initialize a handshake-era session; the headers its later requests carry."""
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    answer = http.post(url, json=init, headers=HEADERS)
    assert answer.status_code == 200, answer.text
    headers = {**HEADERS, "mcp-session-id": answer.headers["mcp-session-id"], "mcp-protocol-version": VERSION}
    http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return headers


def _call(http: httpx.Client, url: str, headers: dict[str, str], method: str, params: dict[str, str], id: int) -> None:
    answer = http.post(url, json={"jsonrpc": "2.0", "id": id, "method": method, "params": params}, headers=headers)
    assert answer.status_code == 200 and "result" in answer.json(), answer.text


def _replayed(http: httpx.Client, url: str, headers: dict[str, str], last_event_id: str) -> list[str]:
    """The data lines a resumption GET naming `last_event_id` replays (it ends once the replay has nothing)."""
    lines: list[str] = []
    get = {**headers, "accept": "text/event-stream", "last-event-id": last_event_id}
    try:
        with http.stream("GET", url, headers=get, timeout=httpx.Timeout(10.0, read=1.5)) as stream:
            assert stream.status_code == 200
            lines.extend(line for line in stream.iter_lines() if line.startswith("data:"))
    except httpx.ReadTimeout:
        pass  # a stream left open with nothing on it: nothing was replayed
    return lines


def test_a_session_cannot_replay_the_answers_another_session_was_sent(served: ResourceServer) -> None:
    url = served.url
    assert url is not None
    with httpx.Client(timeout=10.0) as http:
        alice = _open(http, url)
        _call(http, url, alice, "resources/read", {"uri": "user://alice/notes"}, 2)
        bob = _open(http, url)
        # The SDK names a request's stream by its request id: "2/<n>" is how alice's answer would be named.
        replays = [_replayed(http, url, bob, f"2/{n}") for n in (0, 1)]
    assert replays == [[], []]


def _first_event_id(http: httpx.Client, url: str, headers: dict[str, str], poke: Callable[[], None]) -> str:
    """Open the standalone GET stream, `poke` until an event arrives, and drop the stream: the event's id."""
    found: queue.Queue[str] = queue.Queue()
    get = {**headers, "accept": "text/event-stream"}
    with http.stream("GET", url, headers=get) as stream:
        assert stream.status_code == 200

        def pump() -> None:
            with contextlib.suppress(httpx.HTTPError):
                for line in stream.iter_lines():
                    if line.startswith("id:"):
                        found.put(line[3:].strip())
                        return

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + 10
        while found.empty():
            assert time.monotonic() < deadline, "no event on the standalone stream"
            poke()
            with contextlib.suppress(queue.Empty):
                return found.get(timeout=0.2)
    return found.get_nowait()


def test_a_session_cannot_replay_notifications_sent_to_another(served: ResourceServer) -> None:
    url = served.url
    assert url is not None

    def updated() -> None:
        asyncio.run(served.notify(Updated("user://alice/notes")))

    with httpx.Client(timeout=10.0) as http:
        alice = _open(http, url)
        _call(http, url, alice, "resources/subscribe", {"uri": "user://alice/notes"}, 3)
        last = _first_event_id(http, url, alice, updated)
        updated()  # sent while alice is away: kept for her stream
        bob = _open(http, url)
        replays = [_replayed(http, url, bob, event) for event in (last, "_GET_stream/0")]
        mine = _replayed(http, url, alice, last)  # alice herself resumes and gets it
    assert replays == [[], []]
    assert any("user://alice/notes" in line for line in mine), mine


@pytest.mark.parametrize("token", [None, "s3cret"])
def test_requests_that_open_no_session_evict_nobody_at_the_cap(token: str | None) -> None:
    server = _server(max_sessions=2, token=token)
    url = server.url
    assert url is not None
    auth = {"authorization": f"Bearer {token}"} if token else {}
    try:
        with httpx.Client(timeout=10.0, headers=auth) as http:
            first, second = _open(http, url), _open(http, url)

            async def modern_reads() -> str:
                async with (
                    httpx2.AsyncClient(headers=auth, timeout=10) as modern_http,
                    connect(streamable_http_client(url, http_client=modern_http), "2026-07-28") as client,
                ):
                    for _ in range(2):
                        result = await client.read_resource("user://carol/notes")
                return str(result.contents[0].text)  # type: ignore[union-attr]

            assert asyncio.run(modern_reads()) == "PRIVATE notes of carol"
            if token:
                refused = httpx.post(url, content=b"{}", headers=HEADERS)  # no token, so it can open nothing
                assert refused.status_code == 401
            for headers in (first, second):
                _call(http, url, headers, "ping", {}, 9)  # both sessions still open
            assert len(server.sessions()) == 2
            _open(http, url)  # a real newcomer still evicts the longest idle
            assert len(server.sessions()) == 2
            if token:  # also with the scheme written as the SDK accepts it, in lower case
                with httpx.Client(timeout=10.0, headers={"authorization": f"bearer {token}"}) as lower:
                    _open(lower, url)
                assert len(server.sessions()) == 2
    finally:
        server.close()
