"""Fuzzing the project loader: broken TOML and wrong shapes give a ProjectError, never another exception."""

from __future__ import annotations

import string
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stress_support import scaled

from resources_qt.project import Project, ProjectError, loads_project

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
                "memory_limit_mb", "page_size", "cache_ttl_ms", "cache_scope", "bogus"]
_RESOURCE_KEYS = ["name", "title", "description", "uri", "uri_template", "mime_type", "size", "icons",
                  "annotations", "samples", "completions", "complete", "cache", "reader", "bogus"]


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
