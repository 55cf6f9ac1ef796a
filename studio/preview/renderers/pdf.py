"""PDF pages as images through pypdfium2 (imported on the first PDF), rendered on a worker thread."""

from __future__ import annotations

import logging
import threading

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPixmap, QResizeEvent
from PySide6.QtWidgets import QLabel, QScrollArea, QVBoxLayout, QWidget

from resources_qt.content import ResourceContent
from studio.preview.renderers.base import PageActions, Prepared, Renderer, mime_of
from studio.preview.renderers.hex import hex_prepared

logger = logging.getLogger(__name__)

__all__ = ["PAGE_LIMIT", "PAGE_MAX_HEIGHT", "PAGE_WIDTH", "PdfPage", "PdfRenderer", "render_pdf_pages"]

PAGE_LIMIT = 5
"""Pages rendered; the rest are named in a note (the whole file is one Save away)."""
PAGE_WIDTH = 900
"""Pixel width of a rendered page: sharp in a preview pane, about 3 MB of image per page."""
PAGE_MAX_HEIGHT = 4000
"""A page far taller than wide (a receipt roll, a hostile 1 x 14400 pt page) is scaled to this height instead."""

# PDFium is not thread-safe and the preview renders on a pool of threads.
_pdfium_lock = threading.Lock()


def render_pdf_pages(data: bytes, *, limit: int = PAGE_LIMIT, width: int = PAGE_WIDTH) -> tuple[list[QImage], int]:
    """The first `limit` pages of the PDF in `data` as images `width` pixels wide, and the page count.

    Raises ValueError naming the problem when `data` is not a PDF PDFium can open.
    """
    import pypdfium2  # lazily: the binding loads a 5 MB native library, only worth it once a PDF shows

    with _pdfium_lock:
        try:
            document = pypdfium2.PdfDocument(data)
        except pypdfium2.PdfiumError as exc:
            raise ValueError(f"not a readable PDF: {exc}") from exc
        try:
            count = len(document)
            images = []
            for number in range(min(count, limit)):
                page = document[number]
                try:
                    page_width, page_height = max(page.get_width(), 1.0), max(page.get_height(), 1.0)
                    scale = min(width / page_width, PAGE_MAX_HEIGHT / page_height)
                    bitmap = page.render(scale=scale, rev_byteorder=True)
                    try:
                        image = QImage(bytes(bitmap.buffer), bitmap.width, bitmap.height, bitmap.stride,
                                       QImage.Format.Format_RGB888)  # fmt: skip
                        images.append(image.copy())  # the copy owns its pixels; the buffer goes with the bitmap
                    finally:
                        bitmap.close()
                finally:
                    page.close()
            return images, count
        finally:
            document.close()


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

    def prepare(self, content: ResourceContent) -> Prepared | None:
        data = content.data()
        mime = mime_of(content)
        try:
            images, count = render_pdf_pages(data)
        except (ValueError, ImportError) as exc:
            hexed = hex_prepared(data, mime)
            hexed.notes.insert(0, f"The PDF could not be rendered ({exc}); showing its bytes.")
            return hexed
        notes = []
        if count > len(images):
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
