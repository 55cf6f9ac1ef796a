"""What one read answered, as a client saw it: contents or an error, where it resolved, and how long it took."""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import mcp_types as types

__all__ = ["ObservedContent", "ObservedRead", "from_sdk_contents"]


@dataclass(frozen=True)
class ObservedContent:
    """One content item: `text` for text contents, `blob` (decoded bytes) for binary ones."""

    uri: str
    mime_type: str | None
    text: str | None = None
    blob: bytes | None = None

    @property
    def is_blob(self) -> bool:
        return self.blob is not None

    def data(self) -> bytes:
        """The bytes a client holds: the blob, or the text as UTF-8."""
        if self.blob is not None:
            return self.blob
        return (self.text or "").encode("utf-8")

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data()).hexdigest()


@dataclass(frozen=True)
class ObservedRead:
    """The answer to one `resources/read`: contents, or an error code and message instead."""

    uri: str
    contents: tuple[ObservedContent, ...] = ()
    error_code: int | None = None
    error_message: str = ""
    resource: str | None = None
    """Name of the resource or template the URI resolves to in the served project (None: none matches)."""
    elapsed_ms: float = 0.0

    @property
    def failed(self) -> bool:
        return self.error_code is not None

    @property
    def first(self) -> ObservedContent | None:
        return self.contents[0] if self.contents else None

    @property
    def mime_type(self) -> str | None:
        first = self.first
        return first.mime_type if first is not None else None


def from_sdk_contents(
    contents: list[types.TextResourceContents | types.BlobResourceContents],
) -> tuple[ObservedContent, ...]:
    """The SDK's read result contents as `ObservedContent`s (blobs decoded; an undecodable blob is kept as text)."""
    import mcp_types as types  # here: the Tests page opens before anything is run, and needs no SDK models

    observed: list[ObservedContent] = []
    for item in contents:
        if isinstance(item, types.BlobResourceContents):
            try:
                data = base64.b64decode(item.blob, validate=True)
            except (binascii.Error, ValueError):
                observed.append(ObservedContent(uri=str(item.uri), mime_type=item.mime_type,
                                                text=f"<undecodable base64 blob: {item.blob[:60]}>"))
                continue
            observed.append(ObservedContent(uri=str(item.uri), mime_type=item.mime_type, blob=data))
        else:
            observed.append(ObservedContent(uri=str(item.uri), mime_type=item.mime_type, text=item.text))
    return tuple(observed)
