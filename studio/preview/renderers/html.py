"""HTML rendered without loading anything it refers to, with the source a toggle away."""

from __future__ import annotations

import itertools
import re

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

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
from studio.preview.renderers.layout_budget import count_html, layout_problem
from studio.preview.renderers.safe_browser import SafeTextBrowser
from studio.preview.renderers.text import text_prepared

__all__ = ["CELL_LIMIT", "HTML_LIMIT", "HtmlPage", "HtmlRenderer"]

HTML_LIMIT = 128 * 1024
"""Larger HTML shows as source: Qt parses and lays out the whole document on the GUI thread
(about 50 ms for 128 KB of paragraphs)."""
CELL_LIMIT = TABLE_CELL_LIMIT

_CELL = re.compile(r"<t[dh][\s>/]", re.IGNORECASE)


class HtmlPage(QWidget):
    """The rendered document and a line saying how many of its resources were not loaded."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.browser = SafeTextBrowser(self)
        self.browser.setObjectName("contentHtml")
        self.blocked_label = QLabel(self)
        self.blocked_label.setObjectName("contentHtmlBlocked")
        self.blocked_label.setWordWrap(True)
        self.blocked_label.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.blocked_label)
        layout.addWidget(self.browser, 1)
        self.browser.resource_refused.connect(self._on_resource_refused)

    def set_html(self, html: str) -> None:
        self.browser.clear_refused()
        self.blocked_label.hide()
        self.browser.setHtml(html)

    @Slot(str)
    def _on_resource_refused(self, _url: str) -> None:
        count = self.browser.refused_count
        self.blocked_label.setText(
            f"{count} external resource{'s' if count != 1 else ''} (images, style sheets) not loaded:"
            " the preview fetches nothing."
        )
        self.blocked_label.setToolTip("\n".join(url[:200] for url in self.browser.refused_urls[:20]))
        self.blocked_label.show()


class HtmlRenderer(Renderer):
    kind = "html"
    mime_types = ("text/html", "application/xhtml+xml")

    def prepare(self, content: ResourceContent) -> Prepared | None:
        text = content_text(content)
        if text is None:
            return None
        prepared = text_prepared(text, mime_of(content), content_size(content), kind=self.kind)
        cells = sum(1 for _ in itertools.islice(_CELL.finditer(text), CELL_LIMIT + 1)) if len(text) <= HTML_LIMIT else 0
        if len(text) > HTML_LIMIT:
            prepared.notes.append(f"Too large to render (over {human_size(HTML_LIMIT)}); showing the source.")
        elif cells > CELL_LIMIT:
            prepared.notes.append(f"Too many table cells to render (over {CELL_LIMIT:,}); showing the source.")
        elif problem := layout_problem(count_html(text)):
            prepared.notes.append(too_complex(problem))
        else:
            prepared.payload = text
        return prepared

    def create_page(self, parent: QWidget, actions: PageActions) -> QWidget | None:
        return HtmlPage(parent)

    def show(self, page: QWidget, prepared: Prepared) -> bool:
        assert isinstance(page, HtmlPage)
        if not isinstance(prepared.payload, str):
            return False
        page.set_html(prepared.payload)
        return True
