"""What a snippet sees: the `text(...)`/`blob(...)` helpers, the current read, and the prelude's names."""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from resources_qt.content import DEFAULT_BINARY_MIME, DEFAULT_TEXT_MIME, JSON_MIME, ResourceContent, dump_json
from resources_qt.errors import NotFound, ValidationError

__all__ = [
    "HELPERS",
    "ReadContext",
    "blob",
    "current_read",
    "current_uri",
    "reading",
    "set_project_dir",
    "snippet_namespace",
    "text",
]


@dataclass(frozen=True, slots=True)
class ReadContext:
    """The read in progress: the concrete URI and the resource's declared MIME type."""

    uri: str
    mime_type: str = ""


_current: ContextVar[ReadContext | None] = ContextVar("resource_snippet_read", default=None)


@contextmanager
def reading(context: ReadContext) -> Iterator[None]:
    """Make `context` the current read for the helpers (async code started inside inherits it)."""
    token = _current.set(context)
    try:
        yield
    finally:
        _current.reset(token)


def current_read() -> ReadContext | None:
    return _current.get()


def current_uri() -> str:
    """The URI being read; raises outside a read."""
    return _require(None, "current_uri")


def _require(uri: str | None, helper: str) -> str:
    if uri:
        return uri
    context = _current.get()
    if context is None:
        raise RuntimeError(f"{helper}() needs a URI: call it while reading, or pass uri=...")
    return context.uri


def _declared_mime() -> str:
    context = _current.get()
    return context.mime_type if context is not None else ""


def text(data: object, mime_type: str | None = None, *, uri: str | None = None) -> ResourceContent:
    """Text content for the URI being read, with this instance's MIME type.

    `data` may be a str, UTF-8 bytes, or JSON-able data (dumped as JSON). Without
    `mime_type` the resource's declared type applies, else text/plain (or
    application/json for data).
    """
    target = _require(uri, "text")
    declared = _declared_mime()
    if isinstance(data, str):
        return ResourceContent(target, mime_type or declared or DEFAULT_TEXT_MIME, text=data)
    if isinstance(data, bytes | bytearray | memoryview):
        return ResourceContent(
            target, mime_type or declared or DEFAULT_TEXT_MIME, text=bytes(data).decode("utf-8")
        )
    dumped = dump_json(data, indent=2)
    json_mime = declared if declared.endswith("json") else JSON_MIME
    return ResourceContent(target, mime_type or json_mime, text=dumped)


def blob(
    data: bytes | bytearray | memoryview | str, mime_type: str, *, uri: str | None = None
) -> ResourceContent:
    """Binary content for the URI being read: raw bytes, or a str that is already base64.

    Empty data is an error, as in the seed's FromBlob.
    """
    target = _require(uri, "blob")
    mime = mime_type or _declared_mime() or DEFAULT_BINARY_MIME
    if isinstance(data, bytes | bytearray | memoryview):
        return ResourceContent.from_bytes(target, mime, bytes(data))
    if isinstance(data, str):
        try:
            return ResourceContent.from_blob(target, mime, data)
        except ValidationError as exc:
            raise ValueError(f"blob() was given a str that is not base64: {exc.message}") from exc
    raise TypeError(f"blob() takes bytes or a base64 str, not {type(data).__name__}")


_helpers: dict[str, Any] = {
    "text": text,
    "blob": blob,
    "current_uri": current_uri,
    "NotFound": NotFound,
    "ResourceContent": ResourceContent,
    "PROJECT_DIR": Path.cwd(),
}
HELPERS: Mapping[str, Any] = _helpers
"""Names every prelude and snippet sees without importing anything (`PROJECT_DIR` is the project's folder)."""


def set_project_dir(folder: Path) -> None:
    """Make `PROJECT_DIR` name `folder` in snippets loaded from now on (the worker does this at start)."""
    _helpers["PROJECT_DIR"] = folder


def snippet_namespace(name: str, *, prelude: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Fresh globals for one snippet module: the helpers, then the prelude's public names."""
    namespace: dict[str, Any] = dict(HELPERS)
    if prelude is not None:
        namespace.update({k: v for k, v in prelude.items() if not (k.startswith("__") and k.endswith("__"))})
    namespace["__name__"] = name
    namespace["__builtins__"] = builtins
    return namespace
