"""How the HTTP transport answers: one JSON body per plain request, streams only where notifications flow."""

from __future__ import annotations

import concurrent.futures

import httpx
import pytest

from resources_qt.server import ResourceServer
from resources_qt.server.loopthread import loop_kind, new_loop

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json",
           "mcp-protocol-version": "2025-11-25"}


def _initialize(http: httpx.Client, url: str) -> str:
    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}
    answer = http.post(url, json=body, headers=HEADERS)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/json")
    session = answer.headers["mcp-session-id"]
    http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
              headers={**HEADERS, "mcp-session-id": session})
    return session


def test_a_read_is_answered_with_one_json_body(live_server: ResourceServer) -> None:
    assert live_server.url is not None
    with httpx.Client(timeout=10.0) as http:
        session = _initialize(http, live_server.url)
        answer = http.post(
            live_server.url,
            json={"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {"uri": "config://app/settings"}},
            headers={**HEADERS, "mcp-session-id": session},
        )
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json()["result"]["contents"][0]["text"] == '{"theme": "dark"}'


def test_concurrent_requests_of_one_session_are_each_answered(live_server: ResourceServer) -> None:
    assert live_server.url is not None
    with httpx.Client(timeout=10.0) as http:
        session = _initialize(http, live_server.url)

    def read(request_id: int) -> str:
        with httpx.Client(timeout=10.0) as http:
            answer = http.post(
                live_server.url,  # type: ignore[arg-type]
                json={"jsonrpc": "2.0", "id": request_id, "method": "resources/read",
                      "params": {"uri": f"tickets://{request_id}/attachment"}},
                headers={**HEADERS, "mcp-session-id": session},
            )
            return str(answer.json()["result"]["contents"][0]["text"])

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        texts = list(pool.map(read, range(1, 33)))
    assert texts == [f"ticket {i} at tickets://{i}/attachment" for i in range(1, 33)]


@pytest.mark.parametrize("setting", ["asyncio", "", "uvloop"])
def test_the_server_loop_is_asyncio_unless_uvloop_is_asked_for_and_installed(
    monkeypatch: pytest.MonkeyPatch, setting: str
) -> None:
    monkeypatch.setenv("RESOURCE_STUDIO_LOOP", setting)
    try:
        import uvloop
    except ImportError:
        uvloop = None  # type: ignore[assignment]
    expected = "uvloop" if uvloop is not None and setting == "uvloop" else "asyncio"
    assert loop_kind() == expected
    loop = new_loop()
    try:
        assert ("uvloop" in type(loop).__module__) == (expected == "uvloop")
    finally:
        loop.close()
