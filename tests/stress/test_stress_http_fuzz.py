"""Fuzzing the HTTP endpoint: every answer is a JSON-RPC error or a 4xx; never a 5xx, a hang or a dead server."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stress_support import scaled

from resources_qt.collection import Resources
from resources_qt.server import ResourceServer

pytestmark = pytest.mark.stress

PROTOCOL = "2025-11-25"
BODY_LIMIT = 256 * 1024
TIMEOUT = httpx.Timeout(10.0)  # an answer slower than this counts as a hang
KNOWN_METHODS = [
    "initialize", "ping", "resources/list", "resources/templates/list", "resources/read", "resources/subscribe",
    "resources/unsubscribe", "completion/complete", "tools/list", "tools/call", "prompts/list", "logging/setLevel",
    "notifications/initialized", "notifications/cancelled", "server/discover",
]
# subscriptions/listen is left out on purpose: a valid one is a long-lived stream, not a hang.

_LINES = re.compile(r"\r\n|\r|\n")  # SSE line ends only; str.splitlines also splits on U+0085 etc.


def _reader(uri: str, params: Any) -> str:
    return f"read {uri} {params!r}"


def _boom(uri: str, params: Any) -> str:
    raise RuntimeError("reader exploded")


class Target:
    """A live server and one initialized session on it."""

    def __init__(self, server: ResourceServer, http: httpx.Client, session_id: str) -> None:
        self.server = server
        self.http = http
        self.session_id = session_id
        self.url = server.url or ""
        self.sent = 0

    def post(self, content: bytes, headers: Mapping[str, str | bytes]) -> httpx.Response:
        self.sent += 1
        return self.http.post(self.url, content=content, headers=headers)

    def healthy(self) -> bool:
        body = {"jsonrpc": "2.0", "id": "health", "method": "resources/read", "params": {"uri": "docs://readme"}}
        response = self.post(json.dumps(body).encode(), self.headers())
        return response.status_code == 200 and "read docs://readme" in response.text

    def headers(self, **changes: str | None) -> dict[str, str]:
        headers: dict[str, str | None] = {
            "accept": "application/json, text/event-stream", "content-type": "application/json",
            "mcp-protocol-version": PROTOCOL, "mcp-session-id": self.session_id,
        }
        headers.update(changes)
        return {k: v for k, v in headers.items() if v is not None}


@pytest.fixture(scope="module")
def target() -> Iterator[Target]:
    resources = Resources()
    resources.register_direct_resource("readme", "docs://readme", "", "text/plain", _reader)
    resources.register_direct_resource("boom", "docs://boom", "", "text/plain", _boom)
    resources.register_template_resource("item", "items://{id}", "", "text/plain", _reader)
    resources.register_template_resource("file", "file:///{+path}", "", "text/plain", _reader)
    server = ResourceServer(resources, name="fuzz", version="1", max_request_body_size=BODY_LIMIT,
                            session_idle_timeout=30.0)
    server.enable_resource_subscriptions = server.enable_resource_notifications = True
    server.start_http("127.0.0.1", 0)
    with httpx.Client(timeout=TIMEOUT) as http:
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                           "clientInfo": {"name": "fuzz", "version": "1"}}}
        response = http.post(server.url or "", json=init, headers={"accept": "application/json, text/event-stream",
                                                                     "mcp-protocol-version": PROTOCOL})
        session_id = response.headers["mcp-session-id"]
        http.post(server.url or "", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                  headers={"accept": "application/json, text/event-stream", "mcp-session-id": session_id,
                           "mcp-protocol-version": PROTOCOL})
        yield Target(server, http, session_id)
    server.close()


def _messages(response: httpx.Response) -> list[Any]:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return [json.loads(line[5:]) for line in _LINES.split(response.text)
                if line.startswith("data:") and line[5:].strip()]
    return [response.json()] if response.content else []


def _check(target: Target, content: bytes, headers: Mapping[str, str | bytes]) -> None:
    try:
        response = target.post(content, headers)
    except httpx.TimeoutException as exc:
        raise AssertionError(f"no answer within {TIMEOUT.read} s to {content[:200]!r}") from exc
    assert response.status_code < 500, f"{response.status_code} for {content[:200]!r}: {response.text[:300]}"
    if response.status_code == 200:
        for message in _messages(response):
            items = message if isinstance(message, list) else [message]
            for item in items:
                assert isinstance(item, dict) and item.get("jsonrpc") == "2.0", item
                if "id" in item:
                    assert ("result" in item) != ("error" in item), item
                    if "error" in item:
                        assert isinstance(item["error"].get("code"), int), item
    if target.sent % 25 == 0:
        assert target.healthy(), "the server stopped answering good requests"


FUZZ = settings(max_examples=scaled(80, 1500), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
_bad_uris = st.one_of(
    st.text(max_size=60),
    st.sampled_from(["", " ", "docs://", "items://", "items://%", "items://%zz", "items://a/b", "file:///../../etc/passwd",
                     "file:///%00", "x" * 5000, "items://{id}", "{", "}", "items://\u0000", "\ud800", "docs://boom",
                     "http://[::1", "file:///" + "/" * 300, "items://" + "é" * 100]),
    st.builds(lambda a, b: f"{a}://{b}", st.text(max_size=10), st.text(max_size=30)),
)
_params = st.one_of(
    _json,
    st.fixed_dictionaries({"uri": _bad_uris | _json}),
    st.fixed_dictionaries({"ref": st.fixed_dictionaries({"type": st.sampled_from(["ref/resource", "ref/prompt", "x"]),
                                                         "uri": _bad_uris}),
                           "argument": st.fixed_dictionaries({"name": st.text(max_size=10),
                                                              "value": st.text(max_size=10) | _json})}),
    st.fixed_dictionaries({"cursor": st.text(max_size=40) | _json}),
)
_rpc = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", "", 2.0]) | _json,
        "id": st.integers(-(2**64), 2**64) | st.text(max_size=20) | st.none() | st.floats() | _json,
        "method": st.sampled_from(KNOWN_METHODS) | st.text(max_size=30) | _json,
        "params": _params,
    },
)


@FUZZ
@given(body=st.binary(max_size=2000))
def test_malformed_bytes(target: Target, body: bytes) -> None:
    _check(target, body, target.headers())


@FUZZ
@given(value=_json)
def test_any_json_value(target: Target, value: Any) -> None:
    _check(target, json.dumps(value).encode(), target.headers())


@FUZZ
@given(message=_rpc, batch=st.booleans())
def test_wrong_jsonrpc_shapes(target: Target, message: dict[str, Any], batch: bool) -> None:
    payload: Any = [message, message] if batch else message
    _check(target, json.dumps(payload, allow_nan=True).encode(), target.headers())


@FUZZ
@given(method=st.sampled_from(["resources/read", "resources/subscribe", "resources/unsubscribe"]), uri=_bad_uris,
       rid=st.integers(1, 10**6))
def test_invalid_uris(target: Target, method: str, uri: str, rid: int) -> None:
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {"uri": uri}}
    _check(target, json.dumps(body).encode("utf-8", "surrogatepass"), target.headers())


@FUZZ
@given(
    session=st.sampled_from(["valid", "missing", "garbage"]),
    version=st.sampled_from([PROTOCOL, "2026-07-28", "1999-01-01", "", "garbage\u00e9"]),
    accept=st.sampled_from(["application/json, text/event-stream", "application/json", "text/html", "*/*", ""]),
    ctype=st.sampled_from(["application/json", "text/plain", "application/json; charset=latin-1", ""]),
    message=_rpc,
)
def test_header_variations(target: Target, session: str, version: str, accept: str, ctype: str,
                           message: dict[str, Any]) -> None:
    sid = {"valid": target.session_id, "missing": None, "garbage": "not-a-session"}[session]
    headers = target.headers(**{"mcp-session-id": sid, "mcp-protocol-version": version or None,
                                "accept": accept or None, "content-type": ctype or None})
    raw = {k: v.encode("latin-1") for k, v in headers.items()}  # non-ASCII header bytes go out as they are
    _check(target, json.dumps(message).encode(), raw)


@pytest.mark.parametrize("size", [BODY_LIMIT - 1024, BODY_LIMIT + 1, 8 * BODY_LIMIT])
def test_huge_bodies(target: Target, size: int) -> None:
    filler = "x" * size
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": f"items://{filler}"}})
    _check(target, body.encode(), target.headers())
    _check(target, b"[" * size, target.headers())  # deeply nested garbage
    assert target.healthy()


def test_unknown_methods_answer_method_not_found(target: Target) -> None:
    for method in ["nope", "resources/delete", "tools/call", "../../etc", "resources/read/extra"]:
        body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": method, "params": {}}).encode()
        response = target.post(body, target.headers())
        assert response.status_code < 500
        errors = [m["error"] for m in _messages(response) if "error" in m]
        assert errors and errors[0]["code"] in (-32601, -32602), (method, response.text[:300])
    assert target.healthy()
