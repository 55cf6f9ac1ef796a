"""Content renderers, one module per kind, and the default registry the content view chooses from."""

from __future__ import annotations

import functools

from studio.widgets.renderers.base import PageActions, Prepared, Renderer
from studio.widgets.renderers.csv_table import CsvRenderer
from studio.widgets.renderers.hex import HexRenderer
from studio.widgets.renderers.html import HtmlRenderer
from studio.widgets.renderers.image import ImageRenderer
from studio.widgets.renderers.markdown import MarkdownRenderer
from studio.widgets.renderers.media import MediaRenderer
from studio.widgets.renderers.pdf import PdfRenderer
from studio.widgets.renderers.registry import RendererRegistry
from studio.widgets.renderers.svg import SvgRenderer
from studio.widgets.renderers.text import TextRenderer

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
