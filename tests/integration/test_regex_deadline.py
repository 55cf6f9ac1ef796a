"""A backtracking `matches` pattern fails its test as timed out instead of stalling `resource-studio test`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from resources_qt.project import load_project
from resources_qt.qt.tests_runner import TestResult, TestsWorker, collect_tests
from resources_qt.testing.cli import test_main
from resources_qt.testing.regex import DEFAULT_DEADLINE

CATASTROPHIC = "(a|aa)+b"
"""42 s against 40 characters in `re` (measured in the CLI before the deadline)."""

PROJECT = f"""format = 1

[server]
name = "Regex"
workers = 1
reader_timeout = 5.0

[[resources]]
name = "as"
uri = "text://as"
mime_type = "text/plain"
reader = '''
def read(uri, params):
    return "a" * 40
'''

[[tests]]
name = "backtracks"
uri = "text://as"
expect = {{ matches = "{CATASTROPHIC}" }}

[[tests]]
name = "ordinary match"
uri = "text://as"
expect = {{ matches = "^a{{40}}$" }}

[[tests]]
name = "ordinary miss"
uri = "text://as"
expect = {{ matches = "^b" }}
"""


def _timed_out(test: str) -> str:
    return (f"matches: timed out after {DEFAULT_DEADLINE:g} s in test {test!r}: /{CATASTROPHIC}/ against the text "
            "(40 characters) did not finish")


def test_the_cli_reports_the_timed_out_test_and_runs_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "regex.toml"
    project.write_text(PROJECT)
    assert test_main([str(project), "--no-samples", "--era", "both"]) == 1
    lines = capsys.readouterr().out.rstrip("\n").splitlines()
    assert lines[-1] == "2 passed, 4 failed"
    for era in ("legacy", "2026-07-28"):
        failed = lines.index(next(line for line in lines if line.startswith(f"FAIL  backtracks [{era}]")))
        assert lines[failed + 1].startswith(f"      {_timed_out('backtracks')}")
        assert any(line.startswith(f"PASS  ordinary match [{era}]") for line in lines)
        miss = lines.index(next(line for line in lines if line.startswith(f"FAIL  ordinary miss [{era}]")))
        assert lines[miss + 1] == f"      matches: /^b/ not found in the text: {'a' * 40!r}"


def test_the_studio_worker_gets_the_same_deadline(tmp_path: Path, qtbot: Any) -> None:
    path = tmp_path / "regex.toml"
    path.write_text(PROJECT)
    project = load_project(path)
    worker = TestsWorker()
    results: list[TestResult] = []
    ended: list[str] = []
    worker.results_arrived.connect(lambda: results.extend(worker.take_results()))
    worker.run_ended.connect(ended.append)
    worker.start(project, collect_tests(project, project.tests, samples=False), snapshots=None, deadline=0.5)
    qtbot.waitUntil(lambda: bool(ended), timeout=60_000)
    results.extend(worker.take_results())
    assert ended == [""]
    failures = {result.name: result.failures for result in results}
    assert failures["backtracks"][0].startswith("matches: timed out after 0.5 s in test 'backtracks'")
    assert failures["ordinary match"] == ()
