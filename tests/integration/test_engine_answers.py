"""How the HTTP transport answers: one JSON body per plain request, streams only where notifications flow."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import queue
import threading
import time
from collections.abc import Callable, Iterator

import httpx
import mcp_types as types
import pytest

from resources_qt.notifications import ListChanged
from resources_qt.server import ResourceServer
from resources_qt.server.event_store import SESSION_BYTES, SESSION_EVENTS_PER_STREAM, BoundedEventStore
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


class _StreamReader:
    """Reads an SSE stream's lines on a thread, so the test can keep sending until something arrives."""

    def __init__(self, lines: Iterator[str]) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, args=(lines,), daemon=True).start()

    def _pump(self, lines: Iterator[str]) -> None:
        with contextlib.suppress(httpx.HTTPError):
            for line in lines:
                self.lines.put(line)

    def next_matching(self, prefix: str, *, poke: Callable[[], None], timeout: float = 10.0) -> str:
        """The next line starting with `prefix`, calling `poke` (e.g. send a notification) while waiting."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            poke()
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                continue
            while True:
                if line.startswith(prefix):
                    return line
                try:
                    line = self.lines.get_nowait()
                except queue.Empty:
                    break
        raise AssertionError(f"no {prefix!r} line within {timeout} s")


def test_a_dropped_get_stream_resumes_with_last_event_id(live_server: ResourceServer) -> None:
    assert live_server.url is not None

    def list_changed() -> None:
        asyncio.run(live_server.notify(ListChanged()))

    with httpx.Client(timeout=10.0) as http:
        session = _initialize(http, live_server.url)
        headers = {**HEADERS, "accept": "text/event-stream", "mcp-session-id": session}
        with http.stream("GET", live_server.url, headers=headers) as stream:
            assert stream.status_code == 200
            last = _StreamReader(stream.iter_lines()).next_matching("id:", poke=list_changed)[3:].strip()
        list_changed()  # sent while the client is away: kept by the event store for its stream
        with http.stream("GET", live_server.url, headers={**headers, "last-event-id": last}) as stream:
            assert stream.status_code == 200
            replayed = _StreamReader(stream.iter_lines()).next_matching("data:", poke=lambda: None)
    assert "notifications/resources/list_changed" in replayed


async def _replay_after_five(store: BoundedEventStore, *, others: tuple[str, ...] = ()) -> tuple[list[str], str | None]:
    """Write five events on stream "a" (then open `others`), replay after a's first: (methods, stream)."""
    first = await store.store_event("a", None)
    for n in range(5):
        await store.store_event("a", types.JSONRPCNotification(jsonrpc="2.0", method=f"m{n}"))
    for stream in others:
        await store.store_event(stream, None)
    got: list[str] = []

    async def collect(event: object) -> None:
        got.append(event.message.method)  # type: ignore[attr-defined]

    return got, await store.replay_events_after(first, collect)


def test_the_event_store_is_bounded_per_stream_and_in_streams() -> None:
    got, stream = asyncio.run(_replay_after_five(BoundedEventStore(per_stream=3, max_streams=5)))
    assert stream == "a"
    assert got == ["m2", "m3", "m4"]  # only the last three were kept
    store = BoundedEventStore(per_stream=3, max_streams=2)
    got, forgotten = asyncio.run(_replay_after_five(store, others=("b", "c")))  # "a" is the least recently written
    assert forgotten is None and got == [] and store.stream_count() == 2


def test_a_session_store_keeps_what_fits_its_byte_budget_whatever_the_uris_length() -> None:
    async def fill(uri_length: int) -> tuple[BoundedEventStore, list[str]]:
        store = BoundedEventStore(per_stream=SESSION_EVENTS_PER_STREAM, max_streams=8, max_bytes=SESSION_BYTES)
        first = await store.store_event("_GET_stream", None)
        for n in range(40):
            uri = f"x://{n}/" + "y" * uri_length
            await store.store_event("_GET_stream", types.JSONRPCNotification(
                jsonrpc="2.0", method="notifications/resources/updated", params={"uri": uri}))
        replayed: list[str] = []

        async def collect(event: object) -> None:
            replayed.append(event.message.params["uri"].split("/")[2])  # type: ignore[attr-defined]

        assert await store.replay_events_after(first, collect) == "_GET_stream"
        return store, replayed

    short, replayed = asyncio.run(fill(8))
    assert replayed == [str(n) for n in range(8, 40)]  # the last 32, as sent
    long, replayed = asyncio.run(fill(8000))
    assert long.byte_count() <= SESSION_BYTES and replayed == ["39"]  # 16 KB hold one 8 KB notification
    assert short.byte_count() <= SESSION_BYTES


def test_the_event_store_keeps_no_responses_when_requests_are_answered_as_json() -> None:
    async def store_three(store: BoundedEventStore) -> int:
        await store.store_event("7", types.JSONRPCResponse(jsonrpc="2.0", id=7, result={"big": "x" * 10_000}))
        failed = types.JSONRPCError(jsonrpc="2.0", id=8, error=types.ErrorData(code=1, message="m"))
        await store.store_event("8", failed)
        await store.store_event("_GET_stream", types.JSONRPCNotification(jsonrpc="2.0", method="m"))
        return store.event_count()

    assert asyncio.run(store_three(BoundedEventStore(keep_responses=False))) == 1  # the notification only
    assert asyncio.run(store_three(BoundedEventStore())) == 3


def test_a_session_store_keeps_its_standalone_stream_only_once_it_was_open() -> None:
    listening = [False]

    async def notify(store: BoundedEventStore, count: int) -> None:
        for n in range(count):
            await store.store_event("_GET_stream", types.JSONRPCNotification(jsonrpc="2.0", method=f"m{n}"))

    store = BoundedEventStore(listening=lambda: listening[0])
    asyncio.run(notify(store, 5))
    assert store.event_count() == 0  # nobody was ever sent an id to resume from
    listening[0] = True
    asyncio.run(notify(store, 1))
    listening[0] = False  # the client dropped its stream: what follows is kept for its return
    asyncio.run(notify(store, 2))
    assert store.event_count() == 3
