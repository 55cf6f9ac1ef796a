"""SVG drawn to an image (capped in size), with its highlighted XML source a toggle away."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSize, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QWidget

from resources_qt.content import ResourceContent
from studio.preview.renderers.base import PageActions, Prepared, Renderer, content_size, mime_of
from studio.preview.renderers.image import ImagePage, image_details
from studio.preview.renderers.text import text_prepared

__all__ = ["SvgRenderer", "render_svg"]

MAX_SIDE = 4096


def render_svg(data: bytes) -> QImage | None:
    renderer = QSvgRenderer(QByteArray(data))
    if not renderer.isValid():
        return None
    size = renderer.defaultSize()
    if size.isEmpty():
        size = QSize(256, 256)
    size = size.boundedTo(QSize(MAX_SIDE, MAX_SIDE))  # a declared 100000 px square would take gigabytes
    image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    return image


class SvgRenderer(Renderer):
    kind = "svg"
    mime_types = ("image/svg+xml",)

    def prepare(self, content: ResourceContent) -> Prepared | None:
        source = content.data() if content.is_blob else (content.text or "").encode("utf-8")
        image = render_svg(source)
        if image is None:
            return None  # not valid SVG: the next renderer shows it as text or bytes
        prepared = text_prepared(source.decode("utf-8", "replace"), mime_of(content), content_size(content),
                                 kind=self.kind)  # fmt: skip
        prepared.payload, prepared.details = image, image_details(image)
        return prepared

    def create_page(self, parent: QWidget, actions: PageActions) -> QWidget | None:
        return ImagePage(parent)

    def show(self, page: QWidget, prepared: Prepared) -> bool:
        assert isinstance(page, ImagePage) and isinstance(prepared.payload, QImage)
        page.set_image(prepared.payload)
        return True
