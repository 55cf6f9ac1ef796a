"""The `[[tests]]` declarations: what a read of one URI must answer, parsed and written back as TOML."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EXPECTATION_KEYS", "TEST_KEYS", "Expectation", "TestSpec", "TestSpecError", "parse_tests", "test_to_dict"]

EXPECTATION_KEYS = (
    "resource",
    "mime_type",
    "contents",
    "contains",
    "matches",
    "json",
    "blob_sha256",
    "error",
    "snapshot",
    "max_ms",
)
TEST_KEYS = ("name", "uri", "expect")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_TOML_TYPES: dict[type, str] = {
    str: "a string",
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    list: "an array",
    dict: "a table",
}


class TestSpecError(ValueError):
    """A `[[tests]]` entry is invalid.

    `index` is the entry's position in the array (0-based), `key` the key of
    that entry's table the problem sits under (`name`, `uri`, `expect`, or an
    unknown key; None for the entry as a whole), so a loader can point at its
    line. The message names the expectation key too when one is at fault.
    """

    __test__ = False  # not a pytest class, whatever its name says

    def __init__(self, index: int, key: str | None, message: str) -> None:
        super().__init__(message)
        self.index = index
        self.key = key
        self.message = message


@dataclass(frozen=True)
class Expectation:
    """What a read must answer; every field left None is not checked (all given ones must hold)."""

    resource: str | None = None
    """Name of the resource or template the URI must resolve to."""
    mime_type: str | None = None
    """MIME type of the first content."""
    contents: int | None = None
    """Number of contents."""
    contains: str | None = None
    """Substring of the text of the first content (or, with `error`, of the error message)."""
    matches: str | None = None
    """Regular expression searched in that text (or error message)."""
    json: Any = None
    """A JSON value the text must contain as a subset (objects by key, recursively; lists equal)."""
    blob_sha256: str | None = None
    """Lower-case hex SHA-256 of the first content's bytes."""
    error: int | None = None
    """The JSON-RPC error code the read must answer with instead of content."""
    snapshot: bool | None = None
    """True: the content must equal the snapshot recorded beside the project."""
    max_ms: float | None = None
    """The read took at most this many milliseconds."""

    def given(self) -> dict[str, object]:
        """The keys that were given, in declaration order, with their values."""
        return {key: getattr(self, key) for key in EXPECTATION_KEYS if getattr(self, key) is not None}

    @property
    def wants_snapshot(self) -> bool:
        return bool(self.snapshot)


@dataclass(frozen=True)
class TestSpec:
    """One `[[tests]]` entry: read `uri`, check `expect`. `name` defaults to the URI."""

    __test__ = False  # not a pytest class

    name: str
    uri: str
    expect: Expectation = field(default_factory=Expectation)
    named: bool = True
    """False when the file gave no name (so the writer leaves it out again)."""


def parse_tests(raw: list[object]) -> list[TestSpec]:
    """The parsed TOML `tests` array as `TestSpec`s; raises `TestSpecError` for the first bad entry."""
    if not isinstance(raw, list):
        raise TestSpecError(0, None, f"tests must be an array of tables ([[tests]]), not {_type_name(raw)}")
    specs: list[TestSpec] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(raw):
        spec = _parse_test(index, entry)
        if spec.name in seen:
            raise TestSpecError(
                index,
                "name" if spec.named else "uri",
                f"duplicate test name {spec.name!r} (test #{seen[spec.name] + 1} has it too)",
            )
        seen[spec.name] = index
        specs.append(spec)
    return specs


def parse_test(entry: object, *, index: int = 0) -> TestSpec:
    """One entry of the array (for editors adding a single test); see `parse_tests`."""
    return _parse_test(index, entry)


def test_to_dict(spec: TestSpec) -> dict[str, object]:
    """The entry as TOML-ready data, with only the keys that were given."""
    data: dict[str, object] = {}
    if spec.named:
        data["name"] = spec.name
    data["uri"] = spec.uri
    given = spec.expect.given()
    if given:
        data["expect"] = given
    return data


test_to_dict.__test__ = False  # type: ignore[attr-defined]  # a function named test_* is not a pytest test


def _parse_test(index: int, entry: object) -> TestSpec:
    label = f"test #{index + 1}"
    if not isinstance(entry, Mapping):
        raise TestSpecError(index, None, f"{label} must be a table, not {_type_name(entry)}")
    unknown = [key for key in entry if key not in TEST_KEYS]
    if unknown:
        raise TestSpecError(
            index, str(unknown[0]), f"{label}: unknown key {unknown[0]!r} (known: {', '.join(TEST_KEYS)})"
        )
    if "uri" not in entry:
        raise TestSpecError(index, None, f"{label}: a test needs a 'uri'")
    uri = entry["uri"]
    if not isinstance(uri, str) or not uri.strip():
        raise TestSpecError(index, "uri", f"{label}: uri must be a non-empty string, not {_shown(uri)}")
    named = "name" in entry
    name = entry.get("name", uri)
    if not isinstance(name, str) or not name.strip():
        raise TestSpecError(index, "name", f"{label}: name must be a non-empty string, not {_shown(name)}")
    label = f"test {name!r}"
    raw_expect = entry.get("expect", {})
    if not isinstance(raw_expect, Mapping):
        raise TestSpecError(index, "expect", f"{label}: expect must be a table, not {_type_name(raw_expect)}")
    try:
        expect = parse_expectation(raw_expect)
    except ValueError as exc:
        raise TestSpecError(index, "expect", f"{label}: {exc}") from None
    return TestSpec(name=name, uri=uri, expect=expect, named=named)


def parse_expectation(raw: Mapping[str, object]) -> Expectation:
    """An `expect` table as an `Expectation`; raises ValueError naming the key at fault."""
    unknown = [key for key in raw if key not in EXPECTATION_KEYS]
    if unknown:
        raise ValueError(f"unknown expectation key {unknown[0]!r} (known: {', '.join(EXPECTATION_KEYS)})")
    values: dict[str, Any] = {}
    for key in ("resource", "mime_type", "contains", "matches", "blob_sha256"):
        if key in raw:
            values[key] = _string(raw[key], key, allow_empty=key == "contains")
    if "matches" in values:
        try:
            re.compile(values["matches"])
        except re.error as exc:
            raise ValueError(f"expect.matches is not a valid regular expression: {exc}") from None
    if "blob_sha256" in values:
        digest = values["blob_sha256"].lower()
        if not _SHA256.fullmatch(digest):
            raise ValueError(f"expect.blob_sha256 must be 64 hexadecimal digits, not {values['blob_sha256']!r}")
        values["blob_sha256"] = digest
    for key in ("contents", "error"):
        if key in raw:
            values[key] = _integer(raw[key], key)
    if values.get("contents", 0) < 0:
        raise ValueError(f"expect.contents must not be negative, not {values['contents']}")
    if "snapshot" in raw:
        if not isinstance(raw["snapshot"], bool):
            raise ValueError(f"expect.snapshot must be true or false, not {_shown(raw['snapshot'])}")
        values["snapshot"] = raw["snapshot"]
    if "max_ms" in raw:
        max_ms = raw["max_ms"]
        if isinstance(max_ms, bool) or not isinstance(max_ms, (int, float)):
            raise ValueError(f"expect.max_ms must be a number of milliseconds, not {_shown(max_ms)}")
        if not (max_ms > 0 and math.isfinite(max_ms)):
            raise ValueError(f"expect.max_ms must be a positive number of milliseconds, not {max_ms}")
        values["max_ms"] = max_ms
    if "json" in raw:
        values["json"] = _json_value(raw["json"], "expect.json")
    if "error" in values:
        content_keys = [key for key in ("mime_type", "contents", "json", "blob_sha256", "snapshot") if key in values]
        if content_keys and not (content_keys == ["snapshot"] and values["snapshot"] is False):
            raise ValueError(f"expect.error cannot be combined with {content_keys[0]!r}: an error has no content")
    return Expectation(**values)


def _string(value: object, key: str, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expect.{key} must be a string, not {_shown(value)}")
    if not allow_empty and not value:
        raise ValueError(f"expect.{key} must not be empty")
    return value


def _integer(value: object, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"expect.{key} must be an integer, not {_shown(value)}")
    return value


def _json_value(value: object, where: str) -> object:
    """TOML values that JSON can hold (dates and times cannot), copied into plain dicts and lists."""
    if isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where} cannot hold {value} (JSON has no such number)")
        return value
    if isinstance(value, list):
        return [_json_value(item, f"{where}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, Mapping):
        return {str(k): _json_value(v, f"{where}.{k}") for k, v in value.items()}
    raise ValueError(f"{where} must hold JSON values, not {_type_name(value)}")


def _type_name(value: object) -> str:
    return _TOML_TYPES.get(type(value), type(value).__name__)


def _shown(value: object) -> str:
    if isinstance(value, (str, bool, int, float)):
        text = repr(value) if not isinstance(value, bool) else str(value).lower()
        return f"{_type_name(value)} {text}" if not isinstance(value, str) or value else "an empty string"
    return _type_name(value)
