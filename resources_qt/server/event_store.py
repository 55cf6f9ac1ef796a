"""A bounded in-memory SDK `EventStore` per session, so a dropped standalone stream resumes with `Last-Event-ID`."""

from __future__ import annotations

import itertools
import logging
import threading
from collections import OrderedDict, deque
from collections.abc import Callable

from mcp.server.streamable_http import GET_STREAM_KEY, EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCError, JSONRPCMessage, JSONRPCResponse, jsonrpc_message_adapter

__all__ = ["SESSION_BYTES", "SESSION_EVENTS_PER_STREAM", "SESSION_STREAMS", "BoundedEventStore"]

logger = logging.getLogger(__name__)

_MAX_DIGITS = 19
"""Digits of the longest event number this store mints (it counts up from 1 in a 64-bit range)."""

EVENTS_PER_STREAM = 100
"""Events kept per stream: enough for a client that reconnects within seconds."""

MAX_STREAMS = 10_000
"""Streams one store remembers at once; the least recently written is forgotten first."""

SESSION_STREAMS = 8
"""Streams a session's own store remembers: its standalone GET stream, plus request streams when requests
are answered as SSE (answered as JSON, a request has no stream to resume)."""

MAX_BYTES = 64 * 1024 * 1024
"""What one store keeps at most, counted as below."""

SESSION_EVENTS_PER_STREAM = 32
"""Events a session's store keeps per stream, within SESSION_BYTES."""

SESSION_BYTES = 16 * 1024
"""What a session's store keeps at most: each event counts its JSON plus EVENT_OVERHEAD. 32 short
notifications fit (~7 KB); of notifications with 8 KB URIs, the last one. Measured with
bench/event_store_bench.py at 10,000 sessions: 82 MB for 24-character URIs, 168 MB with the budget
full (400-character URIs); the SDK's message objects it kept before took 237 MB for short URIs."""

EVENT_OVERHEAD = 128
"""Bytes an event costs besides its JSON (its entry, number and bytes object), measured."""


class BoundedEventStore(EventStore):
    """Keeps the last `per_stream` events of at most `max_streams` streams, within `max_bytes`; replays them.

    `max_bytes` counts each event's JSON plus EVENT_OVERHEAD; past it the
    least recently written stream's oldest events go first, and an event
    bigger than the whole budget is not kept.

    An id is `<stream>/<n>`, so replay finds its stream without an index. An
    id that was forgotten (or never minted here) replays nothing, and the
    client simply gets the live stream: the SDK's behaviour for an unknown id.

    The SDK names a stream by the request id it answers (or `_GET_stream`),
    so ids are only unique within one session: every session gets a store of
    its own (`resources_qt.server.sdk_private.give_sessions_event_stores`),
    or one client could replay another's messages by naming them. Without
    `keep_responses` (requests answered as one JSON body), responses are not
    kept at all: nothing would ever replay them, and they can be megabytes.
    With `listening` (true while the session's standalone GET stream is open),
    that stream's events are kept only once one was written while it was
    open: a client resumes from an id it was sent, so before that nothing can
    be replayed, and a session that never listens would hold its notifications
    for nobody.
    """

    def __init__(
        self,
        *,
        per_stream: int = EVENTS_PER_STREAM,
        max_streams: int = MAX_STREAMS,
        max_bytes: int = MAX_BYTES,
        keep_responses: bool = True,
        listening: Callable[[], bool] | None = None,
    ) -> None:
        if per_stream < 1 or max_streams < 1 or max_bytes < 1:
            raise ValueError("per_stream, max_streams and max_bytes must be at least 1")
        self._per_stream = per_stream
        self._max_streams = max_streams
        self._max_bytes = max_bytes
        self._bytes = 0
        self._keep_responses = keep_responses
        self._listening = listening
        self._listened = listening is None
        # Kept as the JSON they are sent as: a quarter of the SDK's message objects, and exactly countable.
        self._streams: OrderedDict[StreamId, deque[tuple[int, bytes | None]]] = OrderedDict()
        self._counter = itertools.count(1)
        self._lock = threading.Lock()

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        number = next(self._counter)
        if not self._keep_responses and isinstance(message, JSONRPCResponse | JSONRPCError):
            return f"{stream_id}/{number}"  # it went out as a JSON body; the id names nothing to replay
        if not self._listened and stream_id == GET_STREAM_KEY:
            if self._listening is not None and not self._listening():
                return f"{stream_id}/{number}"  # nobody was ever sent an id of this stream
            self._listened = True
        data = None if message is None else message.model_dump_json(by_alias=True, exclude_unset=True).encode()
        if _cost(data) > self._max_bytes:
            return f"{stream_id}/{number}"  # too big to keep: a replay skips it, as it skips what was forgotten
        with self._lock:
            events = self._streams.get(stream_id)
            if events is None:
                events = self._streams[stream_id] = deque()
                while len(self._streams) > self._max_streams:
                    _, gone = self._streams.popitem(last=False)
                    self._bytes -= sum(_cost(d) for _, d in gone)
            else:
                self._streams.move_to_end(stream_id)
            if len(events) >= self._per_stream:
                self._bytes -= _cost(events.popleft()[1])
            events.append((number, data))
            self._bytes += _cost(data)
            while self._bytes > self._max_bytes:
                # The least recently written stream gives up its oldest event first (this one's last of all).
                oldest_id, oldest = next(iter(self._streams.items()))
                self._bytes -= _cost(oldest.popleft()[1])
                if not oldest:
                    del self._streams[oldest_id]
        return f"{stream_id}/{number}"

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        stream_id, _, number_text = last_event_id.rpartition("/")
        # ASCII digits only, and few: `str.isdigit` accepts "²", and int() refuses 4,300 digits and more.
        if not stream_id or not (number_text.isascii() and number_text.isdigit()) or len(number_text) > _MAX_DIGITS:
            logger.debug("Last-Event-ID %r names no event of this store; nothing to replay", last_event_id[:80])
            return None
        after = int(number_text)
        with self._lock:
            events = self._streams.get(stream_id)
            later = [(n, m) for n, m in events if n > after] if events is not None else None
        if later is None:
            return None
        for number, data in later:
            if data is not None:  # priming events carry no message
                message: JSONRPCMessage = jsonrpc_message_adapter.validate_json(data)
                await send_callback(EventMessage(message, f"{stream_id}/{number}"))
        return stream_id

    def stream_count(self) -> int:
        with self._lock:
            return len(self._streams)

    def event_count(self) -> int:
        with self._lock:
            return sum(len(events) for events in self._streams.values())

    def byte_count(self) -> int:
        """What the kept events cost, as counted against `max_bytes`."""
        with self._lock:
            return self._bytes


def _cost(data: bytes | None) -> int:
    return EVENT_OVERHEAD + (len(data) if data is not None else 0)
