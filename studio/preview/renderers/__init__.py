"""Content renderers, one module per kind, and the default registry the content view chooses from."""

from __future__ import annotations

import functools

from studio.preview.renderers.base import PageActions, Prepared, Renderer
from studio.preview.renderers.csv_table import CsvRenderer
from studio.preview.renderers.hex import HexRenderer
from studio.preview.renderers.html import HtmlRenderer
from studio.preview.renderers.image import ImageRenderer
from studio.preview.renderers.markdown import MarkdownRenderer
from studio.preview.renderers.media import MediaRenderer
from studio.preview.renderers.pdf import PdfRenderer
from studio.preview.renderers.registry import RendererRegistry
from studio.preview.renderers.svg import SvgRenderer
from studio.preview.renderers.text import TextRenderer

__all__ = ["PageActions", "Prepared", "Renderer", "RendererRegistry", "default_registry", "make_registry"]


def make_registry() -> RendererRegistry:
    """The studio's renderers in the order they are tried: specific kinds first, text, then bytes."""
    return RendererRegistry(
        [
            SvgRenderer(),
            ImageRenderer(),
            PdfRenderer(),
            MediaRenderer(),
            CsvRenderer(),
            MarkdownRenderer(),
            HtmlRenderer(),
            TextRenderer(),
            HexRenderer(),
        ]
    )


@functools.cache
def default_registry() -> RendererRegistry:
    """One shared registry for views not given their own (it is immutable, so sharing is safe)."""
    return make_registry()
