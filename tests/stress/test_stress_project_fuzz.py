"""Fuzzing the project loader and writer: broken TOML, wrong shapes and key bombs give a ProjectError, never
another exception; whatever loads is written back byte for byte, and edited, loads back as the model."""

from __future__ import annotations

import string
import tracemalloc
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stress_support import scaled

from resources_qt.project import Project, ProjectError, dumps_project, loads_project

pytestmark = pytest.mark.stress

VALID = '''format = 1
prelude = """
import json
"""

[server]
name = "Fuzz"
notifications = true
page_size = 50

[[resources]]
name = "readme"
uri = "docs://readme"
mime_type = "text/plain"
reader = """
def read(uri, params):
    return "hello"
"""

[[resources]]
name = "item"
uri_template = "items://{id}"
samples = ["items://1"]
completions = { id = ["1", "2"] }
annotations = { audience = ["user"], priority = 0.5 }
icons = [{ src = "data:image/png;base64,AA==", mime_type = "image/png", sizes = ["16x16"] }]
cache = { ttl_ms = 1000, scope = "public" }
reader = """
def read(uri, params):
    return params["id"]
"""
'''

FUZZ = settings(
    max_examples=scaled(150, 1500),
    deadline=2000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _load(text: str) -> None:
    try:
        result = loads_project(text, source="fuzz.toml")
    except ProjectError as exc:
        assert exc.message, "a ProjectError must say what is wrong"
        assert "fuzz.toml" in exc.message, "a ProjectError must name the file"
        return
    assert isinstance(result, Project)
    # Whatever loads is written back unchanged, and an edit loads back as the model.
    assert dumps_project(result) == text
    result.prelude += "EDITED = 1\n"
    result.server.name = "edited"
    if result.resources:
        result.resources[-1].title = "edited"
    assert loads_project(dumps_project(result), strict=False) == result


def test_valid_seed_loads() -> None:
    project = loads_project(VALID)
    assert [spec.name for spec in project.resources] == ["readme", "item"]


@FUZZ
@given(st.text(max_size=400))
def test_random_text(text: str) -> None:
    _load(text)


@FUZZ
@given(st.data())
def test_mutated_valid_project(data: st.DataObject) -> None:
    text = VALID
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        pos = data.draw(st.integers(0, len(text)), label="pos")
        kind = data.draw(st.sampled_from(["delete", "insert", "truncate", "duplicate"]), label="kind")
        if kind == "delete":
            span = data.draw(st.integers(1, 20), label="span")
            text = text[:pos] + text[pos + span :]
        elif kind == "insert":
            chunk = data.draw(st.text(alphabet=string.printable + "{}[]\"'=#\\é\x00", max_size=12), label="chunk")
            text = text[:pos] + chunk + text[pos:]
        elif kind == "truncate":
            text = text[:pos]
        else:
            end = min(len(text), pos + data.draw(st.integers(1, 80), label="len"))
            text = text[:end] + text[pos:end] + text[end:]
    _load(text)


_SCALARS = st.one_of(
    st.none().map(lambda _: ""),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["items://{id}", "{", "x://{a}{b}", "docs://readme", "", " ", "items://{+id*}", "text/plain"]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
_SERVER_KEYS = ["name", "version", "instructions", "notifications", "subscriptions", "reader_timeout", "workers",
                "memory_limit_mb", "page_size", "cache_ttl_ms", "cache_scope", "max_queued_reads",
                "resource_concurrency", "max_processes", "max_file_size_mb", "max_subscriptions", "max_uri_length",
                "max_sessions", "session_idle_timeout", "mask_errors", "bogus"]
_RESOURCE_KEYS = ["name", "title", "description", "uri", "uri_template", "mime_type", "size", "icons",
                  "annotations", "samples", "completions", "complete", "cache", "unchecked_values", "reader",
                  "bogus"]
_TEST_KEYS = ["name", "uri", "expect", "bogus"]


def _table(keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(keys), _VALUES, max_size=6)


@FUZZ
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "format": _VALUES,
            "prelude": _VALUES,
            "server": _table(_SERVER_KEYS) | _VALUES,
            "resources": st.lists(_table(_RESOURCE_KEYS) | _VALUES, max_size=4) | _VALUES,
            "tests": st.lists(_table(_TEST_KEYS) | _VALUES, max_size=3) | _VALUES,
            "extra": _VALUES,
        },
    )
)
def test_wrong_shapes(document: dict[str, Any]) -> None:
    try:
        text = tomli_w.dumps(document)
    except (TypeError, ValueError):
        return  # not expressible as TOML (e.g. None inside an array); nothing to feed the loader
    _load(text)


_BOMB_PARTS = scaled(20_000, 100_000)


@FUZZ
@given(
    st.sampled_from(["key", "header", "array-header", "nested-array", "nested-table", "quoted"]),
    st.sampled_from(["", "[server]\n", "[[resources]]\n", "prelude = 'x'\n"]),
)
def test_key_bombs_are_refused_with_bounded_memory(shape: str, before: str) -> None:
    dotted = ".".join(["a"] * _BOMB_PARTS)
    bomb = {
        "key": f"{dotted} = 1",
        "header": f"[{dotted}]",
        "array-header": f"[[{dotted}]]",
        "nested-array": "x = " + "[" * _BOMB_PARTS + "]" * _BOMB_PARTS,
        "nested-table": "x = " + "{ a = " * _BOMB_PARTS + "1" + " }" * _BOMB_PARTS,
        "quoted": ".".join(['"a"'] * _BOMB_PARTS) + " = 1",
    }[shape]
    tracemalloc.start()
    try:
        with pytest.raises(ProjectError, match=r"refused before parsing|lines may be at most"):
            loads_project(f"format = 1\n{before}{bomb}\n", source="bomb.toml")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024 * 1024, peak
