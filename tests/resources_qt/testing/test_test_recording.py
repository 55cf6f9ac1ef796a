""""Add as test": a preview's read becomes a test whose snapshot the real run then holds."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.resource_tests import CHECKS_PROJECT

from resources_qt.content import ResourceContent
from resources_qt.project import loads_project
from resources_qt.testing.recording import record_snapshot, test_from_read, unique_test_name
from resources_qt.testing.runner import collect_tests, run_tests
from resources_qt.testing.snapshots import SnapshotStore
from resources_qt.testing.spec import Expectation, TestSpec, parse_tests, test_to_dict


def test_a_successful_read_expects_its_resource_mime_type_and_a_snapshot() -> None:
    contents = [ResourceContent.from_text("text://greeting", "text/plain", "hi")]
    spec = test_from_read("text://greeting", resource="greeting", contents=contents, error_code=None)
    assert spec == TestSpec(name="text://greeting", uri="text://greeting", named=False,
                            expect=Expectation(resource="greeting", mime_type="text/plain", snapshot=True))
    assert test_to_dict(spec) == {"uri": "text://greeting",
                                  "expect": {"resource": "greeting", "mime_type": "text/plain", "snapshot": True}}


def test_a_failed_read_expects_its_error_code_and_names_are_made_unique() -> None:
    spec = test_from_read("crm://customers/0/profile", resource="profile", contents=None, error_code=-32000,
                          existing=["crm://customers/0/profile"])
    assert spec.name == "crm://customers/0/profile (2)" and spec.named
    assert spec.expect == Expectation(resource="profile", error=-32000)
    assert parse_tests([test_to_dict(spec)]) == [spec]  # editable afterwards as any declared test
    assert unique_test_name("a", ["a", "a (2)"]) == "a (3)"
    with pytest.raises(ValueError, match="needs a URI"):
        test_from_read("", resource=None, contents=None, error_code=None)


def test_the_recorded_snapshot_is_what_the_client_path_sees(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path / "checks.snapshots")
    previewed = {
        "text://greeting": [ResourceContent.from_text("text://greeting", "text/plain", "hello world\nsecond line\n")],
        "img://logo.png": [ResourceContent.from_bytes("img://logo.png", "image/png", bytes(range(16)))],
    }
    names = {"text://greeting": "greeting", "img://logo.png": "logo"}
    specs = []
    for uri, contents in previewed.items():
        spec = test_from_read(uri, resource=names[uri], contents=contents, error_code=None)
        record_snapshot(store, spec, contents)
        specs.append(spec)
    project = loads_project(CHECKS_PROJECT)
    results = run_tests(project, collect_tests(project, specs, samples=False), snapshots=store)
    assert [(r.name, r.failures) for r in results] == [("text://greeting", ()), ("img://logo.png", ())]
