"""The `[server]` table is the one declaration of each key: every row loads, saves, refuses, and reaches its target."""

from __future__ import annotations

import dataclasses
import typing

import pytest
from helpers.settings_values import other_value, out_of_range

from resources_qt import Resources
from resources_qt.project import Project, ProjectError, ServerSettings, dumps_project, loads_project, render
from resources_qt.project.settings_table import SETTINGS, Setting, setting
from resources_qt.server.factory import build_server
from resources_qt.snippets import create_pool

HEAD = 'format = 1\n\n[server]\n'
ROWS = [pytest.param(row, id=row.key) for row in SETTINGS]


def test_the_model_has_exactly_the_tables_keys_with_its_defaults_and_types() -> None:
    fields = dataclasses.fields(ServerSettings)
    # Sub-tables are declared in their own modules: `[server.auth]` in auth_settings.
    assert [f.name for f in fields if f.name not in render.SERVER_TABLES] == [row.key for row in SETTINGS]
    assert render.SERVER_TABLES == ("auth",) and ServerSettings().auth is None
    defaults = ServerSettings()
    hints = typing.get_type_hints(ServerSettings)
    for row in SETTINGS:
        assert getattr(defaults, row.key) == row.default, row.key
        kinds = {a for a in typing.get_args(hints[row.key]) if a is not type(None)} or {hints[row.key]}
        if typing.get_origin(hints[row.key]) is typing.Literal:
            kinds = {str}
        expected: set[object] = {row.kind, typing.Literal[row.word]} if row.word else {row.kind}
        assert kinds == expected, (row.key, hints[row.key])
    defaults.validate()


@pytest.mark.parametrize("row", ROWS)
def test_every_key_loads_and_saves_a_value_other_than_its_default(row: Setting) -> None:
    value = other_value(row)
    loaded = loads_project(HEAD + f"{row.key} = {_toml(value)}\n").server
    assert getattr(loaded, row.key) == value
    assert isinstance(getattr(loaded, row.key), row.kind)
    again = loads_project(dumps_project(Project(server=loaded))).server
    assert again == loaded


@pytest.mark.parametrize("row", [r for r in ROWS if r.values[0].least is not None])
def test_every_bounded_key_is_refused_out_of_its_range_naming_key_range_and_line(row: Setting) -> None:
    with pytest.raises(ProjectError) as caught:
        loads_project(HEAD + f"{row.key} = {_toml(out_of_range(row))}\n", source="t.toml")
    assert caught.value.field == row.key and caught.value.line == 4
    assert f"{row.key} must be {row.range_text()}" in caught.value.message


@pytest.mark.parametrize("row", [r for r in ROWS if r.values[0].applies in ("identity", "engine", "capabilities")])
def test_every_engine_key_reaches_the_engine(row: Setting) -> None:
    value = other_value(row)
    server = ServerSettings(**{row.key: value})
    engine = build_server(Project(server=server), Resources())
    try:
        assert getattr(engine, row.name) == value
    finally:
        engine.close()


@pytest.mark.parametrize("row", [r for r in ROWS if r.values[0].applies == "pool"])
def test_every_pool_key_reaches_the_pool_and_the_pool_checks_the_same_range(row: Setting) -> None:
    value = other_value(row)
    pool = create_pool(Project(server=ServerSettings(**{row.key: value})))
    try:
        assert getattr(pool, row.name) == value
    finally:
        pool.close()
    with pytest.raises(ValueError, match=f"must be {row.range_text()}"):
        create_pool(Project(server=ServerSettings(**{row.key: out_of_range(row)})))


def test_the_engine_and_the_model_agree_on_a_limit() -> None:
    # Before the table the engine took max_uri_length down to 16 while the model refused anything under 256.
    with pytest.raises(ValueError, match="max_uri_length must be between 256 and 1048576"):
        build_server(Project(server=ServerSettings(max_uri_length=100)), Resources())
    assert setting("memory_limit_mb").least == 64


def test_an_unknown_key_is_named_with_the_known_ones() -> None:
    with pytest.raises(KeyError, match="'nope' is not a \\[server\\] key"):
        setting("nope")


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


def test_the_readme_settings_table_is_the_generated_one() -> None:
    from pathlib import Path

    from resources_qt.project.settings_doc import replace_in

    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text(encoding="utf-8")
    assert replace_in(readme) == readme, "stale: python -m resources_qt.project.settings_doc --write README.md"
