"""`--format sarif`: a SARIF 2.1.0 log code scanning accepts, validated against the official schema."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from resources_qt.lint.cli import lint_main
from resources_qt.lint.findings import Finding, LintReport
from resources_qt.lint.rules import RULES
from resources_qt.lint.sarif import artifact_uri, to_sarif

SCHEMA_FILE = Path(__file__).with_name("sarif-schema-2.1.0.json")
"""The OASIS schema (sarif-2.1/schema/sarif-schema-2.1.0.json of oasis-tcs/sarif-spec), when it is shipped here."""

PROJECT = """\
format = 1

[server]
name = "Sarif desk"
workers = 1

[[resources]]
name = "sized"
uri = "docs://sized"
mime_type = "text/plain"
size = 3
reader = '''
def read(uri, params):
    return "twelve bytes"
'''

[[resources]]
name = "broken"
description = "always fails"
uri = "docs://broken"
reader = '''
def read(uri, params):
    raise RuntimeError("the disk is on fire")
'''
"""


def _official_schema() -> dict[str, Any] | None:
    path = Path(os.environ.get("SARIF_SCHEMA_FILE") or SCHEMA_FILE)
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def sarif_log(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("sarif")
    (folder / "desk.toml").write_text(PROJECT)
    cwd = Path.cwd()
    os.chdir(folder)  # the artifact is named relative to the working folder, as in a CI checkout
    try:
        assert lint_main(["desk.toml", "--format", "sarif", "--output", "lint.sarif"]) == 1
    finally:
        os.chdir(cwd)
    return json.loads((folder / "lint.sarif").read_text())  # type: ignore[no-any-return]


def test_the_log_is_valid_against_the_official_sarif_schema(sarif_log: dict[str, Any]) -> None:
    schema = _official_schema()
    if schema is None:
        pytest.skip(f"the SARIF 2.1.0 schema is not shipped at {SCHEMA_FILE} (or named by $SARIF_SCHEMA_FILE)")
    jsonschema.Draft4Validator.check_schema(schema)
    validator = jsonschema.Draft4Validator(schema)
    assert [error.message for error in validator.iter_errors(sarif_log)] == []
    # The schema is no rubber stamp: a level SARIF does not know, or a result without a message, is refused.
    broken = json.loads(json.dumps(sarif_log))
    broken["runs"][0]["results"][0]["level"] = "fatal"
    del broken["runs"][0]["results"][1]["message"]
    assert len(list(validator.iter_errors(broken))) == 2


def test_the_log_holds_what_code_scanning_reads(sarif_log: dict[str, Any]) -> None:
    assert sarif_log["version"] == "2.1.0"
    assert sarif_log["$schema"].endswith("sarif-schema-2.1.0.json")
    (run,) = sarif_log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "resource-studio lint"
    rules = driver["rules"]
    assert [rule["id"] for rule in rules] == [rule.id for rule in RULES]
    for rule, declared in zip(rules, RULES, strict=True):
        assert rule["shortDescription"]["text"] == declared.title
        assert rule["help"]["text"] == declared.help
        assert rule["defaultConfiguration"]["level"] == declared.level
    results = {result["ruleId"]: result for result in run["results"]}
    assert set(results) == {"sample-fails", "size-mismatch", "missing-description"}
    lines = PROJECT.splitlines()
    for rule_id, resource in (("sample-fails", "broken"), ("size-mismatch", "sized"),
                              ("missing-description", "sized")):
        result = results[rule_id]
        assert rules[result["ruleIndex"]]["id"] == rule_id
        assert result["level"] == next(rule.level for rule in RULES if rule.id == rule_id)
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"] == {"uri": "desk.toml", "uriBaseId": "%SRCROOT%"}
        line = physical["region"]["startLine"]
        assert lines[line - 1] == "[[resources]]" and lines[line] == f'name = "{resource}"'
        assert result["properties"]["resource"] == resource
    assert "declares size 3 bytes but serves 12" in results["size-mismatch"]["message"]["text"]
    assert "the disk is on fire" in results["sample-fails"]["message"]["text"]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].endswith("/")


def test_a_project_outside_the_working_folder_is_named_by_its_file_uri(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "p.toml"
    assert artifact_uri(str(outside), root=tmp_path / "checkout") == (outside.as_uri(), None)
    assert artifact_uri("sub/p.toml", root=tmp_path) == ("sub/p.toml", "%SRCROOT%")
    report = LintReport((Finding("missing-description", "note", "m", resource="r"),), source=str(outside))
    log = to_sarif(report, root=tmp_path / "checkout")
    (result,) = log["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]
    assert location == {"artifactLocation": {"uri": outside.as_uri()}, "region": {"startLine": 1}}
    assert "originalUriBaseIds" not in log["runs"][0]


def test_fingerprints_ignore_numbers_but_not_the_resource() -> None:
    def fingerprint(message: str, resource: str) -> str:
        log = to_sarif(LintReport((Finding("size-mismatch", "warning", message, resource=resource),)))
        return str(log["runs"][0]["results"][0]["partialFingerprints"]["resourceStudioLint/v1"])

    assert fingerprint("declares size 3 but serves 12", "a") == fingerprint("declares size 4 but serves 13", "a")
    assert fingerprint("declares size 3 but serves 12", "a") != fingerprint("declares size 3 but serves 12", "b")
