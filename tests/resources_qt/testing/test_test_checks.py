"""The pure pieces of resource tests: JSON subsets, bounded diffs, snapshot names and rendering."""

from __future__ import annotations

from pathlib import Path

import pytest

from resources_qt.testing.expectations import SnapshotState, evaluate, json_mismatch
from resources_qt.testing.observed import ObservedContent, ObservedRead
from resources_qt.testing.snapshots import SnapshotStore, render_snapshot, safe_file_name, snapshot_dir_for
from resources_qt.testing.spec import Expectation
from resources_qt.testing.textdiff import MAX_DIFF_LINES, MAX_LINE, unified_diff


@pytest.mark.parametrize(
    ("expected", "got", "mismatch"),
    [
        ({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}, "d": 3}, None),
        ({"a": {"b": 1}}, {"a": {"b": 2}}, "at $.a.b expected 1, got 2"),
        ({"a": [1, {"x": 1}]}, {"a": [1, {"x": 1, "y": 2}]},
         'at $.a expected [1, {"x": 1}], got [1, {"x": 1, "y": 2}]'),
        ({"a b": 1}, {}, 'at $["a b"] expected 1, got no such key'),
        ({"a": {}}, {"a": []}, "at $.a expected an object, got []"),
        ({"n": 1}, {"n": 1.0}, None),
        ({"n": True}, {"n": 1}, "at $.n expected true, got 1"),
        ({"s": "1"}, {"s": 1}, 'at $.s expected "1", got 1'),
        ([1, 2], [1, 2], None),
        ("x", "x", None),
    ],
)
def test_json_subset(expected: object, got: object, mismatch: str | None) -> None:
    assert json_mismatch(expected, got) == mismatch


def test_diffs_are_truncated_sensibly() -> None:
    expected = "\n".join(f"line {i}" + "x" * (MAX_LINE if i == 0 else 0) for i in range(500))
    got = "\n".join(f"LINE {i}" for i in range(500))
    diff = unified_diff(expected, got).splitlines()
    assert len(diff) == MAX_DIFF_LINES + 1
    assert diff[-1] == f"… ({1002 + 1 - MAX_DIFF_LINES} more diff lines)"
    assert any(line.endswith("(7 more characters)") for line in diff)  # "-line 0" + 200 x, cut at 200
    assert "final newline" in unified_diff("a\n", "a")


def test_snapshot_file_names_are_safe_and_distinct() -> None:
    assert safe_file_name("profile_42.v1") == "profile_42.v1.txt"
    slashed, spaced = safe_file_name("a/b"), safe_file_name("a b")
    assert slashed != spaced and slashed.startswith("a_b-") and slashed.endswith(".txt")
    assert safe_file_name("../../etc/passwd").startswith("etc_passwd-")
    assert safe_file_name("sample: crm://x/{id}").startswith("sample_crm_x_id-")
    assert len(safe_file_name("x" * 500)) < 100
    assert safe_file_name("...").startswith("test-")
    assert snapshot_dir_for(Path("/p/desk.toml")) == Path("/p/desk.snapshots")


def test_snapshot_rendering_shows_every_content_and_no_content() -> None:
    observed = ObservedRead(uri="m://x", contents=(
        ObservedContent(uri="m://x", mime_type="text/plain", text="a"),
        ObservedContent(uri="m://x#2", mime_type=None, blob=b"\x00\x01"),
    ))
    assert render_snapshot(observed) == (
        "=== content 1 of 2: m://x (text/plain)\na\n"
        "=== content 2 of 2: m://x#2 (no MIME type)\n"
        "blob sha256=b413f47d13ee2fe6c845b2ee141af81de858df4ec549a58b7970bb96645bc8d2 size=2 bytes\n"
    )
    assert render_snapshot(ObservedRead(uri="m://x")) == "=== no contents\n"


def test_snapshot_store_writes_atomically(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path / "p.snapshots")
    assert store.read("t") is None
    path = store.write("t", "one\n")
    assert store.read("t") == "one\n" and path.name == "t.txt"
    store.write("t", "two\n")
    assert [p.name for p in (tmp_path / "p.snapshots").iterdir()] == ["t.txt"]  # no temporary left behind


def test_a_snapshot_without_a_project_file_fails_clearly() -> None:
    read = ObservedRead(uri="a://b", contents=(ObservedContent(uri="a://b", mime_type="text/plain", text="x"),))
    failures = evaluate(Expectation(snapshot=True), read, snapshot=SnapshotState(None, "(no snapshot directory)"))
    assert failures == ["snapshot: none recorded at (no snapshot directory) (run with --update-snapshots to record it)"]
    assert evaluate(Expectation(snapshot=False), read) == []


def test_contains_with_an_empty_read_says_so() -> None:
    assert evaluate(Expectation(contains="x"), ObservedRead(uri="a://b")) == ["expected text, got no content"]
    assert evaluate(Expectation(mime_type="text/plain"), ObservedRead(uri="a://b")) == [
        "mime_type: expected 'text/plain', got no content"
    ]


def test_huge_texts_are_diffed_on_their_first_lines_only() -> None:
    big = "\n".join(f"row {i}" for i in range(100_000))
    changed = big.replace("row 5\n", "row five\n")
    diff = unified_diff(big, changed)
    assert "-row 5\n+row five" in diff
    assert diff.endswith("… (only the first 2000 lines of each side were compared)")
    later = unified_diff(big, big + "\nrow 100000")
    assert "the first 2000 lines are equal; the texts differ further on: 100000 lines against 100001" in later
