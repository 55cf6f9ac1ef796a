"""The `[[tests]]` declarations: parsing every expectation key, the errors it raises, and writing back."""

from __future__ import annotations

import tomllib

import pytest

from resources_qt.testing.spec import Expectation, TestSpec, TestSpecError, parse_tests, test_to_dict

FULL = """
[[tests]]
name = "profile of customer 42"
uri = "crm://customers/42/profile"
[tests.expect]
resource = "customer_profile"
mime_type = "application/json"
contents = 1
json = { id = "42", tags = ["a"] }
max_ms = 200

[[tests]]
uri = "crm://customers/0/profile"
expect = { error = -32000, contains = "No customer", matches = "cust.mer" }

[[tests]]
uri = "images://logo.png"
expect = { blob_sha256 = "AB12AB12AB12AB12AB12AB12AB12AB12AB12AB12AB12AB12AB12AB12AB12AB12", snapshot = true }

[[tests]]
uri = "config://bare"
"""


def _raw(text: str) -> list[object]:
    tests = tomllib.loads(text)["tests"]
    assert isinstance(tests, list)
    return tests


def test_every_expectation_key_is_parsed() -> None:
    first, second, third, bare = parse_tests(_raw(FULL))
    assert first == TestSpec(
        name="profile of customer 42",
        uri="crm://customers/42/profile",
        expect=Expectation(resource="customer_profile", mime_type="application/json", contents=1,
                           json={"id": "42", "tags": ["a"]}, max_ms=200),
    )
    assert (second.name, second.named) == ("crm://customers/0/profile", False)  # the name defaults to the URI
    assert second.expect == Expectation(error=-32000, contains="No customer", matches="cust.mer")
    assert third.expect.blob_sha256 == "ab12" * 16  # normalised to lower case
    assert third.expect.wants_snapshot
    assert bare.expect == Expectation() and bare.expect.given() == {}


def test_to_dict_writes_back_only_the_keys_given() -> None:
    specs = parse_tests(_raw(FULL))
    written = [test_to_dict(spec) for spec in specs]
    assert written[0] == {
        "name": "profile of customer 42",
        "uri": "crm://customers/42/profile",
        "expect": {"resource": "customer_profile", "mime_type": "application/json", "contents": 1,
                   "json": {"id": "42", "tags": ["a"]}, "max_ms": 200},
    }
    assert written[1] == {"uri": "crm://customers/0/profile",
                          "expect": {"contains": "No customer", "matches": "cust.mer", "error": -32000}}
    assert written[3] == {"uri": "config://bare"}
    assert parse_tests(list(written)) == specs  # the round trip loses nothing


def test_falsy_values_are_kept_as_given() -> None:
    raw: list[object] = [{"uri": "a://b", "expect": {"json": False, "contents": 0, "contains": "", "snapshot": False}}]
    (spec,) = parse_tests(raw)
    assert spec.expect.given() == {"contents": 0, "contains": "", "json": False, "snapshot": False}
    assert not spec.expect.wants_snapshot
    assert test_to_dict(spec)["expect"] == {"contents": 0, "contains": "", "json": False, "snapshot": False}


@pytest.mark.parametrize(
    ("raw", "index", "key", "fragment"),
    [
        ([{"uri": "a://1"}, {"uri": "a://2", "expect": {"mime": "text/plain"}}], 1, "expect",
         "unknown expectation key 'mime'"),
        ([{"name": "no uri"}], 0, None, "needs a 'uri'"),
        ([{"uri": "a://1", "name": "same"}, {"uri": "a://2", "name": "same"}], 1, "name",
         "duplicate test name 'same' (test #1 has it too)"),
        ([{"uri": "a://1"}, {"uri": "a://1"}], 1, "uri", "duplicate test name 'a://1'"),
        ([{"uri": "a://1", "nmae": "typo"}], 0, "nmae", "unknown key 'nmae'"),
        ([{"uri": 3}], 0, "uri", "uri must be a non-empty string, not an integer 3"),
        ([{"uri": ""}], 0, "uri", "uri must be a non-empty string, not an empty string"),
        ([{"uri": "a://1", "name": " "}], 0, "name", "name must be a non-empty string"),
        (["a://1"], 0, None, "test #1 must be a table, not a string"),
        ([{"uri": "a://1", "expect": "json"}], 0, "expect", "expect must be a table, not a string"),
        ([{"uri": "a://1", "expect": {"matches": "(unclosed"}}], 0, "expect",
         "expect.matches is not a valid regular expression"),
        ([{"uri": "a://1", "expect": {"error": "-32000"}}], 0, "expect",
         "expect.error must be an integer, not a string"),
        ([{"uri": "a://1", "expect": {"error": True}}], 0, "expect", "expect.error must be an integer, not a boolean"),
        ([{"uri": "a://1", "expect": {"contents": -1}}], 0, "expect", "expect.contents must not be negative"),
        ([{"uri": "a://1", "expect": {"max_ms": 0}}], 0, "expect", "expect.max_ms must be a positive number"),
        ([{"uri": "a://1", "expect": {"max_ms": "fast"}}], 0, "expect", "expect.max_ms must be a number"),
        ([{"uri": "a://1", "expect": {"snapshot": "yes"}}], 0, "expect", "expect.snapshot must be true or false"),
        ([{"uri": "a://1", "expect": {"blob_sha256": "abc"}}], 0, "expect", "64 hexadecimal digits"),
        ([{"uri": "a://1", "expect": {"mime_type": 1}}], 0, "expect", "expect.mime_type must be a string"),
        ([{"uri": "a://1", "expect": {"resource": ""}}], 0, "expect", "expect.resource must not be empty"),
        ([{"uri": "a://1", "expect": {"json": float("nan")}}], 0, "expect", "expect.json cannot hold nan"),
        ([{"uri": "a://1", "expect": {"error": -32002, "mime_type": "text/plain"}}], 0, "expect",
         "expect.error cannot be combined with 'mime_type'"),
    ],
)
def test_bad_entries_name_the_test_key_and_problem(raw: list[object], index: int, key: str | None,
                                                    fragment: str) -> None:
    with pytest.raises(TestSpecError) as info:
        parse_tests(raw)
    assert (info.value.index, info.value.key) == (index, key)
    assert fragment in info.value.message
    assert str(info.value) == info.value.message


def test_the_error_names_the_test_by_name_once_it_has_one() -> None:
    with pytest.raises(TestSpecError, match=r"^test 'mine': unknown expectation key 'sha'"):
        parse_tests([{"uri": "a://1", "name": "mine", "expect": {"sha": "x"}}])


def test_dates_are_not_json() -> None:
    raw = _raw('[[tests]]\nuri = "a://1"\nexpect = { json = { when = 1979-05-27 } }\n')
    with pytest.raises(TestSpecError, match=r"expect\.json\.when must hold JSON values, not date"):
        parse_tests(raw)


def test_a_non_array_is_refused() -> None:
    with pytest.raises(TestSpecError, match=r"array of tables \(\[\[tests\]\]\), not a table"):
        parse_tests({"uri": "a://1"})  # type: ignore[arg-type]
