"""Issue 21's content bombs through the real content view: refused before layout, drawn in a killed child, never stuck.

Each attack is real content shown by a real ContentView; a heartbeat on the GUI loop shows the
window kept answering while it was prepared. Reduced sizes by default, the red team's with STRESS_FULL=1.
"""

from __future__ import annotations

import itertools
import os
import resource
import threading
import zlib
from pathlib import Path

import pytest
from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtWidgets import QLabel, QWidget

from resources_qt.content import ResourceContent
from studio.preview.content_view import ContentView
from studio.preview.renderers import PageActions, Prepared, Renderer, RendererRegistry, make_registry
from studio.preview.renderers.pdf import PdfRenderer
from studio.preview.renderers.svg import SvgRenderer

FULL = os.environ.get("STRESS_FULL") == "1"
LONGEST_GAP_MS = 3000
"""The window must answer at least this often while content is prepared (the attacks froze it 8 to 160 s)."""


def scaled(reduced: int, full: int) -> int:
    return full if FULL else reduced


class Heartbeat:
    """A 10 ms timer on the GUI loop: it ticks only while the window processes events."""

    def __init__(self, parent: QWidget) -> None:
        self.beats: list[int] = []
        self._clock = QElapsedTimer()
        self._clock.start()
        self._timer = QTimer(parent)
        self._timer.setInterval(10)
        self._timer.timeout.connect(lambda: self.beats.append(self._clock.elapsed()))
        self._timer.start()

    def longest_gap(self) -> int:
        times = [0, *self.beats, self._clock.elapsed()]
        return max(b - a for a, b in itertools.pairwise(times))


def shown(qtbot, content: ResourceContent, registry: RendererRegistry | None = None, **options) -> ContentView:
    """`content` in a real, visible view, once it is ready; the heartbeat's longest gap is checked."""
    view = ContentView(registry=registry, **options)
    qtbot.addWidget(view)
    view.resize(600, 500)
    view.show()
    heart = Heartbeat(view)
    view.set_content(content)
    qtbot.waitUntil(lambda: view.is_ready, timeout=60_000)
    ticks = len(heart.beats)
    qtbot.waitUntil(lambda: len(heart.beats) > ticks + 3, timeout=10_000)  # painted, laid out, and answering
    assert heart.longest_gap() < LONGEST_GAP_MS, f"the window froze for {heart.longest_gap()} ms"
    return view


def registry_with(renderer: Renderer) -> RendererRegistry:
    """The default renderers with `renderer` in place of the one of its kind (e.g. a shorter deadline)."""
    return RendererRegistry([renderer if r.kind == renderer.kind else r for r in make_registry().renderers])


def assert_source_shown(view: ContentView, source: str) -> None:
    """The rendered page is refused: the source page shows, whole, with no toggle to a rendering."""
    assert view.stack.currentWidget() is view.text_view and view.shown_text() == source
    assert not view.toggle_button.isVisibleTo(view)


def children() -> set[int]:
    """This process's live child processes (from /proc)."""
    pids: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        with open(task / "children") as listing:
            pids.update(int(pid) for pid in listing.read().split())
    return pids


# -- HTML and Markdown: counted before Qt lays anything out -------------------


def test_nested_html_tables_are_refused_before_layout_naming_the_budget(qtbot):
    depth = 20  # 14 s of frozen window at 20, over 160 s at 25
    source = "<table><tr><td>" * depth + "x" + "</td></tr></table>" * depth
    view = shown(qtbot, ResourceContent.from_text("web://t", "text/html", source))
    assert view.kind == "html"
    assert "Too complex to render: tables nested 20 deep; the limit is 8" in view.note_label.text()
    assert_source_shown(view, source)
    fine = shown(qtbot, ResourceContent.from_text("web://f", "text/html", "<table><tr><td>" * 3 + "ok"))
    assert fine.stack.currentWidget() is fine.page("html") and "ok" in fine.shown_text()


def test_content_inside_nested_tables_counts_double_per_level(qtbot):
    source = "<table><tr><td>" * 8 + "<p>x</p>" * 1000 + "</td></tr></table>" * 8  # 3.1 s before, 8 KB
    view = shown(qtbot, ResourceContent.from_text("web://p", "text/html", source))
    assert "elements to lay out" in view.note_label.text() and "the limit is 20,000" in view.note_label.text()
    assert_source_shown(view, source)


def test_markdown_of_nested_lists_is_refused_naming_the_list_item_budget(qtbot):
    pairs = scaled(3_000, 13_000)  # 13,000 pairs: 127 KB, the red team's 128 KB of nested lists
    source = "- a\n  - b\n" * pairs
    view = shown(qtbot, ResourceContent.from_text("docs://l.md", "text/markdown", source))
    assert f"{2 * pairs:,} list items; the limit is 2,000" in view.note_label.text()
    assert_source_shown(view, source[: len(view.shown_text())])


def test_html_embedded_in_markdown_is_counted_too(qtbot):
    source = "# Title\n\n" + "<table><tr><td>\n\n" * 12 + "x\n"
    view = shown(qtbot, ResourceContent.from_text("docs://h.md", "text/markdown", source))
    assert "tables nested 12 deep; the limit is 8" in view.note_label.text()
    assert_source_shown(view, source)


# -- SVG: counted with expat, drawn in a child ---------------------------------


def use_bomb(levels: int, fan: int = 10) -> str:
    """Ten `<use>` of ten `<use>` of ... a rectangle: 1.8 KB at 7 levels draws 10 million rectangles."""
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="100"'
             ' height="100"><defs><rect id="a0" width="1" height="1"/>']  # fmt: skip
    for level in range(1, levels + 1):
        parts.append(f'<g id="a{level}">' + f'<use xlink:href="#a{level - 1}"/>' * fan + "</g>")
    parts.append(f'</defs><use xlink:href="#a{levels}"/></svg>')
    return "".join(parts)


def test_an_svg_use_fan_out_is_refused_with_the_expanded_count(qtbot):
    source = use_bomb(scaled(6, 7))
    view = shown(qtbot, ResourceContent.from_text("img://bomb.svg", "image/svg+xml", source))
    assert view.kind == "svg"
    note = view.note_label.text()
    assert "Too complex to render: <use> and url(#...) references expand to" in note
    assert "elements drawn; the limit is 500,000" in note
    assert_source_shown(view, source)


def test_an_svg_declaring_entities_is_refused_without_expanding_them(qtbot):
    source = ('<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa">'
              + "".join(f'<!ENTITY {c} "{("&" + p + ";") * 10}">' for p, c in zip("abcdefgh", "bcdefghi", strict=True))
              + ']><svg xmlns="http://www.w3.org/2000/svg"><text>&i;</text></svg>')  # fmt: skip
    view = shown(qtbot, ResourceContent.from_text("img://laughs.svg", "image/svg+xml", source))
    assert "declares XML entities, which are refused" in view.note_label.text()
    assert_source_shown(view, source)


def test_an_svg_blur_over_a_large_area_is_refused_and_a_smaller_one_draws_off_the_window(qtbot):
    def blurred(side: int, rectangles: int) -> str:
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{side}" height="{side}"><filter id="f">'
                '<feGaussianBlur stdDeviation="80"/></filter>'
                + f'<rect width="{side}" height="{side}" fill="red" filter="url(#f)"/>' * rectangles
                + "</svg>")  # fmt: skip

    source = blurred(2000, 10)  # 7.3 s and 300 MB drawn in the studio before
    view = shown(qtbot, ResourceContent.from_text("img://blur.svg", "image/svg+xml", source))
    assert "filters over about" in view.note_label.text() and "the limit is 50,000,000" in view.note_label.text()
    assert_source_shown(view, source)
    # One blur over 1200 px: within the budget, a few tenths of a second in the child while the window answers.
    drawn = shown(qtbot, ResourceContent.from_text("img://one.svg", "image/svg+xml", blurred(1200, 1)))
    assert drawn.stack.currentWidget() is drawn.page("svg") and drawn.page("svg").label.pixmap().width() == 1200


def test_an_svg_slower_than_the_deadline_is_killed_and_the_reason_shown(qtbot):
    # 20,000 crossing line segments: within the budget's counts, but 100 s of rasterizing when filled.
    points = " ".join(f"L{(i * 7919) % 1000 / 10:.1f} {(i * 104729) % 1000 / 10:.1f}" for i in range(20_000))
    source = (f'<svg xmlns="http://www.w3.org/2000/svg" width="1000" height="1000" viewBox="0 0 100 100">'
              f'<path d="M0 0 {points}" fill="red" fill-opacity="0.5"/></svg>')  # fmt: skip
    seconds = 10.0 if FULL else 1.0
    registry = registry_with(SvgRenderer(seconds=seconds))
    before = children()
    view = shown(qtbot, ResourceContent.from_text("img://slow.svg", "image/svg+xml", source), registry)
    assert f"The SVG could not be rendered: it took more than {seconds:g} s to render" in view.note_label.text()
    assert_source_shown(view, source[: len(view.shown_text())])
    assert children() <= before, "the child was killed and reaped"


# -- PDF: drawn in a child with a deadline and a memory limit -------------------


def pdf_with_stream(stream: bytes, filters: str = "") -> bytes:
    """A one-page PDF whose page content is `stream`, written out by hand (offsets and all)."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>",
        b"<< /Length %d %s>>\nstream\n" % (len(stream), filters.encode()) + stream + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def deflated_twice(megabytes: int, level: int) -> bytes:
    """`megabytes` MB of spaces deflated, and the result deflated again (1.5 GB fits in 3 KB)."""
    deflate = zlib.compressobj(level)
    chunk = b" " * (1024 * 1024)
    once = b"".join(deflate.compress(chunk) for _ in range(megabytes)) + deflate.flush()
    return zlib.compress(once, 9)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_a_pdf_deflate_bomb_is_stopped_at_the_memory_limit_in_the_child(qtbot):
    megabytes, memory = (1536, 512) if FULL else (400, 256)
    data = pdf_with_stream(deflated_twice(megabytes, 9 if FULL else 1), "/Filter [/FlateDecode /FlateDecode] ")
    assert len(data) < (4_000 if FULL else 8_000)
    registry = registry_with(PdfRenderer(memory_mb=memory))
    before_rss, before = peak_rss_mb(), children()
    view = shown(qtbot, ResourceContent.from_bytes("docs://bomb.pdf", "application/pdf", data), registry)
    assert view.kind == "hex"
    assert f"The PDF could not be rendered: it needed more than {memory} MB" in view.note_label.text()
    assert view.shown_text().startswith("00000000  25 50 44 46")  # the bytes are a page away: %PDF
    assert peak_rss_mb() - before_rss < 200, "the studio itself never held the inflated stream"
    assert children() <= before


def test_a_pdf_of_endless_drawing_is_killed_at_the_deadline_and_reported(qtbot):
    count = scaled(300_000, 700_000)  # 700,000 operators: 13 MB, still drawing after 91 s
    operators = b"".join(b"%d %d m %d %d l S\n" % (i % 200, i * 7 % 200, i * 13 % 200, i * 3 % 200)
                         for i in range(count))  # fmt: skip
    seconds = 10.0 if FULL else 1.0
    registry = registry_with(PdfRenderer(seconds=seconds))
    before = children()
    view = shown(qtbot, ResourceContent.from_bytes("docs://ops.pdf", "application/pdf", pdf_with_stream(operators)),
                 registry)  # fmt: skip
    assert f"The PDF could not be rendered: it took more than {seconds:g} s to render" in view.note_label.text()
    assert view.kind == "hex" and children() <= before
    # The next PDF renders: no lock or thread is left held by the killed one.
    line = pdf_with_stream(b"0 0 m 9 9 l S")
    small = shown(qtbot, ResourceContent.from_bytes("docs://ok.pdf", "application/pdf", line))
    assert small.kind == "pdf" and len(small.page("pdf").page_labels) == 1


# -- Never stuck on "loading" ---------------------------------------------------


def test_json_nested_30000_deep_shows_as_received_with_the_reason(qtbot):
    source = "[" * 30_000 + "]" * 30_000
    view = shown(qtbot, ResourceContent.from_text("data://deep", "application/json", source))
    assert view.kind == "text"
    assert "JSON nested 30,000 deep; the limit is 200" in view.note_label.text()
    assert view.shown_text() == source


def test_text_with_a_lone_surrogate_is_shown_with_the_reason(qtbot):
    view = shown(qtbot, ResourceContent.from_text("data://s", "text/plain", "before \ud800 after"))
    assert view.kind == "text" and "lone surrogate (U+D800 at character 7)" in view.note_label.text()
    assert view.shown_text() == "before \ufffd after"
    as_json = shown(qtbot, ResourceContent.from_text("data://j", "application/json", '{"k": "\ud800"}'))
    assert as_json.kind == "text" and "\ufffd" in as_json.shown_text()


class _Failing(Renderer):
    """A renderer that fails where it is told to: in prepare (on a worker thread or not) or in show."""

    kind = "failing"
    mime_types = ("text/x-fail",)

    def __init__(self, *, in_show: bool = False, off_thread: bool = False) -> None:
        self._in_show = in_show
        self.off_gui_thread = off_thread

    def prepare(self, content: ResourceContent) -> Prepared | None:
        if not self._in_show:
            raise RecursionError("maximum recursion depth exceeded\nwhile decoding")
        return Prepared(self.kind, "text/x-fail", 4, text=content.text or "", payload="x")

    def create_page(self, parent: QWidget, actions: PageActions) -> QWidget | None:
        return QLabel(parent)

    def show(self, page: QWidget, prepared: Prepared) -> bool:
        raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")


@pytest.mark.parametrize("off_thread", [False, True])
def test_a_renderer_failing_in_prepare_leaves_a_note_and_the_raw_text(qtbot, off_thread):
    registry = RendererRegistry([_Failing(off_thread=off_thread), *make_registry().renderers])
    view = shown(qtbot, ResourceContent.from_text("x://f", "text/x-fail", "raw text"), registry)
    assert view.kind == "text" and view.shown_text() == "raw text"
    assert view.note_label.text().startswith(
        "Could not render the content (RecursionError: maximum recursion depth exceeded while decoding)"
    )


def test_a_page_failing_to_show_leaves_a_note_and_the_raw_text(qtbot):
    registry = RendererRegistry([_Failing(in_show=True), *make_registry().renderers])
    view = shown(qtbot, ResourceContent.from_text("x://f", "text/x-fail", "raw text"), registry)
    assert view.kind == "text" and view.shown_text() == "raw text"
    assert view.note_label.text().startswith("Could not show the content (UnicodeEncodeError:")


class _Stuck(Renderer):
    """A renderer whose prepare waits until the test lets it go (a renderer that never finishes)."""

    kind = "stuck"
    mime_types = ("text/x-stuck",)
    off_gui_thread = True

    def __init__(self) -> None:
        self.release = threading.Event()

    def prepare(self, content: ResourceContent) -> Prepared | None:
        self.release.wait(30)
        return Prepared(self.kind, "text/x-stuck", 1, text="late")


def test_a_prepare_past_the_view_deadline_shows_the_content_as_received(qtbot):
    stuck = _Stuck()
    registry = RendererRegistry([stuck, *make_registry().renderers])
    try:
        view = shown(qtbot, ResourceContent.from_text("x://s", "text/x-stuck", "as received"), registry, deadline_s=0.5)
        assert "The content took more than 0.5 s to prepare; showing it as received." in view.note_label.text()
        assert view.shown_text() == "as received"
        # Later contents get threads of their own, whatever the stuck one holds.
        after = shown(qtbot, ResourceContent.from_text("x://t", "text/plain", "x" * 100_000))
        assert after.kind == "text"
    finally:
        stuck.release.set()
