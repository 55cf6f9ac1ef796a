"""`resource-studio lint` end to end: every rule tripped by one project and not by its fixed twin, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from resources_qt.lint.cli import lint_main
from resources_qt.lint.rules import RULES
from studio.cli import main as studio_main

HEAD = """\
format = 1

prelude = '''
GIF = b"GIF89a" + bytes(20)
PNG = b"\\x89PNG\\r\\n\\x1a\\n" + bytes(20)
'''

[server]
name = "Lint desk"
workers = 1
reader_timeout = 10.0
"""


def _resource(name: str, reader: str, **keys: str) -> str:
    lines = [f'[[resources]]\nname = "{name}"']
    keys.setdefault("description", '"what it holds"')
    lines += [f"{key} = {value}" for key, value in keys.items()]
    body = "\n".join(f"    {line}" for line in reader.strip("\n").splitlines())
    lines.append(f"reader = '''\ndef read(uri, params):\n{body}\n'''\n")
    return "\n".join(lines)


@dataclass(frozen=True)
class Case:
    """A rule, a project tail that trips it, the same made right, and what the finding must say."""

    rule: str
    tripped: str
    fixed: str
    says: tuple[str, ...]
    fix: object = None
    level: str = ""


CASES = [
    Case("size-mismatch",
         _resource("sized", 'return "twelve bytes"', uri='"docs://sized"', mime_type='"text/plain"', size="10"),
         _resource("sized", 'return "twelve bytes"', uri='"docs://sized"', mime_type='"text/plain"', size="12"),
         ("declares size 10 bytes", "serves 12"), fix=12),
    Case("mime-mismatch",
         _resource("report", 'return "{not json"', uri='"docs://report.json"', mime_type='"application/json"'),
         _resource("report", 'return \'{"ok": true}\'', uri='"docs://report.json"', mime_type='"application/json"'),
         ("application/json", "the text is not JSON", "line 1 column 2")),
    Case("mime-mismatch",
         _resource("logo", "return GIF", uri='"img://logo.png"', mime_type='"image/png"'),
         _resource("logo", "return PNG", uri='"img://logo.png"', mime_type='"image/png"'),
         ("image/png", "the bytes are a GIF"), fix="image/gif"),
    Case("mime-mismatch",
         _resource("photo", 'return text("not a picture", "image/png")', uri='"img://photo.png"',
                   mime_type='"image/png"'),
         _resource("photo", 'return blob(PNG, "image/png")', uri='"img://photo.png"', mime_type='"image/png"'),
         ("image/png", "a binary type, but serves 13 characters of text")),
    Case("mime-mismatch",
         _resource("notes", 'return b"\\x00\\x01binary"', uri='"docs://notes.txt"', mime_type='"text/plain"'),
         _resource("notes", 'return "plain words"', uri='"docs://notes.txt"', mime_type='"text/plain"'),
         ("text/plain, a text type, but serves a 8-byte blob",)),
    Case("mime-mismatch",
         _resource("settings", 'return {"theme": "dark"}', uri='"docs://settings"', mime_type='"text/plain"'),
         _resource("settings", 'return {"theme": "dark"}', uri='"docs://settings"', mime_type='"application/json"'),
         ("declares text/plain but the content is application/json",), fix="application/json", level="warning"),
    Case("uri-not-echoed",
         _resource("item", 'return text("x", "text/plain", uri="items://someone-else")',
                   uri_template='"items://{id}"', samples='["items://1"]', completions='{ id = ["1"] }'),
         _resource("item", 'return text("x", "text/plain", uri=uri)',
                   uri_template='"items://{id}"', samples='["items://1"]', completions='{ id = ["1"] }'),
         ("the read of items://1 answers content for items://someone-else",)),
    Case("template-not-discoverable",
         _resource("hidden", 'return "h"', uri_template='"hidden://{id}"', samples='["hidden://7"]'),
         _resource("hidden", 'return "h"', uri_template='"hidden://{id}"', samples='["hidden://7"]',
                   instances="'''\ndef instances():\n    return [{\"id\": \"7\"}]\n'''"),
         ("template 'hidden'", "lists no instances and offers no completions"),
         fix="def instances():\n    # the concrete URIs resources/list shows: one dict per instance\n"
             "    return [\n        {'id': '7'},\n    ]\n"),
    Case("sample-fails",
         _resource("fails", 'raise LookupError("no such ticket")', uri='"tickets://0"'),
         _resource("fails", 'raise LookupError("no such ticket")', uri='"tickets://0"')
         + '\n[[tests]]\nuri = "tickets://0"\nexpect = { error = -32000, contains = "no such ticket" }\n',
         ("resource 'fails' fails to read: error -32000", "no such ticket")),
    Case("sample-fails",
         _resource("listed", 'return "ok" if params["id"] == "1" else 1 / 0', uri_template='"listed://{id}"',
                   instances="'''\ndef instances():\n    return [{\"id\": \"1\"}, {\"id\": \"2\"}]\n'''"),
         _resource("listed", 'return "ok"', uri_template='"listed://{id}"',
                   instances="'''\ndef instances():\n    return [{\"id\": \"1\"}, {\"id\": \"2\"}]\n'''"),
         ("listed instance listed://2 of 'listed' fails to read", "ZeroDivisionError")),
    Case("instances-fail",
         _resource("listing", 'return "x"', uri_template='"listing://{id}"',
                   instances="'''\ndef instances():\n    return 5\n'''"),
         _resource("listing", 'return "x"', uri_template='"listing://{id}"',
                   instances="'''\ndef instances():\n    return [\"listing://1\"]\n'''"),
         ("template 'listing' lists no instances", "must return a list, not int")),
    Case("last-modified-stale",
         _resource("feed", 'return "f"', uri='"feed://today"', watch='{ files = ["data/*.csv"] }',
                   annotations='{ last_modified = "2019-06-01T00:00:00Z" }'),
         _resource("feed", 'return "f"', uri='"feed://today"', watch='{ files = ["data/*.csv"] }',
                   annotations='{ last_modified = "2021-01-01T00:00:00Z" }'),
         ("lastModified 2019-06-01T00:00:00Z", "data/today.csv changed at 2020-01-01T00:00:00+00:00")),
    Case("blocking-in-async",
         _resource("napper", 'return "n"', uri='"docs://napper"').replace(
             "def read(uri, params):\n", "import time\nasync def read(uri, params):\n    time.sleep(0.01)\n"),
         _resource("napper", 'return "n"', uri='"docs://napper"').replace(
             "def read(uri, params):\n",
             "import asyncio\nasync def read(uri, params):\n    await asyncio.sleep(0.01)\n"),
         ("resource 'napper': async def read() calls time.sleep() (line 3)", "shared worker")),
    Case("missing-description",
         _resource("bare", 'return "b"', uri='"docs://bare"', description='""'),
         _resource("bare", 'return "b"', uri='"docs://bare"'),
         ("resource 'bare' has no description",)),
    Case("fetchable-scheme",
         _resource("page", 'return "p"', uri='"https://example.com/page"'),
         _resource("page", 'return "p"', uri='"lint-desk://example.com/page"'),
         ("https://example.com/page", "lint-desk://example.com/page")),
]


def _write(folder: Path, tail: str, name: str) -> Path:
    data = folder / "data"
    data.mkdir(exist_ok=True)
    watched = data / "today.csv"
    watched.write_text("a,b\n")
    stamp = 1577836800  # 2020-01-01T00:00:00Z: between the stale and the fresh declaration
    os.utime(watched, (stamp, stamp))
    path = folder / f"{name}.toml"
    path.write_text(HEAD + "\n" + tail)
    return path


def _lint_json(path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    status = lint_main([str(path), "--format", "json", *args])
    captured = capsys.readouterr()
    assert captured.err == ""
    return status, json.loads(captured.out)


def _line_of(path: Path, name: str) -> int:
    lines = path.read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1)
                if line == "[[resources]]" and lines[number] == f'name = "{name}"')


@pytest.mark.parametrize("case", CASES, ids=[f"{case.rule}-{n}" for n, case in enumerate(CASES)])
def test_each_rule_trips_on_its_project_and_not_on_the_fixed_one(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tripped = _write(tmp_path, case.tripped, "tripped")
    status, report = _lint_json(tripped, capsys)
    findings = [finding for finding in report["findings"] if finding["rule"] == case.rule]  # type: ignore[attr-defined]
    assert len(findings) == 1, report
    (finding,) = findings
    for words in case.says:
        assert words in finding["message"], finding
    level = case.level or next(rule.level for rule in RULES if rule.id == case.rule)
    assert finding["level"] == level
    assert status == (0 if level == "note" else 1)
    name = finding["resource"]
    assert finding["line"] == _line_of(tripped, name)
    assert (finding["fix"] or {}).get("value") == case.fix
    fixed = _write(tmp_path, case.fixed, "fixed")
    status, report = _lint_json(fixed, capsys)
    assert report["findings"] == [], report
    assert status == 0


def test_the_command_line_prints_file_line_level_and_rule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = _write(tmp_path, CASES[0].tripped + "\n" + CASES[-2].tripped, "two")
    assert studio_main(["lint", str(project)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{project}:{_line_of(project, 'sized')}: warning: resource 'sized' declares size 10 bytes but serves 12 "
        "[size-mismatch]",
        f"{project}:{_line_of(project, 'bare')}: note: resource 'bare' has no description: say what it holds and "
        "when to read it [missing-description]",
        "0 errors, 1 warning, 1 note",
    ]


def test_both_eras_merge_a_finding_seen_in_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = _write(tmp_path, CASES[0].tripped, "eras")
    status, report = _lint_json(project, capsys, "--era", "both")
    assert status == 1
    (finding,) = report["findings"]  # type: ignore[misc]
    assert finding["eras"] == ["legacy", "2026-07-28"]
    assert report["reads"] == 2


def test_listed_instances_are_read_up_to_the_bound(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listing = "'''\ndef instances():\n    return [{\"id\": str(n), \"size\": 1} for n in range(1, 9)]\n'''"
    many = _resource("many", 'return "x" * int(params["id"])', uri_template='"many://{id}"', instances=listing)
    project = _write(tmp_path, many, "many")
    status, report = _lint_json(project, capsys, "--max-instances", "3")
    assert status == 1
    uris = sorted(finding["uri"] for finding in report["findings"])  # type: ignore[attr-defined]
    assert uris == ["many://2", "many://3"]  # many://1 serves its declared 1 byte; 4-8 are past the bound
    assert report["notes"] == ["template 'many': 8 instances listed, the first 3 read"]


def test_a_clean_project_through_the_installed_command(tmp_path: Path) -> None:
    project = _write(tmp_path, CASES[0].fixed, "clean")
    done = subprocess.run([sys.executable, "-m", "resources_qt.lint.cli", str(project)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, "0 errors, 0 warnings, 0 notes\n", "")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["missing.toml"], "missing.toml: no such project file"),
        (["{bad}"], "bad.toml:5: resource 'x': unknown key(s): colour"),
        (["{bad}", "--format", "xml"], "argument --format: invalid choice: 'xml'"),
        (["{bad}", "--max-instances", "-1"], "argument --max-instances: must not be negative, not -1"),
        ([], "the following arguments are required: project"),
    ],
)
def test_usage_and_project_errors_exit_2_with_one_line(
    args: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('format = 1\n\n[[resources]]\nname = "x"\ncolour = "red"\nuri = "x://y"\n')
    status = lint_main([arg.replace("{bad}", str(bad)) for arg in args])
    captured = capsys.readouterr()
    assert status == 2 and captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("resource-studio lint: error: ") and says in line, line


def test_output_writes_the_findings_to_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = _write(tmp_path, CASES[0].tripped, "out")
    target = tmp_path / "reports" / "lint.json"
    target.parent.mkdir()
    assert lint_main([str(project), "--format", "json", "--output", str(target)]) == 1
    assert capsys.readouterr().out == ""
    assert json.loads(target.read_text())["counts"] == {"error": 0, "warning": 1, "note": 0}
