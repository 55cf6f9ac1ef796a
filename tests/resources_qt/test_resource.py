"""A resource's reader: the call forms, sync and async, and how failures map to JSON-RPC codes."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Mapping
from typing import Any

import mcp_types as types
import pytest

from resources_qt import (
    INTERNAL_ERROR,
    OPERATION_FAILED,
    Annotations,
    Icon,
    ReaderFailedError,
    ReaderMissingError,
    Resource,
    ResourceContent,
    ResourceNotFoundError,
    ValidationError,
)


def read(resource: Resource, uri: str, params: Mapping[str, Any] | None = None) -> list[ResourceContent]:
    return asyncio.run(resource.read(uri, params))


def template(reader: object, mime_type: str = "text/plain") -> Resource:
    return Resource(
        name="t",
        uri_template="tickets://{id}/attachment",
        mime_type=mime_type,
        reader=reader,  # type: ignore[arg-type]
    )


def test_seed_form_reader_receives_the_concrete_uri() -> None:
    seen: list[str] = []

    def reader(uri: str) -> ResourceContent:
        seen.append(uri)
        return ResourceContent.from_text(uri, "text/plain", "body")

    [content] = read(template(reader), "tickets://42/attachment", {"id": "42"})
    assert seen == ["tickets://42/attachment"]
    assert content.uri == "tickets://42/attachment"


def test_two_argument_reader_receives_the_params() -> None:
    [content] = read(template(lambda uri, params: f"{uri} {params}"), "tickets://7/attachment", {"id": "7"})
    assert content.text == "tickets://7/attachment {'id': '7'}"
    # A direct resource's reader gets empty params.
    direct = Resource(name="d", uri="config://app", reader=lambda uri, params: repr(params))
    assert read(direct, "config://app")[0].text == "{}"


def test_async_readers_in_both_forms() -> None:
    async def one(uri: str) -> str:
        await asyncio.sleep(0)
        return "one"

    async def two(uri: str, params: Mapping[str, Any]) -> bytes:
        await asyncio.sleep(0)
        return params["id"].encode()

    assert read(template(one), "tickets://1/attachment", {"id": "1"})[0].text == "one"
    assert read(template(two, "image/png"), "tickets://1/attachment", {"id": "1"})[0].data() == b"1"


def test_callables_of_every_shape() -> None:
    class Reader:
        def __call__(self, uri: str, params: Mapping[str, Any]) -> str:
            return params["id"]

        def method(self, uri: str) -> str:
            return "bound"

    def three(uri: str, params: Mapping[str, Any], extra: str) -> str:
        return extra

    class SeedForm:
        def __call__(self, uri: str) -> str:
            return f"seed {uri}"

    class NoArguments:
        def __call__(self) -> str:
            return "never"

    assert read(template(Reader()), "tickets://5/attachment", {"id": "5"})[0].text == "5"
    assert read(template(SeedForm()), "tickets://5/attachment")[0].text == "seed tickets://5/attachment"
    assert read(template(Reader().method), "tickets://5/attachment")[0].text == "bound"
    assert read(template(functools.partial(three, extra="p")), "tickets://5/attachment")[0].text == "p"
    with pytest.raises(ValidationError, match="takes the URI"):
        template(lambda: "no arguments")
    with pytest.raises(ValidationError, match="takes the URI"):
        template(NoArguments())


def test_missing_reader_is_an_internal_error() -> None:
    resource = Resource(name="r", uri="x://r")
    with pytest.raises(ReaderMissingError) as caught:
        read(resource, "x://r")
    assert caught.value.code == INTERNAL_ERROR == -32603
    assert "'r' has no reader" in caught.value.message


def test_raising_reader_is_wrapped_with_its_message() -> None:
    def reader(uri: str) -> str:
        raise FileNotFoundError(f"No report stored for {uri}")

    with pytest.raises(ReaderFailedError) as caught:
        read(template(reader), "tickets://3/attachment")
    assert caught.value.code == OPERATION_FAILED == -32000
    assert "No report stored for tickets://3/attachment" in caught.value.message
    assert caught.value.data == {"uri": "tickets://3/attachment"}
    assert isinstance(caught.value.__cause__, FileNotFoundError)


def test_none_from_a_reader_is_the_generic_failure() -> None:
    with pytest.raises(
        ReaderFailedError, match="Resource reader returned None for URI: tickets://3/attachment"
    ):
        read(template(lambda uri: None), "tickets://3/attachment")


def test_resource_errors_raised_inside_a_reader_are_reader_failures() -> None:
    # The seed contract: whatever a reader raises is -32000 with its message
    # wrapped; a -32002 or -32602 from inside a reader would misreport a
    # reader bug as a lookup or declaration problem.
    def missing(uri: str) -> str:
        raise ResourceNotFoundError(uri)

    with pytest.raises(ReaderFailedError) as caught:
        read(template(missing), "tickets://404/attachment")
    assert caught.value.code == OPERATION_FAILED
    assert "Resource not found: tickets://404/attachment" in caught.value.message
    assert caught.value.data == {"uri": "tickets://404/attachment"}

    with pytest.raises(ReaderFailedError) as invalid:
        read(template(lambda uri: ResourceContent.from_blob(uri, "image/png", "")), "tickets://1/attachment")
    assert invalid.value.code == OPERATION_FAILED
    assert "is empty" in invalid.value.message


def test_reader_failures_in_the_contract_words_pass_through() -> None:
    def failed(uri: str) -> str:
        raise ReaderFailedError("snippet timed out", data={"uri": uri, "reason": "timeout"})

    with pytest.raises(ReaderFailedError) as caught:
        read(template(failed), "tickets://1/attachment")
    assert caught.value.message == "snippet timed out"
    assert caught.value.data == {"uri": "tickets://1/attachment", "reason": "timeout"}


def test_a_slow_plain_reader_does_not_hold_up_the_event_loop() -> None:
    started, release = threading.Event(), threading.Event()

    def slow(uri: str) -> str:
        started.set()
        release.wait(5)
        return "slow"

    async def both() -> tuple[str, str]:
        slow_read = asyncio.ensure_future(template(slow).read("tickets://1/attachment"))
        while not started.is_set():
            await asyncio.sleep(0.01)
        fast = await template(lambda uri: "fast").read("tickets://2/attachment")
        # The fast read finished while the slow one is still blocked.
        assert not slow_read.done()
        release.set()
        return fast[0].text or "", (await slow_read)[0].text or ""

    assert asyncio.run(both()) == ("fast", "slow")


def test_cancellation_is_not_turned_into_a_failure() -> None:
    async def reader(uri: str) -> str:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        read(template(reader), "tickets://1/attachment")


def test_validate_names_each_problem() -> None:
    def ok(uri: str) -> str:
        return "x"

    cases = {
        "Resource name must not be empty": Resource(uri="x://1", reader=ok),
        "Cannot set both URI and URITemplate": Resource(
            name="n", uri="x://1", uri_template="x://{a}", reader=ok
        ),
        "needs a URI or a URI template": Resource(name="n", reader=ok),
        "URI must not be blank": Resource(name="n", uri="  ", reader=ok),
        "looks like a template; declare it as uri_template": Resource(name="n", uri="x://{id}", reader=ok),
        "has no reader": Resource(name="n", uri="x://1"),
        "completions need a URI template": Resource(
            name="n", uri="x://1", reader=ok, completions={"a": ["1"]}
        ),
        "size must be an int": Resource(name="n", uri="x://1", reader=ok, size="9"),  # type: ignore[arg-type]
        "uri must be a str": Resource(name="n", uri=5, reader=ok),  # type: ignore[arg-type]
        "contains ' ' at character 5; spaces and control characters must be percent-encoded": Resource(
            name="n", uri="x:/a b", reader=ok
        ),
        "URI template 'x://{a}\\tb' contains '\\t'": Resource(name="n", uri_template="x://{a}\tb", reader=ok),
        "URI 'readme' has no scheme; write it as scheme:...": Resource(name="n", uri="readme", reader=ok),
    }
    for message, resource in cases.items():
        with pytest.raises(ValidationError) as caught:
            resource.validate()
        assert message in caught.value.message, (message, caught.value.message)
        assert caught.value.code == -32602


def test_is_template_decides_the_listing_type() -> None:
    direct = Resource(
        name="d", uri="config://app", mime_type="application/json", size=10, reader=lambda u: ""
    )
    templ = Resource(name="t", uri_template="crm://customers/{id}/profile", reader=lambda u: "")
    assert not direct.is_template and templ.is_template
    assert isinstance(direct.to_mcp(), types.Resource) and direct.key == "config://app"
    listing = templ.to_mcp()
    assert isinstance(listing, types.ResourceTemplate) and listing.uri_template == templ.key
    assert templ.compiled_template.variable_names == ("id",)
    # A resource that somehow carries both is treated as a template (its URI never resolves).
    assert Resource(name="b", uri="x://1", uri_template="x://{a}").is_template


def test_copy_is_detached() -> None:
    original = Resource(name="o", uri_template="x://{a}", reader=lambda u: "", completions={"a": ["1"]})
    dup = original.copy()
    dup.completions["a"] = ["2"]
    dup.icons.append(Icon("i.png"))
    dup.name = "d"
    assert original.completions == {"a": ["1"]} and original.icons == [] and original.name == "o"
    assert dup.reader is original.reader



def _args(*args: object) -> str:
    return ",".join(type(a).__name__ for a in args)


def _uri_only(uri):
    return _args(uri)


def _uri_and_params(uri, params):
    return _args(uri, params)


def _star(*args):
    return _args(*args)


def _keyword_after(uri, *, flag=1):
    return _args(uri)


@functools.wraps(_uri_and_params)
def _wrapper(*args):
    return _args(*args)


def _prefixed(prefix, uri):
    return _args(uri)


@pytest.mark.parametrize(
    ("reader", "received"),
    [(_uri_only, "str"), (_uri_and_params, "str,dict"), (_star, "str,dict"), (_keyword_after, "str"),
     (_wrapper, "str,dict"), (lambda uri: type(uri).__name__, "str"), (functools.partial(_prefixed, "p"), "str")],
    ids=["uri", "uri-params", "star", "keyword-only", "wraps", "lambda", "partial"],
)  # fmt: skip
def test_a_reader_gets_the_arguments_its_signature_takes(reader, received) -> None:
    """Plain functions are read from their code object, the rest through inspect.signature: the same answer."""
    resource = Resource(name="r", uri="test://r", mime_type="text/plain", reader=reader)
    assert [content.text for content in read(resource, "test://r", {})] == [received]


def test_listing_fields_differ_exactly_when_the_listing_entries_do() -> None:
    base = Resource(name="r", uri="x://r", title="R", description="d", mime_type="text/plain", size=3,
                    icons=[Icon(src="data:,", mime_type="image/png", sizes=("16x16",))],
                    annotations=Annotations(audience=("user",), priority=0.5), meta={"k": 1})
    variants = [
        Resource(name="r2", uri="x://r"), Resource(name="r", uri="x://other"),
        Resource(name="r", uri_template="x://{id}"), Resource(name="r", uri_template="x://{id}/more"),
        Resource(name="r", uri="x://r", size=4), Resource(name="r", uri="x://r", meta={"k": 2}),
        Resource(name="r", uri="x://r", icons=[Icon(src="data:,")]),
        Resource(name="r", uri="x://r", annotations=Annotations(priority=0.5)),
        Resource(name="r", uri="x://r", annotations=Annotations()),  # empty: listed as none
        Resource(name="r", uri="x://r", title="", description=""),
        Resource(name="r", uri="x://r", reader=lambda uri: "a reader is not listed"),
    ]
    for left in [base, *variants]:
        for right in [base, *variants]:
            same_entry = left.to_mcp().model_dump() == right.to_mcp().model_dump()
            assert (left.listing_fields() == right.listing_fields()) == same_entry, (left, right)
