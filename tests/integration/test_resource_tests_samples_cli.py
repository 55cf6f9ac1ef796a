"""`resource-studio test` on authoring slips: a sample meant to fail, a placeholder, a broken reader, old snapshots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.resource_tests import CHECKS_PROJECT

from resources_qt.testing.cli import test_main
from resources_qt.testing.snapshots import safe_file_name

ERROR_SAMPLE = """
[[resources]]
name = "customer"
uri_template = "people://{id}"
mime_type = "application/json"
samples = ["people://42", "people://0"]
reader = '''
def read(uri, params):
    if params["id"] not in CUSTOMERS:
        raise LookupError(f"No customer {params['id']}")
    return {"id": params["id"]}
'''

[[tests]]
name = "an unknown customer is an error"
uri = "people://0"
expect = { error = -32000, contains = "No customer 0" }
"""

PLACEHOLDER = """
[[resources]]
name = "order"
uri_template = "shop://orders/{order}/lines/{line}"
mime_type = "application/json"
samples = ["shop://orders/order-1/lines/line-1"]
reader = '''
def read(uri, params):
    return {"order": int(params["order"]), "line": int(params["line"])}
'''
"""

BROKEN_READER = """
[[resources]]
name = "customer_profile"
uri_template = "crm://profiles/{id}"
mime_type = "application/json"
samples = ["crm://profiles/42"]
reader = '''
def read(uri, params):
    profile = {"id": params["id"]
    return profile
'''

[[tests]]
name = "profile 42"
uri = "crm://profiles/42"
expect = { resource = "customer_profile", json = { id = "42" } }
"""

SNAPSHOT_TEST = """
[[tests]]
name = "greeting text"
uri = "text://greeting"
expect = { snapshot = true }
"""


def _project(tmp_path: Path, extra: str) -> Path:
    path = tmp_path / "project.toml"
    path.write_text(CHECKS_PROJECT + extra, encoding="utf-8")
    return path


def _lines(capsys: pytest.CaptureFixture[str]) -> tuple[list[str], str]:
    captured = capsys.readouterr()
    return captured.out.rstrip("\n").splitlines(), captured.err


def test_a_declared_test_of_a_samples_uri_replaces_its_implicit_test(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _project(tmp_path, ERROR_SAMPLE)
    assert test_main([str(project), "-k", "*customer*", "--era", "both"]) == 0
    lines, _ = _lines(capsys)
    names = [line.split("  ")[1] for line in lines[:-1]]
    assert names == [
        "an unknown customer is an error [legacy]", "sample: crm://customers/42/profile [legacy]",
        "an unknown customer is an error [2026-07-28]", "sample: crm://customers/42/profile [2026-07-28]",
    ]
    assert lines[-1] == "4 passed, 0 failed"
    assert test_main([str(project), "-k", "people"]) == 0
    lines, _ = _lines(capsys)
    # No "sample: people://0", which could only fail: the declared test says it is an error.
    assert [line.split("  ")[1] for line in lines[:-1]] == ["sample: people://42"]


def test_a_new_templates_placeholder_sample_is_no_test(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # What the studio writes for a new template (each variable named after itself, "-1"): the preview
    # reads it, but a reader written for real ids cannot answer it, and it is not the author's URI.
    project = _project(tmp_path, PLACEHOLDER)
    assert test_main([str(project), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert "sample: shop://orders/order-1/lines/line-1" not in [test["name"] for test in document["tests"]]
    assert document["failed"] == 0
    # A real sample of the same template is a test again.
    project.write_text(project.read_text("utf-8").replace("order-1/lines/line-1", "7/lines/2"), encoding="utf-8")
    assert test_main([str(project), "-k", "shop"]) == 0
    lines, _ = _lines(capsys)
    assert lines[0].startswith("PASS  sample: shop://orders/7/lines/2  (")


def test_a_reader_that_does_not_compile_is_named_with_its_error_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _project(tmp_path, BROKEN_READER)
    assert test_main([str(project), "-k", "profile"]) == 1
    lines, _ = _lines(capsys)
    failed = [index for index, line in enumerate(lines) if line.startswith("FAIL")]
    message = lines[failed[0] + 1].strip()
    assert message == ("not run: 'customer_profile' is not served: its reader does not compile: "
                       "SyntaxError: '{' was never closed (line 2, column 15)")
    assert [lines[index].split("  ")[1] for index in failed] == ["profile 42"]  # no sample test of its URI
    assert not any("got no resource" in line for line in lines)
    # The rest of the project is served and tested as usual.
    assert lines[-1] == "1 passed, 1 failed"  # "sample: crm://customers/42/profile" of the profile template


def test_a_completion_snippet_that_does_not_compile_holds_its_template_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = CHECKS_PROJECT.replace(
        'samples = ["crm://customers/42/profile"]',
        'samples = ["crm://customers/42/profile"]\ncomplete = "def complete(name, value, context):\\n    return ["',
    )
    project = tmp_path / "project.toml"
    project.write_text(broken, encoding="utf-8")
    assert test_main([str(project), "-k", "crm"]) == 1
    lines, _ = _lines(capsys)
    assert lines[1].strip().startswith("not run: 'profile' is not served: its completion snippet does not compile: ")
    assert lines[1].endswith("(line 2, column 12)")


def test_snapshot_files_whose_test_is_gone_are_noted_and_deleted_with_update_snapshots(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _project(tmp_path, SNAPSHOT_TEST)
    assert test_main([str(project), "--update-snapshots", "-k", "greeting text"]) == 0
    snapshots = tmp_path / "project.snapshots"
    recorded = snapshots / safe_file_name("greeting text")
    assert sorted(p.name for p in snapshots.iterdir()) == [recorded.name]
    _lines(capsys)
    # The test is renamed: its old file has no test any more, the new name records a file of its own.
    project.write_text(project.read_text("utf-8").replace("greeting text", "greeting snapshot"), encoding="utf-8")
    (snapshots / "README.txt").write_text("Snapshots of project.toml's tests\n")  # not a snapshot: left alone
    assert test_main([str(project), "-k", "nothing-but", "--no-samples"]) == 2  # no test matches: no run, no note
    assert capsys.readouterr().err == "resource-studio test: error: no test matches -k 'nothing-but'\n"
    assert test_main([str(project), "-k", "greeting"]) == 1  # the renamed test has no snapshot yet
    _, err = _lines(capsys)
    assert err == (f"note: 1 snapshot file in {snapshots} has no test: {recorded.name} "
                   "(--update-snapshots deletes them)\n")
    assert test_main([str(project), "-k", "greeting", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["orphan_snapshots"] == [recorded.name]
    assert test_main([str(project), "-k", "greeting", "--update-snapshots"]) == 0
    _, err = _lines(capsys)
    assert err == f"note: deleted 1 snapshot file in {snapshots} with no test: {recorded.name}\n"
    assert not recorded.exists() and (snapshots / "README.txt").exists()
    assert len(list(snapshots.glob("greeting_snapshot-*.txt"))) == 1
    assert test_main([str(project), "-k", "greeting"]) == 0
    assert capsys.readouterr().err == ""
