"""The snippet-kind registry: every kind loads, saves, is compile-checked and (per resource) runs in a worker."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import pickle
from typing import Any

import pytest

from resources_qt.errors import ReaderFailedError, ValidationError
from resources_qt.project import ResourceSpec
from resources_qt.project import model as project_model
from resources_qt.project.loader import loads_project
from resources_qt.project.model import Project
from resources_qt.project.writer import dumps_project
from resources_qt.snippets import SnippetPool, check_snippet, wire
from resources_qt.snippets.kinds import INSTANCES, KINDS, RESOURCE_KINDS, SnippetKind, kind_named
from resources_qt.snippets.protocol import EntryCall, ValueDone

_ARGS: dict[str, tuple[Any, ...]] = {
    "content": ("k://one", {"id": "one"}),
    "values": ("id", "o", {}),
    "json": (),
}
"""Arguments of each answer type's entry (a json kind declared with parameters gets one string each)."""


def _entry(kind: SnippetKind, tag: str) -> str:
    """A snippet defining `kind`'s entry, answering with `tag` (a list for values, the tag for the rest)."""
    answer = f"[{tag!r}]" if kind.answer in ("values", "json") else repr(tag)
    return f"def {kind.function}({', '.join(kind.parameters)}):\n    return {answer}\n"


def _project_text(sources: dict[str, str]) -> str:
    """A project with one template resource, each kind's source under its own key."""
    text = "format = 1\n"
    for kind in KINDS:
        if not kind.per_resource:
            text += f"{kind.key} = {json.dumps(sources[kind.key])}\n"
    text += '\n[[resources]]\nname = "k"\nuri_template = "k://{id}"\n'
    for kind in RESOURCE_KINDS:
        text += f"{kind.key} = {json.dumps(sources[kind.key])}\n"
    return text


def _value(project: Project, kind: SnippetKind) -> str:
    source: str = getattr(project.resources[0] if kind.per_resource else project, kind.key)
    return source


def test_every_kind_loads_under_its_key_saves_as_a_block_and_round_trips() -> None:
    sources = {kind.key: (_entry(kind, kind.name) if kind.function else f"{kind.name.upper()} = 1\n")
               for kind in KINDS}
    project = loads_project(_project_text(sources))
    for kind in KINDS:
        assert _value(project, kind) == sources[kind.key], kind.name
    written = dumps_project(project)
    again = loads_project(written)
    for kind in KINDS:
        assert _value(again, kind) == sources[kind.key], kind.name
    # Built in code: the standard layout, each snippet written as a block of code.
    fresh = dumps_project(Project(prelude=project.prelude, resources=list(project.resources)))
    for kind in KINDS:
        assert _value(loads_project(fresh), kind) == sources[kind.key], kind.name
        assert f"{kind.key} = '''" in fresh or f'{kind.key} = """' in fresh, kind.name


def test_every_kind_with_an_entry_is_compile_checked_for_that_function() -> None:
    for kind in KINDS:
        if kind.function is None:
            assert check_snippet("X = 1\n", function=kind.function) is None
            continue
        missing = check_snippet("def other():\n    return 1\n", function=kind.function)
        assert missing is not None and f"defines no {kind.function}() function" in missing.message, kind.name
        assert check_snippet(_entry(kind, "x"), function=kind.function) is None, kind.name


def test_template_only_validation_reads_the_kinds_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    direct = ResourceSpec(name="d", uri="d://x", reader=_entry(kind_named("reader"), "x"),
                          instances=_entry(INSTANCES, "d://x"))
    with pytest.raises(ValidationError) as caught:
        direct.validate()
    assert caught.value.field == "instances" and "instances need a uri_template" in caught.value.message
    relaxed = tuple(dataclasses.replace(k, template_only=False) if k is INSTANCES else k for k in RESOURCE_KINDS)
    monkeypatch.setattr(project_model, "RESOURCE_KINDS", relaxed)
    direct.validate()


def test_every_per_resource_kind_is_called_by_kind_in_a_real_worker(pool: SnippetPool) -> None:
    async def main() -> dict[str, Any]:
        return {
            kind.name: await pool.call(kind.name, key=f"k#{kind.name}", source=_entry(kind, kind.name),
                                       args=_ARGS[kind.answer])
            for kind in RESOURCE_KINDS
        }

    answers = asyncio.run(main())
    assert [c.text for c in answers["reader"]] == ["reader"]
    assert answers["completion"] == ["completion"]
    assert json.loads(answers["instances"]) == ["instances"]
    assert set(answers) == {kind.name for kind in RESOURCE_KINDS}


def test_a_kind_declared_once_is_run_by_the_worker_with_its_caps(pool: SnippetPool) -> None:
    # A kind the worker's code never names: declaring it is all the worker needs to run it.
    summary = SnippetKind("summary", "summary", "summary", ("topic",), "Summary", "Summary", "json",
                          max_items=2, max_bytes=40)
    ok = "def summary(topic):\n    return [topic, len(topic)]\n"
    many = "def summary(topic):\n    return [1, 2, 3]\n"
    large = "def summary(topic):\n    return ['x' * 50]\n"
    raising = "import math\n\ndef summary(topic):\n    return math.sqrt(-1)\n"

    async def main() -> list[Any]:
        out: list[Any] = [await pool.call(summary, key="s", source=ok, args=("kinds",))]
        for source in (many, large, raising, "x = 1\n"):
            with pytest.raises(ReaderFailedError) as caught:
                await pool.call(summary, key="s", source=source, args=("kinds",))
            out.append(caught.value.message)
        return out

    text, too_many, too_large, raised, no_entry = asyncio.run(main())
    assert json.loads(text) == ["kinds", 5]
    assert too_many == "summary() returned 3 items; at most 2 are listed (the summary item cap)"
    assert too_large.startswith("summary() returned 54 bytes of JSON; at most 40")
    assert raised == "summary() failed: ValueError: math domain error (line 4)"  # the user's line
    assert no_entry == "summary() cannot run: the snippet defines no summary(topic) function"


def test_the_pool_refuses_a_kind_without_an_entry_or_the_wrong_arguments(pool: SnippetPool) -> None:
    async def call(kind: str, args: tuple[Any, ...]) -> Any:
        return await pool.call(kind, key="k", source="X = 1\n", args=args)

    for kind, args, field in (("prelude", (), "kind"), ("nonsense", (), "kind"), ("reader", (), "args")):
        with pytest.raises(ValidationError) as caught:
            asyncio.run(call(kind, args))
        assert caught.value.field == field


def test_an_entry_call_and_its_value_cross_the_channels_intact() -> None:
    call = EntryCall("k", "d", "def instances():\n    return []\n", "p", None, kind=INSTANCES, args=("a", 1))
    assert pickle.loads(pickle.dumps(call)) == call
    assert call.without(source=True, prelude=False).source is None
    text = json.dumps([{"id": "é\ud800"}], ensure_ascii=False)
    assert wire.decode(wire.encode(ValueDone(text))) == ValueDone(text)
    with pytest.raises(wire.WireError):
        wire.decode(wire.encode(ValueDone(text))[:-1])
