"""Markdown rendered by Qt (nothing it refers to is loaded), with the source a toggle away."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from resources_qt.content import ResourceContent
from studio.preview.renderers.base import (
    TABLE_CELL_LIMIT,
    PageActions,
    Prepared,
    Renderer,
    content_size,
    content_text,
    human_size,
    mime_of,
    too_complex,
)
from studio.preview.renderers.layout_budget import count_markdown, layout_problem
from studio.preview.renderers.safe_browser import SafeTextBrowser
from studio.preview.renderers.text import text_prepared

__all__ = ["MARKDOWN_LIMIT", "MarkdownRenderer"]

MARKDOWN_LIMIT = 128 * 1024
"""Larger Markdown shows as source: Qt lays the whole document out on the GUI thread (~100 ms for 190 KB)."""


class MarkdownRenderer(Renderer):
    kind = "markdown"
    mime_types = ("text/markdown", "text/x-markdown")

    def prepare(self, content: ResourceContent) -> Prepared | None:
        text = content_text(content)
        if text is None:
            return None
        prepared = text_prepared(text, mime_of(content), content_size(content), kind=self.kind)
        if len(text) > MARKDOWN_LIMIT:
            prepared.notes.append(f"Too large to render (over {human_size(MARKDOWN_LIMIT)}); showing the source.")
        elif text.count("|") > TABLE_CELL_LIMIT:  # a table cell takes a pipe or two; an upper bound is enough
            prepared.notes.append(f"Too many table cells to render (over {TABLE_CELL_LIMIT:,}); showing the source.")
        elif problem := layout_problem(count_markdown(text)):
            prepared.notes.append(too_complex(problem))
        else:
            prepared.payload = text
        return prepared

    def create_page(self, parent: QWidget, actions: PageActions) -> QWidget | None:
        browser = SafeTextBrowser(parent)
        browser.setObjectName("contentMarkdown")
        return browser

    def show(self, page: QWidget, prepared: Prepared) -> bool:
        assert isinstance(page, SafeTextBrowser)
        if not isinstance(prepared.payload, str):
            return False
        page.clear_refused()
        page.setMarkdown(prepared.payload)
        return True
