"""Checking one read against its expectation: every given key must hold; each failure says expected vs got."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from resources_qt.testing.observed import ObservedRead
from resources_qt.testing.regex import RegexSearcher, RegexTimeout, shared_searcher
from resources_qt.testing.snapshots import render_snapshot
from resources_qt.testing.spec import Expectation
from resources_qt.testing.textdiff import excerpt, unified_diff

__all__ = ["SnapshotState", "evaluate", "json_mismatch"]


@dataclass(frozen=True)
class SnapshotState:
    """What the runner knows of a test's snapshot: the recorded text (None: none yet) and where it lives."""

    recorded: str | None
    location: str
    error: str = ""
    """Why the snapshot could not be read or recorded ("" when it could)."""


def evaluate(
    expect: Expectation,
    observed: ObservedRead,
    *,
    snapshot: SnapshotState | None = None,
    searcher: RegexSearcher | None = None,
    test: str = "",
) -> list[str]:
    """The failures of `observed` against `expect`, one message per key that does not hold ([] = passed).

    `matches` is searched by `searcher` (by default the process's shared one,
    `regex.DEFAULT_DEADLINE` seconds): a pattern that backtracks past its
    deadline is a failure saying it timed out, naming `test`. Everything
    else an expectation checks is linear or bounded (diffs see at most
    `textdiff.MAX_DIFF_INPUT_LINES` lines), so the regex is the one check
    that needs a deadline.
    """
    checks = _Checks(searcher or shared_searcher(), test)
    failures: list[str] = []
    if expect.resource is not None and observed.resource != expect.resource:
        got = repr(observed.resource) if observed.resource is not None else "no resource or template (none matches)"
        failures.append(f"resource: expected {expect.resource!r}, got {got}")
    if expect.error is not None:
        failures.extend(_check_error(expect, observed, checks))
    elif observed.failed:
        failures.append(
            f"expected content, got error {observed.error_code}: {excerpt(observed.error_message)}"
        )
    else:
        failures.extend(_check_content(expect, observed, snapshot, checks))
    if expect.max_ms is not None and observed.elapsed_ms > expect.max_ms:
        failures.append(f"max_ms: expected at most {expect.max_ms:g} ms, took {observed.elapsed_ms:.1f} ms")
    return failures


@dataclass(frozen=True)
class _Checks:
    searcher: RegexSearcher
    test: str


def _check_error(expect: Expectation, observed: ObservedRead, checks: _Checks) -> list[str]:
    if not observed.failed:
        first = observed.first
        what = f"{len(observed.contents)} content(s)"
        if first is not None:
            what += f" ({first.mime_type or 'no MIME type'}"
            body = excerpt(first.text, 120) if first.text is not None else f"a {len(first.data())}-byte blob"
            what += f", {body})"
        return [f"error: expected error {expect.error}, got {what}"]
    failures: list[str] = []
    message = observed.error_message
    if observed.error_code != expect.error:
        failures.append(f"error: expected code {expect.error}, got {observed.error_code}: {excerpt(message)}")
    failures.extend(_check_text(expect, message, what="error message", checks=checks))
    return failures


def _check_content(
    expect: Expectation, observed: ObservedRead, snapshot: SnapshotState | None, checks: _Checks
) -> list[str]:
    failures: list[str] = []
    first = observed.first
    if expect.contents is not None and len(observed.contents) != expect.contents:
        failures.append(f"contents: expected {expect.contents}, got {len(observed.contents)}")
    if expect.mime_type is not None and observed.mime_type != expect.mime_type:
        got = repr(observed.mime_type) if first is not None else "no content"
        failures.append(f"mime_type: expected {expect.mime_type!r}, got {got}")
    wants_text = expect.contains is not None or expect.matches is not None or expect.json is not None
    if wants_text:
        if first is None:
            failures.append("expected text, got no content")
        elif first.text is None:
            failures.append(
                f"expected text, got a {len(first.data())}-byte blob ({first.mime_type or 'no MIME type'})"
            )
        else:
            failures.extend(_check_text(expect, first.text, what="text", checks=checks))
            if expect.json is not None:
                failures.extend(_check_json(expect.json, first.text))
    if expect.blob_sha256 is not None:
        if first is None:
            failures.append(f"blob_sha256: expected {expect.blob_sha256}, got no content")
        elif first.sha256 != expect.blob_sha256:
            kind = "blob" if first.is_blob else "text (as UTF-8)"
            failures.append(
                f"blob_sha256: expected {expect.blob_sha256}, got {first.sha256} ({kind}, {len(first.data())} bytes)"
            )
    if expect.wants_snapshot and snapshot is not None:
        failures.extend(_check_snapshot(observed, snapshot))
    return failures


def _check_text(expect: Expectation, text: str, *, what: str, checks: _Checks) -> list[str]:
    failures: list[str] = []
    if expect.contains is not None and expect.contains not in text:
        diff = unified_diff(expect.contains, text, expected_label="expected (contains)", got_label=what)
        failures.append(f"contains: {excerpt(expect.contains, 120)} not found in the {what}\n{diff}")
    if expect.matches is not None:
        failure = _check_matches(expect.matches, text, what=what, checks=checks)
        if failure:
            failures.append(failure)
    return failures


def _check_matches(pattern: str, text: str, *, what: str, checks: _Checks) -> str:
    try:
        if checks.searcher.search(pattern, text):
            return ""
    except RegexTimeout as exc:
        test = f" in test {checks.test!r}" if checks.test else ""
        return (f"matches: timed out after {exc.deadline:g} s{test}: /{pattern}/ against the {what} "
                f"({len(text)} characters) did not finish; a pattern that backtracks this much needs rewriting")
    except re.error as exc:  # only an Expectation built by hand: the loader refuses invalid patterns
        return f"matches: /{pattern}/ is not a valid regular expression: {exc}"
    except RuntimeError as exc:
        return f"matches: /{pattern}/ could not be searched: {exc}"
    return f"matches: /{pattern}/ not found in the {what}: {excerpt(text)}"


def _check_json(expected: object, text: str) -> list[str]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return [f"json: the text is not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}): {excerpt(text)}"]
    mismatch = json_mismatch(expected, value)
    if mismatch is None:
        return []
    return [f"json: {mismatch}\n  got: {excerpt(json.dumps(value, ensure_ascii=False))}"]


def json_mismatch(expected: object, got: object, path: str = "$") -> str | None:
    """Where `got` fails to contain `expected` (objects by key, recursively; lists and scalars equal), or None."""
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return f"at {path} expected an object, got {_json_text(got)}"
        for key, value in expected.items():
            where = f"{path}.{key}" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) else f"{path}[{json.dumps(key)}]"
            if key not in got:
                return f"at {where} expected {_json_text(value)}, got no such key"
            found = json_mismatch(value, got[key], where)
            if found is not None:
                return found
        return None
    if not _same(expected, got):
        return f"at {path} expected {_json_text(expected)}, got {_json_text(got)}"
    return None


def _same(a: object, b: object) -> bool:
    # JSON's true is not 1 and "1" is not 1, whatever Python's == says.
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _json_text(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 120 else f"{text[:120]}… ({len(text) - 120} more characters)"


def _check_snapshot(observed: ObservedRead, snapshot: SnapshotState) -> list[str]:
    if snapshot.error:
        return [f"snapshot: {snapshot.error}"]
    rendered = render_snapshot(observed)
    if snapshot.recorded is None:
        return [f"snapshot: none recorded at {snapshot.location} (run with --update-snapshots to record it)"]
    if snapshot.recorded == rendered:
        return []
    diff = unified_diff(snapshot.recorded, rendered, expected_label=f"snapshot {snapshot.location}", got_label="read")
    return [f"snapshot: the content differs from {snapshot.location}\n{diff}"]
