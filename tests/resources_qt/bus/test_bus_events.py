"""The bus codec: round trips, and every malformed or foreign message refused with the field named."""

from __future__ import annotations

import json

import pytest

from resources_qt.bus.events import (
    FORMAT,
    MAX_MESSAGE_BYTES,
    BusMessageError,
    Envelope,
    ListChanged,
    Updated,
    decode,
    encode,
    new_origin,
)


@pytest.mark.parametrize(
    "envelope",
    [
        Envelope(ListChanged(), "replica-1"),
        Envelope(Updated("crm://customers/42/profile"), "replica-1"),
        Envelope(Updated("file:///tmp/caf%C3%A9?q=1"), "notify-abc", session_id="4f2a9c"),
        Envelope(Updated("demo://ünïcode"), new_origin()),
        Envelope(ListChanged(), "replica-2", key="reload:3f9a0c:list"),
    ],
)
def test_envelopes_round_trip(envelope: Envelope) -> None:
    data = encode(envelope)
    assert decode(data) == envelope
    assert decode(data.decode("utf-8")) == envelope
    assert json.loads(data)["format"] == FORMAT


def _message(**overrides: object) -> bytes:
    body: dict[str, object] = {"format": FORMAT, "origin": "replica-1", "kind": "updated", "uri": "demo://x"}
    body.update(overrides)
    return json.dumps({k: v for k, v in body.items() if v is not None}).encode()


@pytest.mark.parametrize(
    ("data", "field"),
    [
        (b"\xff\xfe not utf-8", "message"),
        (b"hello", "message"),
        (b"[1, 2]", "message"),
        (b'{"jsonrpc": "2.0", "method": "notifications/resources/updated"}', "format"),
        (_message(format="resource-studio.bus/99"), "format"),
        (_message(origin=None), "origin"),
        (_message(origin="has space"), "origin"),
        (_message(origin="x" * 65), "origin"),
        (_message(kind="deleted"), "kind"),
        (_message(uri=None), "uri"),
        (_message(uri=""), "uri"),
        (_message(uri=42), "uri"),
        (_message(uri="demo://a b"), "uri"),
        (_message(uri="demo://" + "a" * 8200), "uri"),
        (_message(session=""), "session"),
        (_message(session="s\x00"), "session"),
        (_message(kind="list_changed", uri=None, session="abc"), "session"),
        (_message(extra=1), "extra"),
        (_message(key=""), "key"),
        (_message(key="with space"), "key"),
        (_message(key="k" * 129), "key"),
        (b"{" + b" " * MAX_MESSAGE_BYTES + b"}", "message"),
    ],
)
def test_malformed_messages_name_the_field(data: bytes, field: str) -> None:
    with pytest.raises(BusMessageError) as caught:
        decode(data)
    assert caught.value.field == field
    assert str(caught.value).startswith(f"{field}: ")


def test_encode_refuses_what_decode_would_refuse() -> None:
    with pytest.raises(BusMessageError, match="origin"):
        encode(Envelope(ListChanged(), "bad origin"))
    with pytest.raises(BusMessageError, match="uri"):
        encode(Envelope(Updated(""), "replica-1"))
    with pytest.raises(BusMessageError, match="session"):
        encode(Envelope(Updated("demo://x"), "replica-1", session_id="line\nbreak"))


def test_origins_are_unique_and_valid() -> None:
    origins = {new_origin() for _ in range(100)}
    assert len(origins) == 100
    for origin in origins:
        assert decode(encode(Envelope(ListChanged(), origin))).origin == origin
