"""SVG drawn to an image in a child process (capped in size, time and memory), its XML source a toggle away."""

from __future__ import annotations

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QWidget

from resources_qt.content import ResourceContent
from studio.look.svg_budget import PREVIEW_BUDGET, count_svg, svg_problem
from studio.preview.render_process import run_render_child
from studio.preview.renderers.base import PageActions, Prepared, Renderer, content_size, mime_of, too_complex
from studio.preview.renderers.image import ImagePage, image_details
from studio.preview.renderers.text import text_prepared

__all__ = ["MAX_SIDE", "SVG_MEMORY_MB", "SVG_SECONDS", "SvgRenderer"]

MAX_SIDE = 2048
"""The longer side of the drawn image: a declared 100000 px square would take gigabytes, and the
pixels travel back from the child raw (16 MB at most)."""
SVG_SECONDS = 10.0
"""The child drawing an SVG is killed after this long."""
SVG_MEMORY_MB = 768
"""Address space of the child drawing an SVG: Qt starts in under 200 MB, ten blurs over a 2000 px square
took 350 MB."""


def _image(header: dict[str, object], payload: bytes) -> QImage | None:
    """The image the child sent, checked against the caps before Qt sees a byte of it."""
    w, h, stride = header.get("width"), header.get("height"), header.get("stride")
    if not (isinstance(w, int) and isinstance(h, int) and isinstance(stride, int)):
        return None
    if not (0 < w <= MAX_SIDE and 0 < h <= MAX_SIDE and stride >= 4 * w and len(payload) == stride * h):
        return None
    return QImage(payload, w, h, stride, QImage.Format.Format_ARGB32_Premultiplied).copy()


class SvgRenderer(Renderer):
    kind = "svg"
    mime_types = ("image/svg+xml",)
    off_gui_thread = True  # the child takes a few tenths of a second to start

    def __init__(self, *, seconds: float = SVG_SECONDS, memory_mb: int = SVG_MEMORY_MB) -> None:
        self._seconds = seconds
        self._memory_mb = memory_mb

    def prepare(self, content: ResourceContent) -> Prepared | None:
        source = content.data() if content.is_blob else (content.text or "").encode("utf-8", "surrogatepass")
        count = count_svg(source, PREVIEW_BUDGET)
        if count.invalid:
            return None  # not valid SVG: the next renderer shows it as text or bytes
        prepared = text_prepared(source.decode("utf-8", "replace"), mime_of(content), content_size(content),
                                 kind=self.kind)  # fmt: skip
        side = min(max(count.width, count.height), MAX_SIDE)
        problem = svg_problem(count, PREVIEW_BUDGET, side=side)
        if problem:
            prepared.notes.insert(0, too_complex(problem))
            return prepared
        answer = run_render_child("svg", source, options={"max_side": MAX_SIDE}, seconds=self._seconds,
                                  memory_mb=self._memory_mb, max_payload=4 * MAX_SIDE * MAX_SIDE)  # fmt: skip
        if any(message.header.get("invalid") for message in answer.messages):
            return None
        image = next((_image(m.header, m.payload) for m in answer.messages if "width" in m.header), None)
        if answer.failure or image is None:
            why = answer.failure or "sent an image that is not what was asked for"
            prepared.notes.insert(0, f"The SVG could not be rendered: it {why}. Showing the source.")
            return prepared
        prepared.payload, prepared.details = image, image_details(image)
        return prepared

    def create_page(self, parent: QWidget, actions: PageActions) -> QWidget | None:
        return ImagePage(parent)

    def show(self, page: QWidget, prepared: Prepared) -> bool:
        assert isinstance(page, ImagePage)
        if not isinstance(prepared.payload, QImage):
            return False
        page.set_image(prepared.payload)
        return True
