"""Content renderers chosen by MIME type: HTML that fetches nothing, PDF pages, media notes, injected kinds."""

from __future__ import annotations

import io
import socket

import pypdfium2
import pytest
from PySide6.QtWidgets import QLabel, QWidget

from resources_qt.content import ResourceContent
from studio.preview.content_view import ContentView
from studio.preview.renderers import PageActions, Prepared, Renderer, RendererRegistry, make_registry
from studio.preview.renderers.base import TABLE_CELL_LIMIT
from studio.preview.renderers.html import CELL_LIMIT, HtmlPage
from studio.preview.renderers.pdf import PAGE_LIMIT, PAGE_MAX_HEIGHT, PAGE_WIDTH, render_pdf_pages


def view_of(qtbot, content: ResourceContent, registry: RendererRegistry | None = None) -> ContentView:
    view = ContentView(registry=registry)
    qtbot.addWidget(view)
    view.resize(500, 400)
    view.show()
    view.set_content(content)
    qtbot.waitUntil(lambda: view.is_ready, timeout=20_000)
    return view


def pdf_bytes(pages: int, size: tuple[float, float] = (200, 100)) -> bytes:
    document = pypdfium2.PdfDocument.new()
    for _ in range(pages):
        document.new_page(*size)
    out = io.BytesIO()
    document.save(out)
    document.close()
    return out.getvalue()


def test_html_is_rendered_without_fetching_what_it_refers_to(qtbot):
    # A real listening socket stands in for the remote host: a fetch would show up as a connection.
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        port = server.getsockname()[1]
        source = (
            f'<html><head><link rel="stylesheet" href="http://127.0.0.1:{port}/style.css"></head>'
            f'<body><h1>Hello</h1><img src="http://127.0.0.1:{port}/pixel.png"><img src="local.png"></body></html>'
        )
        view = view_of(qtbot, ResourceContent.from_text("web://page", "text/html", source))
        assert view.kind == "html"
        page = view.page("html")
        assert isinstance(page, HtmlPage) and view.stack.currentWidget() is page
        assert view.shown_text().startswith("Hello")
        qtbot.waitUntil(lambda: f"http://127.0.0.1:{port}/pixel.png" in page.browser.refused_urls)
        qtbot.waitUntil(lambda: "local.png" in page.browser.refused_urls)
        assert page.blocked_label.isVisibleTo(page) and "not loaded" in page.blocked_label.text()
        # Qt asks again at every layout; each address counts once.
        assert len(page.browser.refused_urls) == len(set(page.browser.refused_urls)) == page.browser.refused_count
        with pytest.raises(BlockingIOError):
            server.accept()
    view.toggle_button.click()
    assert view.stack.currentWidget() is view.text_view and view.shown_text() == source


def test_markdown_images_are_refused_too(qtbot):
    text = "# Notes\n\n![tracker](http://example.invalid/t.gif)\n"
    view = view_of(qtbot, ResourceContent.from_text("docs://md", "text/markdown", text))
    browser = view.page("markdown")
    qtbot.waitUntil(lambda: "http://example.invalid/t.gif" in browser.refused_urls)


def test_pdf_pages_render_off_the_gui_thread_first_pages_with_a_note(qtbot):
    data = pdf_bytes(PAGE_LIMIT + 2)
    view = ContentView()
    qtbot.addWidget(view)
    view.resize(400, 300)
    view.show()
    view.set_content(ResourceContent.from_bytes("docs://report.pdf", "application/pdf", data))
    assert view.kind == "loading", "even a small PDF renders on a worker thread"
    qtbot.waitUntil(lambda: view.is_ready, timeout=20_000)
    assert view.kind == "pdf"
    labels = view.page("pdf").page_labels
    assert len(labels) == PAGE_LIMIT
    pixmap = labels[0].pixmap()
    assert pixmap.width() > pixmap.height() > 0  # the 2:1 page's shape
    assert pixmap.width() <= view.page("pdf").viewport().width(), "pages are scaled down to the pane"
    assert f"first {PAGE_LIMIT} of {PAGE_LIMIT + 2} pages" in view.note_label.text()
    assert f"{PAGE_LIMIT + 2} pages" in view.info_label.text()
    assert not view.toggle_button.isVisibleTo(view)


def test_a_very_tall_pdf_page_is_scaled_to_a_bounded_image():
    pages = render_pdf_pages(pdf_bytes(1, (2, 14_000)))
    assert pages.count == 1 and not pages.failure
    assert pages.images[0].height() <= PAGE_MAX_HEIGHT and pages.images[0].width() < PAGE_WIDTH


def test_a_broken_pdf_shows_its_bytes_and_why(qtbot):
    view = view_of(qtbot, ResourceContent.from_bytes("docs://bad.pdf", "application/pdf", b"%PDF-1.7 nonsense"))
    assert view.kind == "hex"
    assert "could not be rendered" in view.note_label.text() and "not a readable PDF" in view.note_label.text()


def test_audio_and_video_get_a_note_with_type_size_and_save(qtbot, tmp_path):
    data = b"ID3" + bytes(3000)
    view = view_of(qtbot, ResourceContent.from_bytes("media://song.mp3", "audio/mpeg", data))
    assert view.kind == "media"
    page = view.page("media")
    assert "Audio (audio/mpeg), 2.9 KB" in page.note_label.text()
    assert page.save_button.text() == "Save content as..." and page.save_button.isVisibleTo(view)
    view.save_to(tmp_path / "song.mp3")
    assert (tmp_path / "song.mp3").read_bytes() == data
    clip = view_of(qtbot, ResourceContent.from_bytes("media://clip", "video/mp4", bytes(10)))
    assert clip.kind == "media" and "Video (video/mp4)" in clip.page("media").note_label.text()


class _UpperRenderer(Renderer):
    """A kind made up for the test: shows text upper-cased in a label."""

    kind = "upper"
    mime_types = ("text/x-shout",)

    def prepare(self, content: ResourceContent) -> Prepared | None:
        return Prepared(self.kind, "text/x-shout", 3, text=content.text or "", payload=(content.text or "").upper())

    def create_page(self, parent: QWidget, actions: PageActions) -> QWidget | None:
        return QLabel(parent)

    def show(self, page: QWidget, prepared: Prepared) -> bool:
        assert isinstance(page, QLabel) and isinstance(prepared.payload, str)
        page.setText(prepared.payload)
        return True


def test_a_new_kind_is_one_renderer_in_an_injected_registry(qtbot):
    registry = RendererRegistry([_UpperRenderer(), *make_registry().renderers])
    view = view_of(qtbot, ResourceContent.from_text("x://y", "text/x-shout", "hey"), registry)
    assert view.kind == "upper" and view.page("upper").text() == "HEY"
    view.toggle_button.click()
    assert view.shown_text() == "hey"
    plain = view_of(qtbot, ResourceContent.from_text("x://y", "text/x-shout", "hey"))
    assert plain.kind == "text", "the default registry does not know the kind"


def test_a_registry_refuses_two_renderers_of_one_kind():
    with pytest.raises(ValueError, match="every kind must be named once"):
        RendererRegistry([_UpperRenderer(), _UpperRenderer()])


def test_html_too_costly_to_lay_out_shows_its_source_with_the_reason(qtbot):
    table = "<table>" + "<tr><td>a</td><td>b</td></tr>" * (CELL_LIMIT // 2 + 1) + "</table>"
    view = view_of(qtbot, ResourceContent.from_text("web://big", "text/html", table))
    assert view.kind == "html" and view.stack.currentWidget() is view.text_view
    assert not view.toggle_button.isVisibleTo(view)
    assert f"over {CELL_LIMIT:,}" in view.note_label.text() and view.shown_text() == table


def test_markdown_with_a_huge_table_shows_its_source_and_a_small_one_renders(qtbot):
    row = "| cell | **bold** | x |\n"
    big = "| a | b | c |\n|---|---|---|\n" + row * (TABLE_CELL_LIMIT // 4 + 1)
    view = view_of(qtbot, ResourceContent.from_text("docs://t.md", "text/markdown", big))
    assert view.stack.currentWidget() is view.text_view and "Too many table cells" in view.note_label.text()
    small = view_of(qtbot, ResourceContent.from_text("docs://s.md", "text/markdown", "| a |\n|---|\n| b |\n"))
    assert small.stack.currentWidget() is small.page("markdown") and "b" in small.shown_text()
