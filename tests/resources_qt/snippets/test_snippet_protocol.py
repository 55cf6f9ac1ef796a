"""The calls the pool pickles for its workers: they round-trip whole, and leave out only the sources named."""

from __future__ import annotations

import pickle
from dataclasses import dataclass, fields

import pytest

from resources_qt.snippets.protocol import Call, CompleteCall, ReadCall, source_digest

SOURCE = "def read(uri, params):\n    return uri\n"
PRELUDE = "GREETING = 'hi'\n"


def _read_call() -> ReadCall:
    return ReadCall("k", source_digest(SOURCE), SOURCE, source_digest(PRELUDE), PRELUDE,
                    uri="x://a/é", params={"id": "42", "n": [1, 2]}, mime_type="text/plain")  # fmt: skip


def _complete_call() -> CompleteCall:
    return CompleteCall("k", source_digest(SOURCE), SOURCE, source_digest(PRELUDE), PRELUDE,
                        variable="id", value="4", context={"org": "acme"})  # fmt: skip


@pytest.mark.parametrize("call", [_read_call(), _complete_call()], ids=["read", "complete"])
def test_a_call_pickles_to_an_equal_call_of_its_own_class(call: Call) -> None:
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        copy = pickle.loads(pickle.dumps(call, protocol))
        assert type(copy) is type(call)
        assert copy == call


@pytest.mark.parametrize(("source", "prelude"), [(True, True), (True, False), (False, True), (False, False)])
def test_without_leaves_out_only_the_sources_named(source: bool, prelude: bool) -> None:
    call = _read_call()
    stripped = call.without(source=source, prelude=prelude)
    assert stripped.source == (None if source else SOURCE)
    assert stripped.prelude == (None if prelude else PRELUDE)
    kept = [f.name for f in fields(call) if f.name not in ("source", "prelude")]
    assert [getattr(stripped, n) for n in kept] == [getattr(call, n) for n in kept]
    assert call.source == SOURCE and call.prelude == PRELUDE  # the original is untouched


@dataclass(frozen=True, slots=True)
class _TaggedCall(ReadCall):
    tag: str = ""


def test_a_call_class_added_later_pickles_and_strips_too() -> None:
    call = _TaggedCall("k", "d", SOURCE, "p", PRELUDE, uri="x://b", tag="t")
    assert pickle.loads(pickle.dumps(call)) == call
    assert call.without(source=True, prelude=True) == _TaggedCall("k", "d", None, "p", None, uri="x://b", tag="t")
