"""The worker-to-pool channel: plain data only (a JSON header plus raw text/blob frames), never pickle.

What a snippet produced crosses into the server or the studio as bytes that
are parsed, not executed: a JSON header (built with `dump_json`, bound before
any snippet runs, so a patched `json` cannot change it) followed by each
content item's text or base64 blob as raw UTF-8/ASCII bytes. The pool side
validates every field and rejects anything else with `WireError`, so a
reply that does not decode fails that one call instead of the pool.
The pool-to-worker direction still uses pickle: the pool is the trusted side.
"""

from __future__ import annotations

import json
import struct
from typing import Any, get_args

from resources_qt.content import dump_json
from resources_qt.snippets.protocol import (
    CompleteDone,
    ContentTuple,
    Failed,
    NeedSource,
    Output,
    ReadDone,
    Ready,
    Reason,
    ValueDone,
)

__all__ = ["WireError", "WorkerMessage", "decode", "decode_tagged", "encode", "frame", "next_frame"]

WorkerMessage = Ready | Output | NeedSource | ReadDone | CompleteDone | ValueDone | Failed

_HEADER = 4
_REASONS = frozenset(get_args(Reason))
_STREAMS = frozenset({"stdout", "stderr"})
_str_encode = str.encode  # the base method: a str subclass from a snippet cannot override it
_from_bytes = int.from_bytes
_int_to_bytes = int.to_bytes
_join = b"".join
_SIZE = struct.Struct("!i")
_BIG_SIZE = struct.Struct("!Q")


class WireError(ValueError):
    """A worker message that is not what the protocol allows; the message names what is wrong."""


def frame(data: bytes) -> bytes:
    """`data` framed as multiprocessing's `Connection.send_bytes` writes it (`recv` on the other end reads it)."""
    if len(data) > 0x7FFFFFFF:
        return _SIZE.pack(-1) + _BIG_SIZE.pack(len(data)) + data
    return _SIZE.pack(len(data)) + data


def next_frame(buffer: bytearray) -> bytes | None:
    """Take the first whole message off `buffer` as multiprocessing frames it on a pipe; None while it is cut.

    Raises `WireError` for a length no sender writes (the pipe is out of step from there on).
    """
    if len(buffer) < 4:
        return None
    (size,) = _SIZE.unpack_from(buffer)
    if size < -1:
        raise WireError(f"a worker message claims {size} bytes")
    start = 4
    if size == -1:  # multiprocessing's framing of a message over 2 GiB
        if len(buffer) < 12:
            return None
        (size,) = _BIG_SIZE.unpack_from(buffer, 4)
        start = 12
    end = start + size
    if len(buffer) < end:
        return None
    frame = bytes(buffer[start:end])
    del buffer[:end]
    return frame


def encode(message: WorkerMessage, *, call_id: int | None = None) -> bytes:
    """Worker side: `message` as header length (4 bytes), JSON header, then the content frames.

    `call_id`: the `Tagged` call it answers (a worker running many calls at once), in the header as "i".
    """
    frames: list[bytes] = []
    header: dict[str, Any]
    if isinstance(message, ReadDone):
        items = []
        for uri, mime, text, blob, meta in message.contents:
            kind = "blob" if blob is not None else "text"
            data = _str_encode(blob if blob is not None else (text or ""), "utf-8", "surrogatepass")
            frames.append(data)
            items.append([uri, mime, kind, len(data), meta])
        header = {"t": "read", "c": items}
    elif isinstance(message, ValueDone):
        frames.append(_str_encode(message.text, "utf-8", "surrogatepass"))
        header = {"t": "value", "n": len(frames[0])}
    elif isinstance(message, Output):
        header = {"t": "out", "key": message.key, "stream": message.stream, "text": message.text}
    elif isinstance(message, CompleteDone):
        header = {"t": "done", "v": message.values}
    elif isinstance(message, Failed):
        header = {"t": "fail", "reason": message.reason, "message": message.message}
    elif isinstance(message, NeedSource):
        header = {"t": "need", "what": message.what}
    else:
        header = {"t": "ready", "pid": message.pid}
    if call_id is not None:
        header["i"] = call_id
    head = _str_encode(dump_json(header), "utf-8", "surrogatepass")
    return _join([_int_to_bytes(len(head), _HEADER, "big"), head, *frames])


def decode(data: bytes) -> WorkerMessage:
    """Pool side: parse one worker message; raises `WireError` naming the problem."""
    return decode_tagged(data)[1]


def decode_tagged(data: bytes) -> tuple[int | None, WorkerMessage]:
    """As `decode`, with the id of the `Tagged` call the message belongs to (None: untagged)."""
    if len(data) < _HEADER:
        raise WireError(f"a worker message of {len(data)} bytes is too short")
    size = _from_bytes(data[:_HEADER], "big")
    end = _HEADER + size
    if end > len(data):
        raise WireError(f"a worker message header of {size} bytes runs past the message")
    try:
        header = json.loads(data[_HEADER:end].decode("utf-8", "surrogatepass"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise WireError(f"a worker message header is not JSON: {exc}") from None
    if not isinstance(header, dict):
        raise WireError("a worker message header is not an object")
    tag = header.get("i")
    if tag is not None and (not isinstance(tag, int) or isinstance(tag, bool)):
        raise WireError("field 'i' must be an integer")
    return tag, _message(header, data, end)


def _message(header: dict[str, Any], data: bytes, end: int) -> WorkerMessage:
    kind = header.get("t")
    if kind == "read":
        return ReadDone(_contents(header.get("c"), data, end))
    if kind == "value":
        size = _field(header, "n", int)
        if size != len(data) - end:
            raise WireError(f"a value of {size} bytes arrived as {len(data) - end}")
        try:
            return ValueDone(data[end:].decode("utf-8", "surrogatepass"))
        except UnicodeDecodeError as exc:
            raise WireError(f"a value is not UTF-8: {exc}") from None
    if end != len(data):
        raise WireError(f"a {kind!r} worker message carries {len(data) - end} unexpected bytes")
    if kind == "out":
        stream = _field(header, "stream", str)
        if stream not in _STREAMS:
            raise WireError(f"unknown output stream {stream!r}")
        return Output(_field(header, "key", str), _field(header, "text", str), stream)
    if kind == "done":
        values = _field(header, "v", list)
        if not all(isinstance(v, str) for v in values):
            raise WireError("completion values must all be strings")
        return CompleteDone(values)
    if kind == "fail":
        reason = _field(header, "reason", str)
        if reason not in _REASONS:
            raise WireError(f"unknown failure reason {reason!r}")
        return Failed(reason, _field(header, "message", str))
    if kind == "need":
        what = _field(header, "what", str)
        if what not in ("snippet", "prelude"):
            raise WireError(f"unknown missing source {what!r}")
        return NeedSource(what)
    if kind == "ready":
        pid = header.get("pid")
        if not isinstance(pid, int) or isinstance(pid, bool):
            raise WireError("field 'pid' must be an integer")
        return Ready(pid)
    raise WireError(f"unknown worker message type {kind!r}")


def _field(header: dict[str, Any], name: str, kind: type) -> Any:
    value = header.get(name)
    if not isinstance(value, kind):
        raise WireError(f"field {name!r} must be a {kind.__name__}, not {type(value).__name__}")
    return value


def _contents(items: object, data: bytes, offset: int) -> list[ContentTuple]:
    if not isinstance(items, list):
        raise WireError("field 'c' must be a list")
    contents: list[ContentTuple] = []
    for index, item in enumerate(items):
        if not isinstance(item, list) or len(item) != 5:
            raise WireError(f"content {index} is not [uri, mime, kind, length, meta]")
        uri, mime, kind, length, meta = item
        if not isinstance(uri, str) or not isinstance(mime, str):
            raise WireError(f"content {index}: uri and mime type must be strings")
        if kind not in ("text", "blob") or not isinstance(length, int) or isinstance(length, bool) or length < 0:
            raise WireError(f"content {index}: bad kind {kind!r} or length {length!r}")
        if meta is not None and not isinstance(meta, dict):
            raise WireError(f"content {index}: meta must be an object")
        end = offset + length
        if end > len(data):
            raise WireError(f"content {index}: its {length} bytes run past the message")
        frame = data[offset:end]
        offset = end
        try:
            payload = frame.decode("ascii") if kind == "blob" else frame.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError as exc:
            raise WireError(f"content {index}: {exc}") from None
        text, blob = (None, payload) if kind == "blob" else (payload, None)
        contents.append((uri, mime, text, blob, meta))
    if offset != len(data):
        raise WireError(f"{len(data) - offset} bytes follow the last content frame")
    return contents

