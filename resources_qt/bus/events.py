"""Typed bus events and their wire codec: what replicas tell each other, never JSON-RPC."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass

from resources_qt.notifications import ListChanged, Updated

__all__ = [
    "FORMAT",
    "MAX_MESSAGE_BYTES",
    "MAX_URI_LENGTH",
    "BusEvent",
    "BusMessageError",
    "Envelope",
    "ListChanged",
    "Updated",
    "decode",
    "encode",
    "new_origin",
    "validate_key",
    "validate_session_id",
    "validate_uri",
]

FORMAT = "resource-studio.bus/1"
# A message is a few hundred bytes; anything far larger is not ours and is refused unparsed.
MAX_MESSAGE_BYTES = 16 * 1024
MAX_URI_LENGTH = 8192
_MAX_SESSION_LENGTH = 256
_ORIGIN = re.compile(r"[A-Za-z0-9._:-]{1,64}")
_KEY = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_CONTROL = re.compile(r"[\x00-\x20\x7f]")


class BusMessageError(ValueError):
    """A message on the channel that is not a valid event; `field` names the part at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


BusEvent = ListChanged | Updated
"""What travels on the channel: a notification value; an `Updated` for one session carries its session in the
envelope (the event itself has none on the wire)."""


@dataclass(frozen=True)
class Envelope:
    """An event as it travels: who published it, the one session it is for (None: everyone).

    `key` names the change behind the event when several replicas may raise
    the same one independently (each reloading a shared project file): a
    replica delivers a given key once, whoever raised it first.
    """

    event: BusEvent
    origin: str
    session_id: str | None = None
    key: str | None = None


def new_origin(prefix: str = "replica") -> str:
    """A fresh replica id; each process (each server run) takes its own."""
    return f"{prefix}-{uuid.uuid4().hex[:16]}"


def validate_uri(uri: object, field: str = "uri") -> str:
    if not isinstance(uri, str) or not uri:
        raise BusMessageError(field, "must be a non-empty string")
    if len(uri) > MAX_URI_LENGTH:
        raise BusMessageError(field, f"is longer than {MAX_URI_LENGTH} characters")
    if _CONTROL.search(uri):
        raise BusMessageError(field, "must not contain spaces or control characters")
    return uri


def validate_session_id(session_id: object, field: str = "session") -> str:
    if not isinstance(session_id, str) or not session_id:
        raise BusMessageError(field, "must be a non-empty string")
    if len(session_id) > _MAX_SESSION_LENGTH or _CONTROL.search(session_id):
        raise BusMessageError(field, f"must be at most {_MAX_SESSION_LENGTH} printable characters")
    return session_id


def validate_key(key: object, field: str = "key") -> str:
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise BusMessageError(field, "must be 1-128 characters of letters, digits and ._:-")
    return key


def _validate_origin(origin: object) -> str:
    if not isinstance(origin, str) or not _ORIGIN.fullmatch(origin):
        raise BusMessageError("origin", "must be 1-64 characters of letters, digits and ._:-")
    return origin


def encode(envelope: Envelope) -> bytes:
    """The JSON wire form; validates the envelope first, so a bad one never reaches the channel."""
    _validate_origin(envelope.origin)
    body: dict[str, object] = {"format": FORMAT, "origin": envelope.origin}
    if isinstance(envelope.event, Updated):
        body["kind"] = "updated"
        body["uri"] = validate_uri(envelope.event.uri)
    elif isinstance(envelope.event, ListChanged):
        body["kind"] = "list_changed"
    else:
        raise BusMessageError("event", f"unknown event type {type(envelope.event).__name__}")
    if envelope.session_id is not None:
        body["session"] = validate_session_id(envelope.session_id)
    if envelope.key is not None:
        body["key"] = validate_key(envelope.key)
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def decode(data: bytes | str) -> Envelope:
    """Parse one message; raises BusMessageError for anything that is not a well-formed event of ours."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if len(raw) > MAX_MESSAGE_BYTES:
        raise BusMessageError("message", f"is larger than {MAX_MESSAGE_BYTES} bytes")
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        raise BusMessageError("message", "is not JSON") from None
    if not isinstance(body, dict):
        raise BusMessageError("message", "is not a JSON object")
    if body.get("format") != FORMAT:
        raise BusMessageError("format", f"is {body.get('format')!r}, not {FORMAT!r}")
    origin = _validate_origin(body.get("origin"))
    kind = body.get("kind")
    allowed = {"format", "origin", "kind", "session", "key"}
    event: BusEvent
    if kind == "updated":
        event = Updated(validate_uri(body.get("uri")))
        allowed.add("uri")
    elif kind == "list_changed":
        event = ListChanged()
    else:
        raise BusMessageError("kind", f"is {kind!r}, not 'updated' or 'list_changed'")
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise BusMessageError(unknown[0], "is not a known key")
    session = body.get("session")
    if session is not None:
        session = validate_session_id(session)
        if kind != "updated":
            raise BusMessageError("session", "only an 'updated' event can be for one session")
    key = body.get("key")
    if key is not None:
        key = validate_key(key)
    return Envelope(event=event, origin=origin, session_id=session, key=key)
