"""The runner end to end: the project served over HTTP, read by the SDK client in each era, every check."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.resource_tests import CHECKS_PROJECT, LOGO_SHA256

from resources_qt.project import loads_project
from resources_qt.testing.runner import ERAS, TestResult, collect_tests, run_tests, select_tests
from resources_qt.testing.snapshots import SnapshotStore
from resources_qt.testing.spec import parse_tests

# Each name says what it checks and whether it must pass ("ok") or fail ("bad").
TESTS: list[object] = [
    {"name": "ok resource template", "uri": "crm://customers/42/profile", "expect": {"resource": "profile"}},
    {"name": "bad resource", "uri": "crm://customers/42/profile", "expect": {"resource": "greeting"}},
    {"name": "bad resource none", "uri": "nowhere://x", "expect": {"resource": "greeting"}},
    {"name": "ok mime", "uri": "text://greeting", "expect": {"mime_type": "text/plain"}},
    {"name": "bad mime", "uri": "text://greeting", "expect": {"mime_type": "application/json"}},
    {"name": "ok contents", "uri": "multi://pair", "expect": {"contents": 2}},
    {"name": "bad contents", "uri": "multi://pair", "expect": {"contents": 1}},
    {"name": "ok contains", "uri": "text://greeting", "expect": {"contains": "lo wor"}},
    {"name": "bad contains", "uri": "text://greeting", "expect": {"contains": "hello there"}},
    {"name": "ok matches", "uri": "text://greeting", "expect": {"matches": "(?m)^second"}},
    {"name": "bad matches", "uri": "text://greeting", "expect": {"matches": "^world"}},
    {"name": "ok json", "uri": "crm://customers/42/profile",
     "expect": {"json": {"id": "42", "tags": ["vip", "beta"], "active": True}}},
    {"name": "bad json value", "uri": "crm://customers/42/profile", "expect": {"json": {"name": "Ada"}}},
    {"name": "bad json list", "uri": "crm://customers/42/profile", "expect": {"json": {"tags": ["vip"]}}},
    {"name": "bad json bool", "uri": "crm://customers/42/profile", "expect": {"json": {"active": 1}}},
    {"name": "bad json text", "uri": "text://greeting", "expect": {"json": {"a": 1}}},
    {"name": "ok blob", "uri": "img://logo.png", "expect": {"blob_sha256": LOGO_SHA256, "mime_type": "image/png"}},
    {"name": "bad blob", "uri": "img://logo.png", "expect": {"blob_sha256": "0" * 64}},
    {"name": "ok error", "uri": "crm://customers/0/profile", "expect": {"error": -32000, "contains": "No customer 0"}},
    {"name": "bad error code", "uri": "crm://customers/0/profile", "expect": {"error": -32602}},
    {"name": "bad error message", "uri": "crm://customers/0/profile",
     "expect": {"error": -32000, "matches": "no such"}},
    {"name": "bad error content", "uri": "text://greeting", "expect": {"error": -32000}},
    {"name": "bad unexpected error", "uri": "crm://customers/0/profile", "expect": {"mime_type": "application/json"}},
    {"name": "ok max_ms", "uri": "slow://read", "expect": {"max_ms": 60000}},
    {"name": "bad max_ms", "uri": "slow://read", "expect": {"max_ms": 1}},
    {"name": "bad text of blob", "uri": "img://logo.png", "expect": {"contains": "PNG"}},
]


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, str], TestResult]:
    project = loads_project(CHECKS_PROJECT)
    cases = collect_tests(project, parse_tests(TESTS))
    ran = run_tests(project, cases, eras=ERAS)
    return {(result.name, result.era): result for result in ran}


def _failure(results: dict[tuple[str, str], TestResult], name: str, era: str = "legacy") -> str:
    result = results[(name, era)]
    assert not result.passed, f"{name} passed in {era}"
    return "\n".join(result.failures)


@pytest.mark.parametrize("era", ERAS)
def test_each_check_passes_and_fails_as_declared_in_both_eras(results: dict[tuple[str, str], TestResult],
                                                             era: str) -> None:
    for entry in TESTS:
        assert isinstance(entry, dict)
        name = entry["name"]
        outcome = results[(name, era)]
        assert outcome.passed is name.startswith("ok "), (name, era, outcome.failures)
        assert outcome.elapsed_ms > 0


def test_samples_run_as_implicit_tests_unless_a_declared_test_reads_them(
    results: dict[tuple[str, str], TestResult],
) -> None:
    # TESTS read every sample URI of the project: each declared test replaces that implicit one.
    assert not [name for (name, _era) in results if name.startswith("sample: ")]
    project = loads_project(CHECKS_PROJECT)
    cases = collect_tests(project, [])
    # The template's declared sample, and each direct resource's own URI.
    assert sorted(case.name for case in cases) == [
        "sample: crm://customers/42/profile", "sample: img://logo.png", "sample: multi://pair",
        "sample: slow://read", "sample: text://greeting"]
    template = [case for case in cases if case.sample_of == "profile"]
    (sample,) = run_tests(project, template, eras=("2026-07-28",))
    assert sample.name == "sample: crm://customers/42/profile"
    assert sample.passed and sample.sample_of == "profile" and sample.resource == "profile"


def test_failures_say_what_was_expected_and_what_came(results: dict[tuple[str, str], TestResult]) -> None:
    assert _failure(results, "bad resource") == "resource: expected 'greeting', got 'profile'"
    assert "got no resource or template" in _failure(results, "bad resource none")
    assert _failure(results, "bad mime") == "mime_type: expected 'application/json', got 'text/plain'"
    assert _failure(results, "bad contents") == "contents: expected 1, got 2"
    contains = _failure(results, "bad contains")
    assert contains.startswith("contains: 'hello there' not found in the text\n--- expected (contains)\n+++ text")
    assert "\n-hello there\n+hello world\n+second line" in contains
    assert _failure(results, "bad matches") == "matches: /^world/ not found in the text: 'hello world\\nsecond line\\n'"
    assert _failure(results, "bad json value").startswith("json: at $.name expected \"Ada\", got \"Ada Lovelace\"")
    assert "at $.tags expected [\"vip\"], got [\"vip\", \"beta\"]" in _failure(results, "bad json list")
    assert "at $.active expected 1, got true" in _failure(results, "bad json bool")
    assert _failure(results, "bad json text").startswith("json: the text is not JSON (Expecting value at line 1")
    assert _failure(results, "bad blob") == f"blob_sha256: expected {'0' * 64}, got {LOGO_SHA256} (blob, 16 bytes)"
    # The reader's message is wrapped by the pool (naming the URI and the line); only its gist is asserted.
    code = _failure(results, "bad error code")
    assert code.startswith("error: expected code -32602, got -32000: '") and "No customer 0" in code
    message = _failure(results, "bad error message")
    assert message.startswith("matches: /no such/ not found in the error message: '") and "No customer 0" in message
    assert _failure(results, "bad error content") == (
        "error: expected error -32000, got 1 content(s) (text/plain, 'hello world\\nsecond line\\n')"
    )
    unexpected = _failure(results, "bad unexpected error")
    assert unexpected.startswith("expected content, got error -32000: '") and "No customer 0" in unexpected
    assert _failure(results, "bad max_ms").startswith("max_ms: expected at most 1 ms, took ")
    assert _failure(results, "bad text of blob") == "expected text, got a 16-byte blob (image/png)"


def test_the_eras_answer_an_unknown_uri_with_their_own_code(tmp_path: Path) -> None:
    project = loads_project(CHECKS_PROJECT)
    cases = collect_tests(project, parse_tests([{"uri": "nowhere://x", "expect": {"error": -32002}}]), samples=False)
    legacy, modern = run_tests(project, cases, eras=ERAS)
    assert (legacy.era, legacy.passed) == ("legacy", True)
    assert modern.era == "2026-07-28"
    assert modern.failures[0].startswith("error: expected code -32002, got -32602")
    assert modern.label(with_era=True) == "nowhere://x [2026-07-28]"


def test_snapshots_are_recorded_then_held_then_diffed(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path / "checks.snapshots")
    source = CHECKS_PROJECT
    specs = parse_tests([{"name": "greeting/text", "uri": "text://greeting", "expect": {"snapshot": True}},
                         {"name": "logo", "uri": "img://logo.png", "expect": {"snapshot": True}}])

    def run(text: str, *, update: bool) -> list[TestResult]:
        project = loads_project(text)
        return run_tests(project, collect_tests(project, specs, samples=False), snapshots=store,
                         update_snapshots=update)

    missing = run(source, update=False)
    assert [r.passed for r in missing] == [False, False]
    assert "snapshot: none recorded at" in missing[0].failures[0] and "--update-snapshots" in missing[0].failures[0]
    recorded = run(source, update=True)
    assert [(r.passed, r.note) for r in recorded] == [(True, "snapshot recorded")] * 2
    text_file = store.path_for("greeting/text")
    assert text_file.parent == tmp_path / "checks.snapshots" and "/" not in text_file.name
    assert text_file.read_text() == "=== content 1 of 1: text://greeting (text/plain)\nhello world\nsecond line\n\n"
    assert store.path_for("logo").read_text() == (
        f"=== content 1 of 1: img://logo.png (image/png)\nblob sha256={LOGO_SHA256} size=16 bytes\n"
    )
    held = run(source, update=False)
    assert [(r.passed, r.note) for r in held] == [(True, "")] * 2
    changed = source.replace('return "hello world', 'return "hello there world')
    diffed = run(changed, update=False)
    assert [r.passed for r in diffed] == [False, True]
    failure = diffed[0].failures[0]
    assert failure.startswith(f"snapshot: the content differs from {text_file}\n--- snapshot {text_file}\n+++ read")
    assert "\n-hello world\n+hello there world\n" in failure
    assert text_file.read_text().count("hello world") == 1  # a failing check never rewrites the snapshot
    updated = run(changed, update=True)
    assert [(r.passed, r.note) for r in updated] == [(True, "snapshot updated"), (True, "")]
    assert "hello there world" in text_file.read_text()


def test_select_by_substring_or_glob() -> None:
    project = loads_project(CHECKS_PROJECT)
    cases = collect_tests(project, parse_tests(TESTS))
    assert [c.name for c in select_tests(cases, "JSON LIST")] == ["bad json list"]
    assert [c.name for c in select_tests(cases, "ok m*")] == ["ok mime", "ok matches", "ok max_ms"]
    assert len(select_tests(cases, None)) == len(cases)


def test_overlapping_reads_never_exceed_the_projects_read_queue() -> None:
    # One worker, one read allowed to wait: more in flight would be answered "busy" (-32000).
    text = CHECKS_PROJECT.replace("workers = 2\n", "workers = 1\nmax_queued_reads = 1\n")
    project = loads_project(text)
    assert project.server.max_queued_reads == 1
    specs = parse_tests([{"name": f"greeting {i}", "uri": "text://greeting"} for i in range(12)])
    results = run_tests(project, collect_tests(project, specs, samples=False))
    assert [r.failures for r in results] == [()] * 12


def test_a_snapshot_that_cannot_be_read_or_recorded_fails_that_test_only(tmp_path: Path) -> None:
    blocked = tmp_path / "checks.snapshots"
    blocked.symlink_to(tmp_path / "gone")  # nothing recorded to read, and no directory can be made there
    project = loads_project(CHECKS_PROJECT)
    specs = parse_tests([{"name": "greeting", "uri": "text://greeting", "expect": {"snapshot": True}},
                         {"name": "plain", "uri": "text://greeting"}])
    cases = collect_tests(project, specs, samples=False)
    recording = run_tests(project, cases, snapshots=SnapshotStore(blocked), update_snapshots=True)
    assert recording[0].failures[0].startswith(f"snapshot: cannot record {blocked / 'greeting.txt'}: ")
    assert recording[1].passed
    (tmp_path / "dir.snapshots" / "greeting.txt").mkdir(parents=True)  # unreadable as a file
    reading = run_tests(project, cases, snapshots=SnapshotStore(tmp_path / "dir.snapshots"))
    assert reading[0].failures[0].startswith("snapshot: cannot read ") and reading[1].passed
