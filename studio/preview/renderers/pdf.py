"""PDF pages as images, drawn by PDFium in a child process (render_process.py) with a deadline and a memory limit."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPixmap, QResizeEvent
from PySide6.QtWidgets import QLabel, QScrollArea, QVBoxLayout, QWidget

from resources_qt.content import ResourceContent
from studio.preview.render_process import run_render_child
from studio.preview.renderers.base import PageActions, Prepared, Renderer, mime_of
from studio.preview.renderers.hex import hex_prepared

logger = logging.getLogger(__name__)

__all__ = [
    "PAGE_LIMIT",
    "PAGE_MAX_HEIGHT",
    "PAGE_WIDTH",
    "PDF_MEMORY_MB",
    "PDF_SECONDS",
    "PdfPage",
    "PdfPages",
    "PdfRenderer",
    "render_pdf_pages",
]

PAGE_LIMIT = 5
"""Pages rendered; the rest are named in a note (the whole file is one Save away)."""
PAGE_WIDTH = 900
"""Pixel width of a rendered page: sharp in a preview pane, about 3 MB of image per page."""
PAGE_MAX_HEIGHT = 4000
"""A page far taller than wide (a receipt roll, a hostile 1 x 14400 pt page) is scaled to this height instead."""
PDF_SECONDS = 10.0
"""The child drawing a PDF is killed after this long (13 MB of drawing operators was still drawing after 91 s)."""
PDF_MEMORY_MB = 512
"""Address space of the child drawing a PDF (a 3 KB PDF deflated twice from 1.5 GB took the studio to 2.65 GB)."""
_PAGE_BYTES = 4 * (PAGE_WIDTH + 1) * (PAGE_MAX_HEIGHT + 1)
"""The most one page's pixels may take on the way back (RGB, rows padded to a 4-byte stride, sides rounded)."""


@dataclass(frozen=True)
class PdfPages:
    """The pages drawn, the document's page count, and why drawing stopped early ("" when it did not)."""

    images: list[QImage]
    count: int
    failure: str = ""


def _page_image(header: dict[str, object], payload: bytes, width: int) -> QImage | None:
    """The page the child sent, checked against the caps before Qt sees a byte of it."""
    w, h, stride = header.get("width"), header.get("height"), header.get("stride")
    if not (isinstance(w, int) and isinstance(h, int) and isinstance(stride, int)):
        return None
    if not (0 < w <= width + 1 and 0 < h <= PAGE_MAX_HEIGHT + 1 and stride >= 3 * w and len(payload) == stride * h):
        return None
    return QImage(payload, w, h, stride, QImage.Format.Format_RGB888).copy()  # the copy owns its pixels


def render_pdf_pages(
    data: bytes,
    *,
    limit: int = PAGE_LIMIT,
    width: int = PAGE_WIDTH,
    seconds: float = PDF_SECONDS,
    memory_mb: int = PDF_MEMORY_MB,
) -> PdfPages:
    """The first `limit` pages of the PDF in `data` as images `width` pixels wide, and the page count.

    Drawn in a child process that is killed after `seconds` or fails past `memory_mb`: the pages
    drawn by then are kept and `failure` says what stopped it. Raises ValueError naming the problem
    when `data` is not a PDF PDFium can open.
    """
    answer = run_render_child("pdf", data, options={"width": width, "max_height": PAGE_MAX_HEIGHT, "limit": limit},
                              seconds=seconds, memory_mb=memory_mb, max_payload=_PAGE_BYTES)  # fmt: skip
    count = 0
    images: list[QImage] = []
    for message in answer.messages:
        header = message.header
        if header.get("unreadable"):
            raise ValueError(str(header.get("error", "not a readable PDF")))
        pages = header.get("pages")
        if isinstance(pages, int):
            count = pages
        elif "page" in header:
            image = _page_image(header, message.payload, width)
            if image is None:
                return PdfPages(images, count, "sent a page that is not what was asked for")
            images.append(image)
    return PdfPages(images, count, answer.failure)


class PdfPage(QScrollArea):
    """Page images one below the other, scaled down to the pane's width (never up)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self._inner = QWidget(self)
        self._layout = QVBoxLayout(self._inner)
        self._layout.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.setWidget(self._inner)
        self.page_labels: list[QLabel] = []
        self._images: list[QImage] = []
        self._shown_width = -1

    def set_pages(self, images: list[QImage]) -> None:
        for label in self.page_labels:
            label.deleteLater()
        self.page_labels = []
        self._images = list(images)
        for number, image in enumerate(images, 1):
            label = QLabel(self._inner)
            label.setObjectName(f"contentPdfPage{number}")
            label.setToolTip(f"Page {number} ({image.width()} x {image.height()} px rendered)")
            self._layout.addWidget(label)
            self.page_labels.append(label)
        self._shown_width = -1
        self._fit()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        margins = self._layout.contentsMargins()
        width = max(64, self.viewport().width() - margins.left() - margins.right())
        if abs(width - self._shown_width) < 8:  # a scroll bar coming and going is not worth a rescale
            return
        self._shown_width = width
        for label, image in zip(self.page_labels, self._images, strict=True):
            shown = (
                image
                if image.width() <= width
                else image.scaledToWidth(width, Qt.TransformationMode.SmoothTransformation)
            )
            label.setPixmap(QPixmap.fromImage(shown))


class PdfRenderer(Renderer):
    kind = "pdf"
    mime_types = ("application/pdf",)
    blobs_only = True
    off_gui_thread = True  # even a small PDF can take a second to render

    def __init__(self, *, seconds: float = PDF_SECONDS, memory_mb: int = PDF_MEMORY_MB) -> None:
        self._seconds = seconds
        self._memory_mb = memory_mb

    def prepare(self, content: ResourceContent) -> Prepared | None:
        data = content.data()
        mime = mime_of(content)
        try:
            pages = render_pdf_pages(data, seconds=self._seconds, memory_mb=self._memory_mb)
        except ValueError as exc:
            hexed = hex_prepared(data, mime)
            hexed.notes.insert(0, f"The PDF could not be rendered ({exc}); showing its bytes.")
            return hexed
        images, count = pages.images, pages.count
        if pages.failure and not images:
            hexed = hex_prepared(data, mime)
            hexed.notes.insert(0, f"The PDF could not be rendered: it {pages.failure}; showing its bytes.")
            return hexed
        notes = []
        if pages.failure:
            notes.append(f"Showing the first {len(images)} of {count} pages: the PDF {pages.failure}.")
        elif count > len(images):
            notes.append(f"Showing the first {len(images)} of {count} pages; use Save content as... for all.")
        details = [f"{count} page{'s' if count != 1 else ''}"]
        return Prepared(self.kind, mime, len(data), notes=notes, details=details, payload=images)

    def create_page(self, parent: QWidget, actions: PageActions) -> QWidget | None:
        page = PdfPage(parent)
        page.setObjectName("contentPdf")
        return page

    def show(self, page: QWidget, prepared: Prepared) -> bool:
        assert isinstance(page, PdfPage) and isinstance(prepared.payload, list)
        page.set_pages(prepared.payload)
        return True
