"""Resource content: text or a base64 blob, and the one place reader results become content."""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import json.encoder
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeGuard

if TYPE_CHECKING:
    import mcp_types as types

from resources_qt.errors import ReaderFailedError, ValidationError

__all__ = [
    "DEFAULT_BINARY_MIME",
    "DEFAULT_TEXT_MIME",
    "JSON_MIME",
    "ResourceContent",
    "dump_json",
    "to_contents",
]

DEFAULT_TEXT_MIME = "text/plain"
DEFAULT_BINARY_MIME = "application/octet-stream"
JSON_MIME = "application/json"

# Bound when this module is imported, before any snippet runs in a worker: a
# snippet that patches json.dumps, json.JSONEncoder or base64 in its worker
# must not change how another resource's result becomes content.
_make_iterencode: Callable[..., Callable[[object, int], Any]] = getattr(json.encoder, "_make_iterencode")  # noqa: B009
_c_make_encoder: Callable[..., Callable[[object, int], Any]] | None = getattr(json.encoder, "c_make_encoder", None)
_encode_basestring: Callable[[str], str] = getattr(json.encoder, "encode_basestring")  # noqa: B009
_float_repr = float.__repr__
_b2a_base64 = binascii.b2a_base64
_a2b_base64 = binascii.a2b_base64
_join = "".join
_INFINITY = float("inf")


def _no_default(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _float_text(value: float) -> str:
    if value != value or value in (_INFINITY, -_INFINITY):
        raise ValueError(f"Out of range float values are not JSON compliant: {_float_repr(value)}")
    return _float_repr(value)


def dump_json(value: object, *, indent: int | None = None) -> str:
    """`json.dumps(value, ensure_ascii=False, allow_nan=False, indent=indent)` from functions bound at import.

    Raises:
        TypeError, ValueError: as json.dumps does for data that is not JSON.
    """
    if indent is None and _c_make_encoder is not None:
        encode = _c_make_encoder({}, _no_default, _encode_basestring, None, ": ", ", ", False, False, False)
    else:
        pad = " " * indent if indent is not None else None
        separator = "," if pad is not None else ", "
        encode = _make_iterencode(
            {}, _no_default, _encode_basestring, pad, _float_text, ": ", separator, False, False, True
        )
    return _join(encode(value, 0))


def _b64encode(data: bytes) -> str:
    return _b2a_base64(data, newline=False).decode("ascii")


def _b64check(text: str) -> None:
    # What base64.b64decode(validate=True) accepts: the alphabet and correct padding.
    _a2b_base64(text, strict_mode=True)


class ResourceContent:
    """One item of a `resources/read` answer: text or a base64 blob, never both.

    Assigning `text` clears `blob` and assigning `blob` clears `text`. With
    neither set, the serialized content carries an empty `text`.
    """

    __slots__ = ("_blob", "_text", "meta", "mime_type", "uri")

    def __init__(
        self,
        uri: str,
        mime_type: str = "",
        *,
        text: str | None = None,
        blob: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        if not isinstance(uri, str) or not uri:
            raise ValidationError("Resource content needs a non-empty URI")
        if text is not None and blob is not None:
            raise ValidationError(f"Resource content for {uri} is text or blob, not both")
        if mime_type is not None and not isinstance(mime_type, str):
            raise ValidationError(f"MIME type for {uri} must be a str, not {type(mime_type).__name__}")
        self.uri = uri
        self.mime_type = mime_type or ""
        self._text: str | None = None
        self._blob: str | None = None
        self.meta = meta
        if blob is not None:
            self.blob = blob
        else:
            self.text = text

    @classmethod
    def from_text(cls, uri: str, mime_type: str, text: str) -> ResourceContent:
        """Text content; an empty URI is rejected, empty text is a legitimately empty document."""
        if not isinstance(text, str):
            raise ValidationError(f"Text content must be a str, not {type(text).__name__}")
        return cls(uri, mime_type, text=text)

    @classmethod
    def from_blob(cls, uri: str, mime_type: str, blob_base64: str) -> ResourceContent:
        """Binary content given as base64; an empty URI, an empty blob or invalid base64 is rejected."""
        if not isinstance(uri, str) or not uri:
            raise ValidationError("Resource content needs a non-empty URI")
        if isinstance(blob_base64, bytes | bytearray):
            # The seed's classic mistake: raw bytes where base64 text belongs.
            raise ValidationError(
                f"Blob content for {uri} must be base64 text, not bytes; use ResourceContent.from_bytes"
            )
        if not isinstance(blob_base64, str) or not blob_base64:
            raise ValidationError(f"Blob content for {uri} is empty")
        try:
            _b64check(blob_base64)
        except (binascii.Error, ValueError) as exc:
            raise ValidationError(f"Blob content for {uri} is not valid base64: {exc}") from exc
        return cls(uri, mime_type, blob=blob_base64)

    @classmethod
    def from_bytes(cls, uri: str, mime_type: str, data: bytes) -> ResourceContent:
        """Binary content from raw bytes, base64-encoded here; empty bytes are rejected."""
        if not data:
            raise ValidationError(f"Blob content for {uri} is empty")
        return cls.from_blob(uri, mime_type, _b64encode(bytes(data)))

    @property
    def text(self) -> str | None:
        return self._text

    @text.setter
    def text(self, value: str | None) -> None:
        if value is not None and not isinstance(value, str):
            raise ValidationError(f"Text content for {self.uri} must be a str, not {type(value).__name__}")
        self._text = value
        if value is not None:
            self._blob = None

    @property
    def blob(self) -> str | None:
        return self._blob

    @blob.setter
    def blob(self, value: str | None) -> None:
        if value is not None and (not isinstance(value, str) or not value):
            what = "empty" if isinstance(value, str) else f"a {type(value).__name__}, not base64 text"
            raise ValidationError(f"Blob content for {self.uri} is {what}")
        self._blob = value
        if value is not None:
            self._text = None

    @property
    def is_blob(self) -> bool:
        return self._blob is not None

    def data(self) -> bytes:
        """The payload as bytes: the decoded blob, or the text encoded as UTF-8."""
        if self._blob is not None:
            try:
                return base64.b64decode(self._blob, validate=True)
            except binascii.Error as exc:
                raise ValidationError(f"Blob content for {self.uri} is not valid base64: {exc}") from exc
        return (self._text or "").encode("utf-8")

    def to_mcp(self) -> types.TextResourceContents | types.BlobResourceContents:
        """The SDK model sent on the wire."""
        import mcp_types as types  # not at import: workers and the window's first paint need no SDK models

        mime = self.mime_type or None
        if self._blob is not None:
            return types.BlobResourceContents(uri=self.uri, mime_type=mime, blob=self._blob, _meta=self.meta)
        return types.TextResourceContents(
            uri=self.uri, mime_type=mime, text=self._text or "", _meta=self.meta
        )

    def to_dict(self) -> dict[str, Any]:
        """The wire JSON of this content (camelCase keys, empty fields left out)."""
        return self.to_mcp().model_dump(by_alias=True, mode="json", exclude_none=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ResourceContent:
        """Rebuild content from its wire JSON (the inverse of `to_dict`)."""
        uri = data.get("uri", "")
        mime = data.get("mimeType", "") or ""
        meta = data.get("_meta")
        if "blob" in data:
            content = cls.from_blob(uri, mime, data["blob"])
        else:
            content = cls.from_text(uri, mime, data.get("text", ""))
        content.meta = dict(meta) if meta else None
        return content

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ResourceContent):
            return NotImplemented
        return (self.uri, self.mime_type, self._text, self._blob, self.meta) == (
            other.uri,
            other.mime_type,
            other._text,
            other._blob,
            other.meta,
        )

    def __hash__(self) -> int:
        return hash((self.uri, self.mime_type, self._text, self._blob))

    def __repr__(self) -> str:
        kind = "blob" if self._blob is not None else "text"
        size = len(self._blob or self._text or "")
        return f"ResourceContent(uri={self.uri!r}, mime_type={self.mime_type!r}, {kind}[{size}])"


def to_contents(value: object, *, uri: str, mime_type: str = "") -> list[ResourceContent]:
    """Turn whatever a reader returned into the content list of a read.

    Args:
        value: the reader's result: `ResourceContent`, a sequence of them,
            `str`, `bytes`-like, or JSON-able data.
        uri: the concrete URI the client asked for; echoed in built content.
        mime_type: the resource's declared MIME type, used where the result
            carries none.

    Raises:
        ReaderFailedError: the reader returned `None`, empty bytes, a value
            that is neither content, text, bytes nor JSON-able, or text that
            is not valid Unicode (a lone surrogate, which no JSON text can
            carry) (-32000).
    """
    contents = _contents(value, uri=uri, mime_type=mime_type)
    for content in contents:
        _check_unicode(content, uri=uri)
    return contents


def _contents(value: object, *, uri: str, mime_type: str) -> list[ResourceContent]:
    if value is None:
        raise ReaderFailedError(f"Resource reader returned None for URI: {uri}", data={"uri": uri})
    if isinstance(value, ResourceContent):
        return [_with_default_mime(value, mime_type)]
    if isinstance(value, str):
        return [ResourceContent(uri, mime_type or DEFAULT_TEXT_MIME, text=value)]
    if isinstance(value, bytes | bytearray | memoryview):
        if not value:
            raise ReaderFailedError(f"Resource reader returned empty bytes for URI: {uri}", data={"uri": uri})
        return [ResourceContent.from_bytes(uri, mime_type or DEFAULT_BINARY_MIME, bytes(value))]
    if _is_content_list(value):
        return [_with_default_mime(item, mime_type) for item in value]
    try:
        # allow_nan=False: NaN and Infinity are not JSON, and a client would choke on them.
        text = dump_json(value, indent=2)
    except (TypeError, ValueError) as exc:
        raise ReaderFailedError(
            f"Resource reader returned {type(value).__name__}, which is not text, bytes, "
            f"content or JSON-able data (URI: {uri}): {exc}",
            data={"uri": uri},
        ) from exc
    json_mime = mime_type if mime_type.endswith("json") else JSON_MIME
    return [ResourceContent(uri, json_mime, text=text)]


def _check_unicode(content: ResourceContent, *, uri: str) -> None:
    # Checked here, not when the answer is serialized: there a lone surrogate is a -32603 with a traceback.
    fields = [("text", content.text), ("URI", content.uri), ("MIME type", content.mime_type)]
    if content.meta:
        with contextlib.suppress(TypeError, ValueError):  # not JSON at all: the SDK's model says so itself
            fields.append(("_meta", dump_json(content.meta)))
    for what, text in fields:
        if text is None or text.isascii():  # O(1) in CPython: most text is never encoded here
            continue
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ReaderFailedError(
                f"Resource reader returned {'text' if what == 'text' else f'a content {what}'} that is not valid "
                f"Unicode (a lone surrogate U+{ord(text[exc.start]):04X} at index {exc.start}) for URI: {uri}",
                data={"uri": uri, "index": exc.start},
            ) from None


def _is_content_list(value: object) -> TypeGuard[Sequence[ResourceContent]]:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str | bytes)
        and len(value) > 0
        and all(isinstance(item, ResourceContent) for item in value)
    )


def _with_default_mime(content: ResourceContent, mime_type: str) -> ResourceContent:
    # The content-level type is the honest one for this instance; the
    # resource-level type only fills in when the reader left it empty.
    if not content.mime_type and mime_type:
        content.mime_type = mime_type
    return content
