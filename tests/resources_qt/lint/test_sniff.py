"""Magic bytes and MIME classes: what content is, whatever its declaration says."""

from __future__ import annotations

import pytest

from resources_qt.lint.sniff import (
    FORMATS,
    Format,
    expected_format,
    format_named,
    is_binary_type,
    is_json_type,
    is_text_type,
    sniff,
)

SAMPLES = {
    "image/png": b"\x89PNG\r\n\x1a\n" + bytes(8),
    "image/jpeg": b"\xff\xd8\xff\xe0" + bytes(8),
    "image/gif": b"GIF89a" + bytes(8),
    "image/webp": b"RIFF\x10\x00\x00\x00WEBPVP8 ",
    "image/bmp": b"BM" + b"\x36\x00\x00\x00" + bytes(8) + b"\x36\x00",
    "image/tiff": b"II*\x00" + bytes(8),
    "image/vnd.microsoft.icon": b"\x00\x00\x01\x00" + bytes(8),
    "application/pdf": b"%PDF-1.7\n",
    "application/zip": b"PK\x03\x04" + bytes(8),
    "application/gzip": b"\x1f\x8b\x08" + bytes(8),
    "application/wasm": b"\x00asm\x01\x00\x00\x00",
}


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda fmt: fmt.mime_type)
def test_every_format_is_recognised_by_its_bytes(fmt: Format) -> None:
    assert sniff(SAMPLES[fmt.mime_type]) == fmt
    assert expected_format(fmt.mime_type) == fmt


def test_shared_or_short_magics_need_their_second_look() -> None:
    assert sniff(b"RIFF\x10\x00\x00\x00WAVEfmt ") is None  # a WAV file is RIFF, not WebP
    assert sniff(b"BMW 3 series, 2019, low mileage") is None  # text beginning with BM is no bitmap
    assert sniff(b"plain text") is None
    assert sniff(b"") is None


def test_aliases_and_parameters_name_the_same_format() -> None:
    assert expected_format("IMAGE/JPG") == expected_format("image/jpeg")
    assert expected_format("image/png; charset=binary") == expected_format("image/png")
    assert format_named("image/gif") == "a GIF"
    assert format_named("audio/ogg") == "audio/ogg"


@pytest.mark.parametrize(
    ("mime", "text", "binary", "json"),
    [
        ("text/plain", True, False, False),
        ("text/markdown; charset=utf-8", True, False, False),
        ("application/json", True, False, True),
        ("application/vnd.api+json", True, False, True),
        ("image/svg+xml", True, False, False),
        ("application/xml", True, False, False),
        ("image/png", False, True, False),
        ("audio/mpeg", False, True, False),
        ("application/octet-stream", False, True, False),
        ("application/pdf", False, True, False),
        ("application/vnd.ms-excel", False, True, False),
        ("application/x-unknown", False, False, False),
        ("", False, False, False),
    ],
)
def test_text_and_binary_types(mime: str, text: bool, binary: bool, json: bool) -> None:
    assert (is_text_type(mime), is_binary_type(mime), is_json_type(mime)) == (text, binary, json)
