"""`resource-studio test` end to end: output lines, summary, JUnit XML, --json, -k, snapshots and exit codes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers.resource_tests import write_project

from resources_qt.testing.cli import test_main

BROKEN = """
[[resources]]
name = "broken"
uri_template = "broken://{id}"
mime_type = "text/plain"
samples = ["broken://1"]
reader = '''
def read(uri, params):
    raise RuntimeError("the disk is on fire")
'''
"""


def _lines(text: str) -> list[str]:
    return text.rstrip("\n").splitlines()


def test_all_samples_pass_through_the_module_as_a_subprocess(tmp_path: Path) -> None:
    project = write_project(tmp_path)
    done = subprocess.run([sys.executable, "-m", "resources_qt.testing.cli", str(project), "--era", "both"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    lines = _lines(done.stdout)
    assert lines[-1] == "10 passed, 0 failed"
    assert lines[0].startswith("PASS  sample: text://greeting [legacy]  (")  # resources in file order
    assert any(line.startswith("PASS  sample: text://greeting [2026-07-28]  (") for line in lines)
    assert all(line.endswith(" ms)") for line in lines[:-1])
    assert done.stderr == ""


def test_a_failing_sample_exits_1_with_the_error_under_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "broken.toml"
    project.write_text(write_project(tmp_path).read_text() + BROKEN)
    junit = tmp_path / "out" / "junit.xml"
    junit.parent.mkdir()
    assert test_main([str(project), "--junit", str(junit)]) == 1
    out = capsys.readouterr().out
    lines = _lines(out)
    assert lines[-1] == "5 passed, 1 failed"
    failed = lines.index(next(line for line in lines if line.startswith("FAIL")))
    assert lines[failed].startswith("FAIL  sample: broken://1  (")
    assert lines[failed + 1].startswith("      expected content, got error -32000: '")
    assert "the disk is on fire" in lines[failed + 1]
    root = ET.parse(junit).getroot()
    assert (root.tag, root.get("tests"), root.get("failures")) == ("testsuites", "6", "1")
    (suite,) = root
    assert suite.get("name") == "Checks"
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert len(cases) == 6
    failure = cases["sample: broken://1"].find("failure")
    assert failure is not None and "the disk is on fire" in (failure.get("message") or "")
    assert failure.text is not None and failure.text.startswith("expected content, got error -32000")
    assert cases["sample: text://greeting"].find("failure") is None
    assert float(cases["sample: text://greeting"].get("time") or "nan") >= 0


def test_json_output_is_one_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "broken.toml"
    project.write_text(write_project(tmp_path).read_text() + BROKEN)
    assert test_main([str(project), "--json", "-k", "broken", "--era", "both"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert (document["passed"], document["failed"]) == (0, 2)
    assert [(t["name"], t["era"], t["passed"], t["sample_of"]) for t in document["tests"]] == [
        ("sample: broken://1", "legacy", False, "broken"),
        ("sample: broken://1", "2026-07-28", False, "broken"),
    ]
    assert "the disk is on fire" in document["tests"][0]["failures"][0]


def test_k_selects_and_no_samples_leaves_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = write_project(tmp_path)
    assert test_main([str(project), "-k", "GREETING"]) == 0
    assert _lines(capsys.readouterr().out)[-1] == "1 passed, 0 failed"
    assert test_main([str(project), "--no-samples"]) == 0
    assert capsys.readouterr().out == "0 passed, 0 failed\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{missing}"], "no such project file"),
        (["{project}", "--era", "2025-06-18"], "argument --era: invalid choice: '2025-06-18'"),
        (["{project}", "--frobnicate"], "unrecognized arguments: --frobnicate"),
        ([], "the following arguments are required: project"),
        (["{project}", "-k", "nothing like this"], "no test matches -k 'nothing like this'"),
        (["{bad}"], "unknown top-level key(s): tset"),
        (["{project}", "--junit", "{nodir}"], "cannot write"),
    ],
)
def test_usage_and_project_errors_exit_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       args: list[str], message: str) -> None:
    project = write_project(tmp_path)
    bad = tmp_path / "bad.toml"
    bad.write_text("format = 1\n\n[[tset]]\nuri = 'x://y'\n")
    places = {"project": project, "missing": tmp_path / "missing.toml", "bad": bad,
              "nodir": tmp_path / "no" / "such" / "dir" / "junit.xml"}
    assert test_main([arg.format(**places) for arg in args]) == 2
    captured = capsys.readouterr()
    err = _lines(captured.err)
    assert len(err) == 1 and err[0].startswith("resource-studio test: error: ")
    assert message in err[0]
    assert "Traceback" not in captured.err


def test_a_project_that_cannot_serve_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The loader keeps this (strict about keys), but binding it fails: the runner says so in one line.
    project = tmp_path / "clash.toml"
    project.write_text('format = 1\n\n[[resources]]\nname = "a"\nuri = "not a uri"\nreader = "x"\n')
    code = test_main([str(project)])
    captured = capsys.readouterr()
    assert code == 2
    assert len(_lines(captured.err)) == 1 and "resource-studio test: error: " in captured.err


DECLARED = """
[[tests]]
name = "greeting"
uri = "text://greeting"
expect = { mime_type = "text/plain", contains = "hello world", snapshot = true }

[[tests]]
name = "unknown URI"
uri = "nowhere://x"
expect = { error = -32002 }

[[tests]]
name = "profile"
uri = "crm://customers/42/profile"
expect = { resource = "profile", mime_type = "application/json", json = { id = "42" }, max_ms = 60000 }
"""


def test_declared_tests_from_the_file_with_snapshots_and_both_eras(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    project = write_project(tmp_path, DECLARED)
    snapshot = tmp_path / "checks.snapshots" / "greeting.txt"
    assert test_main([str(project), "--no-samples"]) == 1
    lines = _lines(capsys.readouterr().out)
    assert lines[0].startswith("FAIL  greeting  (")
    assert lines[1] == f"      snapshot: none recorded at {snapshot} (run with --update-snapshots to record it)"
    assert lines[-1] == "2 passed, 1 failed"

    assert test_main([str(project), "--no-samples", "--update-snapshots"]) == 0
    lines = _lines(capsys.readouterr().out)
    assert lines[0].startswith("PASS  greeting  (") and lines[0].endswith(" ms, snapshot recorded)")
    assert snapshot.read_text() == "=== content 1 of 1: text://greeting (text/plain)\nhello world\nsecond line\n\n"

    # The 2026-07-28 era answers an unknown URI with -32602: the failure names the era.
    assert test_main([str(project), "--no-samples", "--era", "both"]) == 1
    lines = _lines(capsys.readouterr().out)
    assert lines[-1] == "5 passed, 1 failed"
    failed = [line for line in lines if line.startswith("FAIL")]
    assert len(failed) == 1 and failed[0].startswith("FAIL  unknown URI [2026-07-28]  (")
    assert any(line.startswith("PASS  unknown URI [legacy]  (") for line in lines)

    snapshot.write_text(snapshot.read_text().replace("second line", "first line"))
    assert test_main([str(project), "-k", "greet"]) == 1
    out = capsys.readouterr().out
    header = f"      snapshot: the content differs from {snapshot}\n      --- snapshot {snapshot}\n      +++ read\n"
    assert header in out
    assert "\n      -first line\n      +second line\n" in out
    assert _lines(out)[-1] == "0 passed, 1 failed"  # "greeting" (it reads text://greeting: no sample test of it)


def test_a_bad_test_declaration_is_a_project_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = write_project(tmp_path, '[[tests]]\nuri = "text://greeting"\nexpect = { mime = "text/plain" }\n')
    assert test_main([str(project)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"resource-studio test: error: {project}:")
    assert "unknown expectation key 'mime'" in err and len(_lines(err)) == 1


EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.toml"))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: path.name)
def test_every_bundled_example_passes_its_tests_in_both_eras(example: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    code = test_main([str(example), "--era", "both"])
    out = capsys.readouterr().out
    assert code == 0, out
    last = _lines(out)[-1]
    assert last.endswith(" passed, 0 failed")
    declared = sum(1 for line in example.read_text(encoding="utf-8").splitlines() if line == "[[tests]]")
    assert declared >= 3  # each example carries a few meaningful tests of its own
    assert int(last.split()[0]) >= 2 * declared  # plus the samples no declared test reads, in each era


def test_ctrl_c_stops_the_run_and_its_workers(tmp_path: Path) -> None:
    marker = tmp_path / "reading"
    project = tmp_path / "hang.toml"
    project.write_text(f"""format = 1

[server]
reader_timeout = 120.0

[[resources]]
name = "hang"
uri = "hang://forever"
reader = '''
import os, pathlib, time

def read(uri, params):
    pathlib.Path({str(marker)!r}).write_text(str(os.getpid()))
    time.sleep(600)
'''
""")
    proc = subprocess.Popen([sys.executable, "-m", "resources_qt.testing.cli", str(project)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (marker.exists() and marker.read_text()):
            assert proc.poll() is None and time.monotonic() < deadline, "the read never started"
            time.sleep(0.02)
        worker = int(marker.read_text())
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "resource-studio test: interrupted" and "Traceback" not in err
    deadline = time.monotonic() + 10
    while _alive(worker):  # the snippet worker is stopped with the run, not left behind
        assert time.monotonic() < deadline, "the snippet worker outlived the run"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_resource_studio_test_through_the_launcher(tmp_path: Path) -> None:
    project = write_project(tmp_path, '[[tests]]\nname = "mime"\nuri = "text://greeting"\n'
                                      'expect = { mime_type = "application/json" }\n')
    done = subprocess.run([sys.executable, "-m", "studio", "test", str(project), "-k", "mime"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1, done.stderr
    assert _lines(done.stdout)[1:] == ["      mime_type: expected 'application/json', got 'text/plain'",
                                       "0 passed, 1 failed"]
    assert done.stderr == ""
