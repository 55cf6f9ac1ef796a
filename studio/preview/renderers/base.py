"""The renderer contract: what a content kind takes, how it prepares off the GUI thread, how it shows."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from PySide6.QtWidgets import QWidget

from resources_qt.content import ResourceContent
from studio.preview.renderers.spans import CompactSpans

__all__ = [
    "DISPLAY_LIMIT",
    "HIGHLIGHT_LIMIT",
    "INLINE_LIMIT",
    "TABLE_CELL_LIMIT",
    "PageActions",
    "Prepared",
    "Renderer",
    "base_mime",
    "content_size",
    "content_text",
    "displayable",
    "human_size",
    "is_textual",
    "mime_of",
    "too_complex",
]

INLINE_LIMIT = 64 * 1024
"""Content up to this size is prepared on the GUI thread (it takes a few milliseconds)."""
DISPLAY_LIMIT = 256 * 1024
"""Characters of text put into the view; the rest is reachable through "Save content as...". """
HIGHLIGHT_LIMIT = 256 * 1024
"""Characters of text that are syntax-highlighted; the rest of the shown text is plain."""
TABLE_CELL_LIMIT = 400
"""HTML and Markdown with more table cells show as source: Qt lays tables out on the GUI thread at about
0.1 ms (HTML) to 0.2 ms (Markdown) a cell, so 4,000 Markdown rows froze the window for 4.6 s."""


def human_size(count: int) -> str:
    size = float(count)
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{count} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{count} bytes"


def base_mime(mime: str) -> str:
    """`mime` without parameters, lower case: "Text/HTML; charset=utf-8" -> "text/html"."""
    return (mime or "").split(";", 1)[0].strip().lower()


def mime_of(content: ResourceContent) -> str:
    """The content's MIME type, or what a missing one means for text and for bytes."""
    return content.mime_type or ("application/octet-stream" if content.is_blob else "text/plain")


def is_textual(mime: str) -> bool:
    base = base_mime(mime)
    return (
        base.startswith("text/")
        or base.endswith(("json", "+xml", "/xml", "yaml", "javascript"))
        or base in ("application/x-python", "application/toml")
    )


def content_size(content: ResourceContent) -> int:
    """Bytes of the content as a client receives them (text counted as UTF-8, a lone surrogate as 3 bytes)."""
    return len(content.data()) if content.is_blob else len((content.text or "").encode("utf-8", "surrogatepass"))


def displayable(text: str) -> str:
    """`text` with lone surrogates (not Unicode text: Qt drops them without a word) shown as U+FFFD."""
    if text.isascii():
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def too_complex(what: str) -> str:
    """The note of a content whose cost, counted before layout, is over a budget `what` names."""
    return f"Too complex to render: {what}. Showing the source."


def content_text(content: ResourceContent) -> str | None:
    """The content as text: the text itself, or a blob decoded as UTF-8; None when the bytes are not UTF-8."""
    if not content.is_blob:
        return content.text or ""
    try:
        return content.data().decode("utf-8")
    except UnicodeDecodeError:
        return None


@dataclass
class Prepared:
    """What the view needs to show a content; built off the GUI thread for large content.

    `text` is the source shown in the (highlighted) text page, "" when the kind has none; `payload`
    is the renderer's own result (rows, an image, page images...), read only by that renderer.
    """

    kind: str
    mime_type: str
    size: int
    text: str = ""
    spans: CompactSpans = field(default_factory=CompactSpans)
    notes: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)  # extra facts for the info line, e.g. the pixel size
    payload: object = None


@dataclass(frozen=True)
class PageActions:
    """What a renderer's page may ask of the view that shows it."""

    save_content: Callable[[], None]


class Renderer(ABC):
    """One content kind. Subclasses set `kind` and `mime_types` and override what they need.

    `mime_types` holds base types ("text/csv") and wildcards ("image/*", "*"). `prepare` runs on any
    thread and builds no widgets; returning None passes the content on to the next renderer in the
    registry. A kind without a page of its own is shown as source text only.
    """

    kind: ClassVar[str] = ""
    mime_types: ClassVar[tuple[str, ...]] = ()
    blobs_only: ClassVar[bool] = False
    off_gui_thread: ClassVar[bool] = False
    """Prepared on a worker thread whatever its size (e.g. PDF rendering)."""

    def accepts(self, mime: str, *, is_blob: bool) -> bool:
        if self.blobs_only and not is_blob:
            return False
        base = base_mime(mime)
        major = base.split("/", 1)[0]
        return any(m == "*" or m == base or m == f"{major}/*" for m in self.mime_types)

    @abstractmethod
    def prepare(self, content: ResourceContent) -> Prepared | None:
        """What the view shows for `content` (run off the GUI thread for large content); None: not this kind."""

    def create_page(self, parent: QWidget, actions: PageActions) -> QWidget | None:
        """The widget that shows this kind rendered, made once per view on first use; None: source only."""
        return None

    def show(self, page: QWidget, prepared: Prepared) -> bool:
        """Fill `page` with `prepared` (GUI thread); False when it cannot be rendered, so the source shows."""
        return False
