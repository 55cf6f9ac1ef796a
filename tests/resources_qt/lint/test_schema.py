"""The project file's JSON Schema: generated from the model; it accepts the examples, refuses what the loader does."""

from __future__ import annotations

import dataclasses
import datetime
import json
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from resources_qt.lint import schema as schema_module
from resources_qt.lint.cli import schema_main
from resources_qt.lint.schema import SCHEMA_DIRECTIVE, project_schema, schema_text, write_schema_beside
from resources_qt.project import Project, ProjectError, ResourceSpec, dumps_project, loads_project, save_project
from resources_qt.project.settings_table import SETTINGS, Setting
from resources_qt.testing.spec import EXPECTATION_KEYS, TEST_KEYS
from studio.cli import main as studio_main

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((REPO / "examples").glob("*.toml"))
BASE = 'format = 1\n\n[server]\nname = "s"\n\n[[resources]]\nname = "r"\nuri = "docs://r"\n'


def _plain(value: object) -> object:
    """TOML as JSON sees it: date-times as their ISO text (Taplo validates them as strings too)."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    return value


def _errors(text: str) -> list[str]:
    validator = jsonschema.Draft202012Validator(project_schema())
    return [error.message for error in validator.iter_errors(_plain(tomllib.loads(text)))]


def _loader_refuses(text: str) -> bool:
    try:
        loads_project(text)
    except ProjectError:
        return True
    return False


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = project_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    # Draft 4 validators (Taplo's) read it too: nothing in it, its definitions included, is a draft 4 error.
    as_draft_4 = json.loads(json.dumps(schema).replace("#/$defs/", "#/definitions/"))
    as_draft_4["definitions"] = as_draft_4.pop("$defs")
    del as_draft_4["$schema"]
    jsonschema.Draft4Validator.check_schema(as_draft_4)
    validator = jsonschema.Draft4Validator(as_draft_4)
    for path in EXAMPLES:
        assert list(validator.iter_errors(_plain(tomllib.loads(path.read_text(encoding="utf-8"))))) == []
    assert not validator.is_valid({"format": 1, "tests": [{"uri": "x://y", "expect": {"max_ms": 0}}]})


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: path.name)
def test_every_bundled_example_is_accepted(path: Path) -> None:
    assert _errors(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    ("tail", "says"),
    [
        ('colour = "red"\n', "'colour' was unexpected"),
        ("size = -1\n", "-1 is less than the minimum of 0"),
        ('size = "big"\n', "'big' is not of type 'integer'"),
        ("samples = 'docs://r'\n", "is not of type 'array'"),
        ('icons = [{ src = "x", colour = "red" }]\n', "'colour' was unexpected"),
        ('annotations = { audience = ["robot"] }\n', "'robot' is not one of ['user', 'assistant']"),
        ("annotations = { priority = 2 }\n", "2 is greater than the maximum of 1"),
        ('cache = { ttl_ms = 10, scope = "everyone" }\n', "'everyone' is not one of ['public', 'private']"),
        ("watch = { interval = 0.01 }\n", "0.01 is less than the minimum of 0.1"),
        ('watch = { files = "notes" }\n', "'notes' is not of type 'array'"),
        ("completions = { id = [1] }\n", "1 is not of type 'string'"),
        ("unchecked_values = 1\n", "1 is not of type 'boolean'"),
    ],
)
def test_unknown_resource_keys_and_wrong_types_are_refused_by_schema_and_loader(tail: str, says: str) -> None:
    text = BASE + tail
    errors = _errors(text)
    assert len(errors) == 1 and says in errors[0], errors
    assert _loader_refuses(text)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('format = 1\nformatt = 2\n', "'formatt' was unexpected"),
        ("prelude = 'x = 1'\n", "'format' is a required property"),
        ("format = 2\n", "2 is not one of [1]"),
        ('format = 1\n[[tests]]\nuri = "x://y"\nexpect = { colour = 1 }\n', "'colour' was unexpected"),
        ('format = 1\n[[tests]]\nuri = "x://y"\nexpect = { contents = -1 }\n', "less than the minimum of 0"),
        ('format = 1\n[[tests]]\nuri = "x://y"\nexpect = { max_ms = 0 }\n', "should not be valid under"),
        ('format = 1\n[[tests]]\nuri = "x://y"\nexpect = { blob_sha256 = "abc" }\n', "does not match"),
        ('format = 1\n[[tests]]\nuri = "x://y"\nextra = 1\n', "'extra' was unexpected"),
        ('format = 1\n[server]\nname = " "\n', "does not match"),
        ('format = 1\n[server]\nport = 1\n', "'port' was unexpected"),
    ],
)
def test_top_server_and_test_keys_are_checked_too(text: str, says: str) -> None:
    errors = _errors(text)
    assert len(errors) == 1 and says in errors[0], errors
    assert _loader_refuses(text)


def _out_of_range(row: Setting) -> Iterator[object]:
    if row.kind is bool:
        yield "yes"
    elif row.kind is str:
        yield 5
        if row.choices:
            yield "none of them"
    else:
        yield "many"
        if row.least is not None and row.most is not None:
            yield row.least - 1
            yield row.most * 2


@pytest.mark.parametrize("row", SETTINGS, ids=lambda row: row.key)
def test_every_server_setting_follows_its_table_row(row: Setting) -> None:
    """Each row of settings_table: its type, range and choices refused alike by the schema and the loader."""
    part = project_schema()["properties"]["server"]["properties"][row.key]
    assert part["description"].startswith(row.help)
    if row.default is not None:
        assert part["default"] == row.default
    for value in _out_of_range(row):
        rendered = json.dumps(value)
        text = f"format = 1\n[server]\n{row.key} = {rendered}\n"
        assert _errors(text), (row.key, value)
        assert _loader_refuses(text), (row.key, value)
    good = row.default if row.default is not None else row.least
    assert _errors(f"format = 1\n[server]\n{row.key} = {json.dumps(good)}\n") == []


def test_the_keys_are_the_models_own() -> None:
    schema = project_schema()
    defs = schema["$defs"]
    assert list(schema["properties"]["server"]["properties"]) == [row.key for row in SETTINGS] + ["auth"]
    assert list(defs["resource"]["properties"]) == [field.name for field in dataclasses.fields(ResourceSpec)]
    assert list(defs["test"]["properties"]) == list(TEST_KEYS)
    assert list(defs["expectation"]["properties"]) == list(EXPECTATION_KEYS)
    # Field docstrings become descriptions.
    assert defs["resource"]["properties"]["reader"]["description"] == "Snippet source of `def read(uri, params)`."


def test_a_new_settings_row_is_in_the_schema_without_writing_it(monkeypatch: pytest.MonkeyPatch) -> None:
    row = Setting("max_widgets", int, 3, "Limits", "Widgets", "Widgets at most", "maxWidgetsEdit", "engine",
                  least=1, most=9)
    monkeypatch.setattr(schema_module, "SETTINGS", (*SETTINGS, row))
    project_schema.cache_clear()
    try:
        part = project_schema()["properties"]["server"]["properties"]["max_widgets"]
    finally:
        project_schema.cache_clear()
    assert part == {"description": "Widgets at most (between 1 and 9)", "type": "integer", "minimum": 1,
                    "maximum": 9, "default": 3}


def test_the_command_prints_the_schema_and_writes_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert studio_main(["schema"]) == 0
    assert capsys.readouterr().out == schema_text()
    target = tmp_path / "out" / "schema.json"
    target.parent.mkdir()
    assert schema_main(["--output", str(target)]) == 0
    assert json.loads(target.read_text()) == project_schema()
    assert schema_main(["--bogus"]) == 2
    assert capsys.readouterr().err.startswith("resource-studio schema: error: unrecognized arguments: --bogus")


def test_saved_projects_start_with_the_schema_line(tmp_path: Path) -> None:
    reader = "def read(uri, params):\n    return 'x'\n"
    project = Project(resources=[ResourceSpec(name="r", uri="docs://r", reader=reader)])
    path = save_project(project, tmp_path / "p.toml")
    text = path.read_text()
    assert text.splitlines()[0] == SCHEMA_DIRECTIVE == "#:schema ./resource-studio.schema.json"
    assert loads_project(text).resources == project.resources
    assert _errors(text) == []
    # The line is part of the file now: saves that change the top keep it, and an unchanged file is kept whole.
    again = loads_project(text)
    assert dumps_project(again) == text
    again.prelude = "A = 1\n"
    assert dumps_project(again).startswith(SCHEMA_DIRECTIVE + "\n")


def test_a_hand_written_file_is_not_given_the_line(tmp_path: Path) -> None:
    text = 'format = 1\n\n[server]\nname = "x"  # keep\n'
    project = loads_project(text)
    assert dumps_project(project) == text  # byte for byte: nothing was changed


def test_the_schema_file_is_written_beside_the_project_once(tmp_path: Path) -> None:
    project = tmp_path / "desk.toml"
    written = write_schema_beside(project)
    assert written == tmp_path / "resource-studio.schema.json"
    assert json.loads(written.read_text()) == project_schema()
    before = written.stat()
    assert write_schema_beside(project) == written
    assert written.stat().st_ino == before.st_ino  # unchanged: not written again
    written.write_text("{}")
    write_schema_beside(project)
    assert written.read_text() == schema_text()


def _deep_keys(schema: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for key, value in schema.items():
        found.add(key)
        if isinstance(value, dict):
            found |= _deep_keys(value)
    return found


def test_no_keyword_taplo_would_misread() -> None:
    keywords = _deep_keys(project_schema())
    assert not keywords & {"const", "exclusiveMinimum", "exclusiveMaximum", "if", "then", "else", "dependentRequired",
                           "prefixItems", "unevaluatedProperties"}


AUTH_TOML = 'format = 1\n\n[server]\nname = "x"\n\n[server.auth]\nissuer = "https://auth.example.com/realms/s"\n'


@pytest.mark.parametrize(
    ("tail", "accepted"),
    [
        ('resource = "https://mcp.example.com/mcp"\nrequired_scopes = ["mcp:read"]\n', True),
        ('resource = "https://mcp.example.com/mcp"\nbogus = 1\n', False),
        ('required_scopes = ["mcp:read"]\n', False),  # resource is required
        ('resource = "https://mcp.example.com/mcp"\nrequired_scopes = "mcp:read"\n', False),
    ],
)
def test_server_auth_is_in_the_schema_as_the_loader_takes_it(tail: str, accepted: bool) -> None:
    text = AUTH_TOML + tail
    try:
        loads_project(text)
    except ProjectError:
        loaded = False
    else:
        loaded = True
    try:
        jsonschema.validate(tomllib.loads(text), project_schema())
    except jsonschema.ValidationError:
        valid = False
    else:
        valid = True
    assert (loaded, valid) == (accepted, accepted)
