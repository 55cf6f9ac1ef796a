"""The text()/blob() helpers a snippet sees, in-process: URI filled in, per-instance MIME types."""

from __future__ import annotations

import base64

import pytest

from resources_qt.errors import ValidationError
from resources_qt.snippets.namespace import (
    HELPERS,
    ReadContext,
    blob,
    current_uri,
    reading,
    snippet_namespace,
    text,
)


def test_text_fills_in_the_uri_and_mime_type() -> None:
    with reading(ReadContext("tickets://7/attachment", "")):
        plain = text("hello")
        csv = text("a,b\n", "text/csv")
        assert current_uri() == "tickets://7/attachment"
    assert (plain.uri, plain.mime_type, plain.text) == ("tickets://7/attachment", "text/plain", "hello")
    assert (csv.mime_type, csv.text) == ("text/csv", "a,b\n")


def test_text_uses_the_declared_type_and_dumps_data() -> None:
    with reading(ReadContext("kb://a", "text/markdown")):
        markdown = text("# A")
        data = text({"b": 1})
        raw = text("é".encode())
    assert markdown.mime_type == "text/markdown"
    assert data.mime_type == "application/json" and data.text == '{\n  "b": 1\n}'
    assert raw.text == "é"


def test_blob_takes_bytes_or_base64() -> None:
    with reading(ReadContext("img://1", "")):
        from_bytes = blob(b"\x89PNG", "image/png")
        from_b64 = blob(base64.b64encode(b"GIF89a").decode(), "image/gif")
        with pytest.raises(ValueError, match="not base64"):
            blob("not base64!", "image/png")
        with pytest.raises(ValidationError, match="empty"):
            blob(b"", "image/png")
        with pytest.raises(TypeError):
            blob(42, "image/png")  # type: ignore[arg-type]
    assert from_bytes.is_blob and from_bytes.data() == b"\x89PNG" and from_bytes.mime_type == "image/png"
    assert from_b64.data() == b"GIF89a" and from_b64.uri == "img://1"


def test_helpers_need_a_read_or_an_explicit_uri() -> None:
    with pytest.raises(RuntimeError, match="needs a URI"):
        text("x")
    assert text("x", uri="a://b").uri == "a://b"


def test_prelude_names_are_visible_and_may_shadow_helpers() -> None:
    namespace = snippet_namespace("m", prelude={"CONSTANT": 3, "text": "mine", "__name__": "prelude"})
    assert namespace["CONSTANT"] == 3
    assert namespace["text"] == "mine"
    assert namespace["__name__"] == "m"
    assert namespace["blob"] is HELPERS["blob"]
