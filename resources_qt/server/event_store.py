"""A bounded in-memory SDK `EventStore`, so a dropped standalone stream resumes with `Last-Event-ID`."""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict, deque

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage

__all__ = ["BoundedEventStore"]

EVENTS_PER_STREAM = 100
"""Events kept per stream: enough for a client that reconnects within seconds."""

MAX_STREAMS = 10_000
"""Streams remembered at once; the least recently written is forgotten first (a client can open many)."""


class BoundedEventStore(EventStore):
    """Keeps the last `per_stream` events of at most `max_streams` streams; replays a stream after an id.

    An id is `<stream>/<n>`, so replay finds its stream without an index. An
    id that was forgotten (or never minted here) replays nothing, and the
    client simply gets the live stream: the SDK's behaviour for an unknown id.
    """

    def __init__(self, *, per_stream: int = EVENTS_PER_STREAM, max_streams: int = MAX_STREAMS) -> None:
        if per_stream < 1 or max_streams < 1:
            raise ValueError("per_stream and max_streams must be at least 1")
        self._per_stream = per_stream
        self._max_streams = max_streams
        self._streams: OrderedDict[StreamId, deque[tuple[int, JSONRPCMessage | None]]] = OrderedDict()
        self._counter = itertools.count(1)
        self._lock = threading.Lock()

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        number = next(self._counter)
        with self._lock:
            events = self._streams.get(stream_id)
            if events is None:
                events = self._streams[stream_id] = deque(maxlen=self._per_stream)
                while len(self._streams) > self._max_streams:
                    self._streams.popitem(last=False)
            else:
                self._streams.move_to_end(stream_id)
            events.append((number, message))
        return f"{stream_id}/{number}"

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        stream_id, _, number_text = last_event_id.rpartition("/")
        if not stream_id or not number_text.isdigit():
            return None
        after = int(number_text)
        with self._lock:
            events = self._streams.get(stream_id)
            later = [(n, m) for n, m in events if n > after] if events is not None else None
        if later is None:
            return None
        for number, message in later:
            if message is not None:  # priming events carry no message
                await send_callback(EventMessage(message, f"{stream_id}/{number}"))
        return stream_id

    def stream_count(self) -> int:
        with self._lock:
            return len(self._streams)
