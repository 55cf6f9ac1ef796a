"""Raster images (PNG, JPEG, GIF, WebP... whatever Qt decodes) on a scrollable backdrop."""

from __future__ import annotations

from PySide6.QtCore import QBuffer, QByteArray, Qt
from PySide6.QtGui import QImage, QImageReader, QPixmap
from PySide6.QtWidgets import QLabel, QScrollArea, QWidget

from resources_qt.content import ResourceContent
from studio.preview.renderers.base import PageActions, Prepared, Renderer, mime_of
from studio.preview.renderers.hex import hex_prepared

__all__ = ["ImagePage", "ImageRenderer"]


class ImagePage(QScrollArea):
    """One image, centred, scrollable when larger than the view."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel(self)
        self.label.setObjectName("contentImage")
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setWidget(self.label)
        self.setWidgetResizable(True)

    def set_image(self, image: QImage) -> None:
        self.label.setPixmap(QPixmap.fromImage(image))
        self.label.setToolTip(f"{image.width()} x {image.height()} pixels")


def image_details(image: QImage) -> list[str]:
    return [f"{image.width()} \u00d7 {image.height()} px"]


class ImageRenderer(Renderer):
    kind = "image"
    mime_types = ("image/*",)
    blobs_only = True

    def prepare(self, content: ResourceContent) -> Prepared | None:
        data = content.data()
        payload = QByteArray(data)  # kept in a name: the buffer does not own it
        buffer = QBuffer(payload)
        buffer.open(QBuffer.OpenModeFlag.ReadOnly)
        if bytes(QImageReader.imageFormat(buffer).data()).lower() in (b"svg", b"svgz"):
            # Qt's image reader would draw it in this process, unchecked (see studio/look/svg_budget.py).
            hexed = hex_prepared(data, mime_of(content))
            hexed.notes.insert(0, "SVG data under a raster image type is not drawn (SVG is drawn as image/svg+xml).")
            return hexed
        image = QImage.fromData(data)
        if image.isNull():
            hexed = hex_prepared(data, mime_of(content))
            hexed.notes.insert(0, "The image could not be decoded; showing its bytes.")
            return hexed
        return Prepared(self.kind, mime_of(content), len(data), details=image_details(image), payload=image)

    def create_page(self, parent: QWidget, actions: PageActions) -> QWidget | None:
        return ImagePage(parent)

    def show(self, page: QWidget, prepared: Prepared) -> bool:
        assert isinstance(page, ImagePage) and isinstance(prepared.payload, QImage)
        page.set_image(prepared.payload)
        return True
