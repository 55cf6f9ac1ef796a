"""What content is, whatever it claims: magic bytes of binary formats, and which MIME types are text or binary."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Format", "expected_format", "format_named", "is_binary_type", "is_json_type", "is_text_type", "sniff"]


@dataclass(frozen=True)
class Format:
    """A binary format recognised by its first bytes: its name as said to a person, and its MIME type."""

    name: str
    mime_type: str
    magics: tuple[bytes, ...]
    also: tuple[str, ...] = ()
    """Other MIME types naming the same format (`image/jpg` for `image/jpeg`)."""

    def matches(self, data: bytes) -> bool:
        if not any(data.startswith(magic) for magic in self.magics):
            return False
        # Short or shared magics need a second look: RIFF is also WAV and AVI, and "BM" begins plenty of text.
        if self.mime_type == "image/webp":
            return data[8:12] == b"WEBP"
        if self.mime_type == "image/bmp":
            return len(data) >= 14 and data[6:10] == b"\x00\x00\x00\x00"
        return True


FORMATS: tuple[Format, ...] = (
    Format("a PNG image", "image/png", (b"\x89PNG\r\n\x1a\n",)),
    Format("a JPEG image", "image/jpeg", (b"\xff\xd8\xff",), also=("image/jpg", "image/pjpeg")),
    Format("a GIF", "image/gif", (b"GIF87a", b"GIF89a")),
    Format("a WebP image", "image/webp", (b"RIFF",)),
    Format("a BMP image", "image/bmp", (b"BM",), also=("image/x-bmp", "image/x-ms-bmp")),
    Format("a TIFF image", "image/tiff", (b"II*\x00", b"MM\x00*")),
    Format("an ICO icon", "image/vnd.microsoft.icon", (b"\x00\x00\x01\x00",), also=("image/x-icon",)),
    Format("a PDF", "application/pdf", (b"%PDF-",)),
    Format("a ZIP archive", "application/zip", (b"PK\x03\x04", b"PK\x05\x06"), also=("application/x-zip-compressed",)),
    Format("a gzip stream", "application/gzip", (b"\x1f\x8b",), also=("application/x-gzip",)),
    Format("a WebAssembly module", "application/wasm", (b"\x00asm",)),
)

_BY_MIME: dict[str, Format] = {mime: fmt for fmt in FORMATS for mime in (fmt.mime_type, *fmt.also)}

_TEXT_APPLICATION = frozenset({
    "application/json", "application/xml", "application/javascript", "application/ecmascript",
    "application/x-javascript", "application/yaml", "application/x-yaml", "application/toml",
    "application/x-sh", "application/sql", "application/graphql", "application/x-ndjson", "application/csv",
    "application/x-www-form-urlencoded", "application/rtf",
})
_BINARY_TOP = frozenset({"image", "audio", "video", "font"})
_BINARY_APPLICATION = frozenset({
    "application/octet-stream", "application/pdf", "application/zip", "application/gzip", "application/x-gzip",
    "application/x-tar", "application/wasm", "application/msword", "application/x-7z-compressed",
    "application/x-bzip2", "application/x-xz", "application/vnd.sqlite3", "application/x-sqlite3",
})


def essence(mime_type: str) -> str:
    """`type/subtype` in lower case, without parameters (`text/plain; charset=utf-8` -> `text/plain`)."""
    return mime_type.split(";", 1)[0].strip().lower()


def is_json_type(mime_type: str) -> bool:
    kind = essence(mime_type)
    return kind == "application/json" or kind.endswith("+json")


def is_text_type(mime_type: str) -> bool:
    """A type whose content is text a client shows or parses as text (JSON, XML, SVG, scripts...)."""
    kind = essence(mime_type)
    return (kind.startswith("text/") or kind in _TEXT_APPLICATION or kind.endswith(("+json", "+xml", "+yaml")))


def is_binary_type(mime_type: str) -> bool:
    """A type whose content is bytes (images but SVG, audio, video, fonts, archives, PDFs, octet streams)."""
    kind = essence(mime_type)
    if not kind or is_text_type(kind):
        return False
    top = kind.split("/", 1)[0]
    if top in _BINARY_TOP or kind in _BINARY_APPLICATION or kind in _BY_MIME:
        return True
    return kind.startswith("application/vnd.")


def expected_format(mime_type: str) -> Format | None:
    """The format a MIME type promises, when its bytes can be recognised."""
    return _BY_MIME.get(essence(mime_type))


def sniff(data: bytes) -> Format | None:
    """The format the bytes are, by their first bytes; None when none of `FORMATS` matches."""
    return next((fmt for fmt in FORMATS if fmt.matches(data)), None)


def format_named(mime_type: str) -> str:
    """`a PNG image` for image/png; the MIME type itself for a type without a known format."""
    fmt = expected_format(mime_type)
    return fmt.name if fmt is not None else essence(mime_type)
