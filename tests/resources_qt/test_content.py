"""The seed's content rules: factories, text/blob exclusion, serialization, reader-result conversion."""

from __future__ import annotations

import base64
import json

import mcp_types as types
import pytest
from hypothesis import given
from hypothesis import strategies as st

from resources_qt import INVALID_PARAMS, OPERATION_FAILED, ReaderFailedError, ResourceContent, ValidationError
from resources_qt.content import to_contents

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode("ascii")


def test_from_text_keeps_uri_mime_and_text() -> None:
    content = ResourceContent.from_text("config://application/settings", "application/json", '{"a": 1}')
    assert (content.uri, content.mime_type, content.text, content.blob) == (
        "config://application/settings",
        "application/json",
        '{"a": 1}',
        None,
    )


def test_from_text_accepts_empty_text() -> None:
    content = ResourceContent.from_text("docs://empty", "text/plain", "")
    assert content.text == ""
    assert content.to_dict() == {"uri": "docs://empty", "mimeType": "text/plain", "text": ""}


@pytest.mark.parametrize("factory", ["text", "blob"])
def test_factories_reject_an_empty_uri_with_invalid_params(factory: str) -> None:
    with pytest.raises(ValidationError) as caught:
        if factory == "text":
            ResourceContent.from_text("", "text/plain", "x")
        else:
            ResourceContent.from_blob("", "image/png", PNG)
    assert caught.value.code == INVALID_PARAMS == -32602
    assert "URI" in caught.value.message


def test_from_blob_rejects_an_empty_blob() -> None:
    with pytest.raises(ValidationError) as caught:
        ResourceContent.from_blob("tickets://1/attachment", "image/png", "")
    assert caught.value.code == -32602
    assert "empty" in caught.value.message and "tickets://1/attachment" in caught.value.message


def test_from_blob_rejects_raw_bytes_and_invalid_base64() -> None:
    with pytest.raises(ValidationError, match="base64 text, not bytes"):
        ResourceContent.from_blob("img://1", "image/png", b"\x89PNG")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="not valid base64") as caught:
        ResourceContent.from_blob("img://1", "image/png", "not base64!")
    assert caught.value.code == -32602


def test_from_bytes_encodes_and_data_decodes() -> None:
    content = ResourceContent.from_bytes("img://logo", "image/png", b"\x00\x01binary")
    assert content.blob == base64.b64encode(b"\x00\x01binary").decode()
    assert content.data() == b"\x00\x01binary"
    with pytest.raises(ValidationError):
        ResourceContent.from_bytes("img://logo", "image/png", b"")


def test_text_and_blob_are_mutually_exclusive() -> None:
    content = ResourceContent.from_text("x://1", "text/plain", "hello")
    content.blob = PNG
    assert (content.text, content.blob) == (None, PNG)
    content.text = "again"
    assert (content.text, content.blob) == ("again", None)
    # Only the last one assigned survives, as the seed's setters do.
    content.blob = PNG
    assert content.is_blob and content.text is None


def test_constructor_refuses_both_text_and_blob() -> None:
    with pytest.raises(ValidationError, match="not both"):
        ResourceContent("x://1", "text/plain", text="a", blob=PNG)


def test_setters_validate_types() -> None:
    content = ResourceContent("x://1")
    with pytest.raises(ValidationError):
        content.text = 5  # type: ignore[assignment]
    with pytest.raises(ValidationError, match="empty"):
        content.blob = ""


def test_neither_text_nor_blob_serializes_empty_text() -> None:
    content = ResourceContent("x://1", "text/plain")
    assert content.text is None and content.blob is None
    wire = content.to_mcp()
    assert isinstance(wire, types.TextResourceContents) and wire.text == ""
    assert content.to_dict()["text"] == ""
    content.text = "x"
    content.text = None
    assert content.to_dict()["text"] == ""


def test_to_mcp_and_dict_round_trip() -> None:
    blob = ResourceContent.from_blob("img://1", "image/png", PNG)
    blob.meta = {"source": "test"}
    assert isinstance(blob.to_mcp(), types.BlobResourceContents)
    assert blob.to_dict() == {
        "uri": "img://1",
        "mimeType": "image/png",
        "blob": PNG,
        "_meta": {"source": "test"},
    }
    assert ResourceContent.from_dict(blob.to_dict()) == blob
    text = ResourceContent.from_text("x://1", "", "plain")
    assert "mimeType" not in text.to_dict()
    assert ResourceContent.from_dict(text.to_dict()) == text


@given(st.text(), st.text(min_size=1).filter(lambda s: s.strip() != ""))
def test_text_round_trips_through_wire_json(text: str, uri: str) -> None:
    content = ResourceContent.from_text(uri, "text/plain", text)
    assert ResourceContent.from_dict(json.loads(json.dumps(content.to_dict()))) == content


@given(st.binary(min_size=1))
def test_bytes_round_trip_through_blob(data: bytes) -> None:
    content = ResourceContent.from_bytes("bin://x", "application/octet-stream", data)
    assert ResourceContent.from_dict(content.to_dict()).data() == data


# -- to_contents: the one place reader results become content ---------------


def test_none_is_the_generic_reader_failure() -> None:
    with pytest.raises(ReaderFailedError) as caught:
        to_contents(None, uri="tickets://9/attachment", mime_type="text/plain")
    assert caught.value.code == OPERATION_FAILED == -32000
    assert caught.value.message == "Resource reader returned None for URI: tickets://9/attachment"


def test_str_becomes_text_with_the_resource_mime_type() -> None:
    [content] = to_contents("# Title", uri="kb://a/b", mime_type="text/markdown")
    assert (content.uri, content.mime_type, content.text) == ("kb://a/b", "text/markdown", "# Title")
    [plain] = to_contents("x", uri="kb://a/b")
    assert plain.mime_type == "text/plain"


def test_bytes_become_a_base64_blob() -> None:
    [content] = to_contents(b"\x89PNG", uri="img://1", mime_type="image/png")
    assert content.blob == base64.b64encode(b"\x89PNG").decode() and content.mime_type == "image/png"
    [untyped] = to_contents(bytearray(b"\x01"), uri="img://1")
    assert untyped.mime_type == "application/octet-stream"
    with pytest.raises(ReaderFailedError, match="empty bytes"):
        to_contents(b"", uri="img://1")


def test_json_data_becomes_json_text() -> None:
    [content] = to_contents({"id": 42, "name": "Zoë"}, uri="crm://customers/42/profile", mime_type="")
    assert content.mime_type == "application/json"
    assert json.loads(content.text or "") == {"id": 42, "name": "Zoë"}
    [typed] = to_contents([1, 2], uri="x://1", mime_type="application/vnd.api+json")
    assert typed.mime_type == "application/vnd.api+json"
    [other] = to_contents([1, 2], uri="x://1", mime_type="text/markdown")
    assert other.mime_type == "application/json"


def test_content_is_passed_through_and_only_fills_in_a_missing_mime_type() -> None:
    own = ResourceContent.from_text("tickets://1/attachment", "text/csv", "a,b")
    assert to_contents(own, uri="tickets://1/attachment", mime_type="text/plain") == [own]
    assert own.mime_type == "text/csv"
    bare = ResourceContent.from_text("x://1", "", "a")
    assert to_contents(bare, uri="x://1", mime_type="text/plain")[0].mime_type == "text/plain"
    many = [
        ResourceContent.from_text("x://1", "text/plain", "a"),
        ResourceContent.from_bytes("x://1", "", b"b"),
    ]
    assert to_contents(tuple(many), uri="x://1", mime_type="application/x") == many


@pytest.mark.parametrize("value", [object(), {"when": object()}, float("nan"), {"x": float("inf")}])
def test_unconvertible_results_are_reader_failures(value: object) -> None:
    with pytest.raises(ReaderFailedError) as caught:
        to_contents(value, uri="x://1")
    assert caught.value.code == -32000 and "x://1" in caught.value.message
