"""The worker-to-pool wire: tagged messages and multiprocessing's framing, parsed without trusting the worker."""

from __future__ import annotations

import pytest

from resources_qt.snippets import wire
from resources_qt.snippets.protocol import Failed, Output, ReadDone


def test_a_tagged_answer_names_its_call_and_an_untagged_one_none() -> None:
    read = ReadDone([("t://1", "text/plain", "hello", None, None)])
    assert wire.decode_tagged(wire.encode(read, call_id=7)) == (7, read)
    out = Output("k", "printed\n", "stderr")
    assert wire.decode_tagged(wire.encode(out)) == (None, out)
    assert wire.decode(wire.encode(Failed("timeout", "late"), call_id=3)) == Failed("timeout", "late")


def test_a_tag_that_is_not_an_integer_is_refused() -> None:
    head = b'{"t":"fail","reason":"raised","message":"x","i":true}'
    data = len(head).to_bytes(4, "big") + head
    with pytest.raises(wire.WireError, match="field 'i' must be an integer"):
        wire.decode_tagged(data)


def test_frames_come_off_the_buffer_whole_and_a_cut_one_waits() -> None:
    first, second = wire.encode(Output("k", "a")), wire.encode(Output("k", "b"))
    buffer = bytearray(wire.frame(first) + wire.frame(second)[:5])
    assert wire.next_frame(buffer) == first
    assert wire.next_frame(buffer) is None  # the second is cut: its bytes stay
    buffer.extend(wire.frame(second)[5:])
    assert wire.next_frame(buffer) == second and not buffer


def test_a_length_no_sender_writes_is_refused() -> None:
    buffer = bytearray((-5).to_bytes(4, "big", signed=True) + b"rest")
    with pytest.raises(wire.WireError, match="claims -5 bytes"):
        wire.next_frame(buffer)
