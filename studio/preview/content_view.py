"""Shows one piece of resource content through the renderer its MIME type selects."""

from __future__ import annotations

import functools
import logging
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QFontDatabase, QPalette, QTextCursor
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QStackedWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from resources_qt.content import ResourceContent
from studio.look.elided_label import ElidedLabel
from studio.look.theme import status_colors
from studio.preview.renderers import PageActions, Prepared, RendererRegistry, default_registry
from studio.preview.renderers.base import DISPLAY_LIMIT, INLINE_LIMIT, human_size
from studio.preview.renderers.hex import HEX_LIMIT
from studio.preview.renderers.registry import failure_line, raw_prepared
from studio.preview.renderers.spans import CompactSpanHighlighter, CompactSpans
from studio.preview.renderers.text import pretty_json_prefix

logger = logging.getLogger(__name__)

__all__ = [
    "CHUNK_CHARS",
    "CHUNK_LINES",
    "DISPLAY_LIMIT",
    "HEX_LIMIT",
    "INLINE_LIMIT",
    "PREPARE_SECONDS",
    "ContentView",
    "Prepared",
    "human_size",
    "prepare",
    "pretty_json_prefix",
]

CHUNK_LINES = 1000
CHUNK_CHARS = 16 * 1024
"""Text goes into the view in pieces of at most this many lines or characters, one per event-loop turn
(a piece lays out and highlights in a few milliseconds), so the window keeps answering while it fills."""

PREPARE_SECONDS = 30.0
"""A content still being prepared after this long is shown as received. Longer than the render child's
deadlines (10 s), so a PDF or SVG that misses its own says why itself."""


class _RenderThreads:
    """The preview's worker threads; replaced when a content misses its deadline, which may hold one for good."""

    def __init__(self) -> None:
        self.executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="preview-render")

    def abandon(self) -> None:
        self.executor.shutdown(wait=False)
        self.executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="preview-render")


_threads = _RenderThreads()


@functools.cache
def _warm_executor() -> None:
    """Start the first render thread ahead of the first large content, once per process.

    The executor starts threads on submit, and `Thread.start` waits for the new
    thread, which then competes for the GIL with the GUI thread: measured at
    70 to 110 ms of stalled window when that start happened with 10 MB to prepare.
    """
    _threads.executor.submit(lambda: None)


def prepare(content: ResourceContent) -> Prepared:
    """`content` prepared by the default registry; safe on any thread."""
    return default_registry().prepare(content)


def _chunks(text: str) -> list[str]:
    """`text` cut at line ends into pieces of at most CHUNK_LINES lines or about CHUNK_CHARS characters."""
    if len(text) <= CHUNK_CHARS and text.count("\n") < CHUNK_LINES:
        return [text]
    chunks: list[str] = []
    piece: list[str] = []
    chars = 0
    for line in text.split("\n"):
        if piece and (len(piece) >= CHUNK_LINES or chars + len(line) > CHUNK_CHARS):
            chunks.append("\n".join(piece))
            piece, chars = [], 0
        piece.append(line)
        chars += len(line) + 1
    chunks.append("\n".join(piece))
    return chunks


@dataclass(frozen=True)
class _Ready:
    """A prepared content and its text cut into the pieces the view inserts one by one."""

    prepared: Prepared
    chunks: list[str]


def _ready(prepared: Prepared) -> _Ready:
    return _Ready(prepared, _chunks(prepared.text) if prepared.text else [])


def _prepare_for_view(registry: RendererRegistry, content: ResourceContent) -> _Ready:
    """Everything a view needs before it touches a widget (on the render thread for large content)."""
    return _ready(registry.prepare(content))


class _Relay(QObject):
    """Carries finished futures from worker threads to the GUI thread; lives as long as the app."""

    finished = Signal(object)


@functools.cache
def _get_relay() -> _Relay:
    """One relay for the process, made on first use (on the GUI thread, so it lives there)."""
    return _Relay()


class ContentView(QWidget):
    """Shows one `ResourceContent` in the best available form.

    The registry's renderers prepare the content (inline when small, on a worker thread when large
    or when the renderer asks for it) and fill their own page; the highlighted source page, the
    info line, the notes, the Source toggle and Save belong to the view.

    Signals:
        rendered(): the content is on screen (after the worker finished, for large content).
    """

    rendered = Signal()

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        registry: RendererRegistry | None = None,
        deadline_s: float = PREPARE_SECONDS,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("contentView")
        self._registry = registry if registry is not None else default_registry()
        self._deadline = QTimer(self)
        self._deadline.setSingleShot(True)
        self._deadline.setInterval(int(deadline_s * 1000))
        self._deadline_s = deadline_s
        self._apply_colors()
        self._content: ResourceContent | None = None
        self._prepared: Prepared | None = None
        self._future: Future[_Ready] | None = None
        self._rendered_page: QWidget | None = None
        self._pages: dict[str, QWidget | None] = {}  # kind -> its page, made on first use (None: source only)
        self._actions = PageActions(save_content=self._on_save_clicked)

        # Cut with "…" in a narrow preview rather than widening it; the tooltip has it all.
        self.info_label = ElidedLabel(parent=self)
        self.info_label.setObjectName("contentInfo")
        self.toggle_button = QPushButton("Source", self)
        self.toggle_button.setToolTip("Switch between the rendered view and the source text")
        self.toggle_button.setObjectName("contentToggle")
        self.toggle_button.setCheckable(True)
        self.toggle_button.hide()
        self.save_button = QPushButton("Save content as...", self)
        self.save_button.setObjectName("contentSave")
        self.note_label = QLabel(self)
        self.note_label.setObjectName("contentNote")
        self.note_label.setWordWrap(True)
        self.note_label.hide()

        self.stack = QStackedWidget(self)
        self.loading_label = QLabel("Preparing the content...", self)
        self.loading_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.text_view = QPlainTextEdit(self)
        self.text_view.setObjectName("contentText")
        self.text_view.setAccessibleName("Content")
        self.text_view.setReadOnly(True)
        self.text_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text_view.setUndoRedoEnabled(False)  # read-only: an undo history would only cost memory
        self._highlighter = CompactSpanHighlighter(self.text_view.document())
        self._pending_chunks: list[str] = []
        self._chunk_timer = QTimer(self)
        self._chunk_timer.setSingleShot(True)
        self._chunk_timer.setInterval(0)
        self.stack.addWidget(self.loading_label)
        self.stack.addWidget(self.text_view)

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.info_label, 1)
        top.addWidget(self.toggle_button)
        top.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.note_label)
        layout.addWidget(self.stack, 1)

        self.toggle_button.toggled.connect(self._on_toggle_toggled)
        self.save_button.clicked.connect(self._on_save_clicked)
        self._chunk_timer.timeout.connect(self._on_chunk_timeout)
        self._deadline.timeout.connect(self._on_deadline)
        _get_relay().finished.connect(self._on_future_finished)
        QTimer.singleShot(0, _warm_executor)  # after the window's first paint

    # -- public API ----------------------------------------------------------

    @property
    def content(self) -> ResourceContent | None:
        return self._content

    @property
    def registry(self) -> RendererRegistry:
        return self._registry

    @property
    def kind(self) -> str:
        """The kind of the renderer showing the content ("text", "csv", "pdf"...), or "loading"."""
        return self._prepared.kind if self._prepared is not None else "loading"

    @property
    def is_ready(self) -> bool:
        """The content is prepared and all of its shown text is in the view."""
        return self._prepared is not None and not self._pending_chunks

    def page(self, kind: str) -> QWidget | None:
        """The page of renderer `kind` in this view, once it has shown something (for tests and the shell)."""
        return self._pages.get(kind)

    def set_content(self, content: ResourceContent) -> None:
        """Show `content`; returns at once, large content appears when its worker is done."""
        self._content = content
        self._prepared = None
        self._future = None
        self._deadline.stop()
        self._pending_chunks = []
        self._chunk_timer.stop()
        self.info_label.setText(f"{content.mime_type or 'no MIME type'} · {content.uri}")
        self.toggle_button.hide()
        self.note_label.hide()
        if self._registry.prepare_inline(content):
            self._show_safely(_prepare_for_view(self._registry, content))
            return
        size = len(content.blob or "") if content.is_blob else len(content.text or "")
        self.stack.setCurrentWidget(self.loading_label)
        self.loading_label.setText(f"Preparing {human_size(size)} of content...")
        future = _threads.executor.submit(_prepare_for_view, self._registry, content)
        self._future = future
        self._deadline.start()
        future.add_done_callback(_get_relay().finished.emit)

    def clear(self) -> None:
        """Show nothing and drop the content and its text (a view kept for reuse must not hold 10 MB).

        A renderer's page (an image, a PDF page, rendered Markdown) keeps what it shows, at most its
        display limits, until the view shows content of that kind again.
        """
        self._content = None
        self._prepared = None
        self._future = None
        self._deadline.stop()
        self._pending_chunks = []
        self._chunk_timer.stop()
        self.info_label.clear()
        self.info_label.setToolTip("")
        self.note_label.hide()
        self.toggle_button.hide()
        self._highlighter.use_spans(CompactSpans())
        self.text_view.clear()
        self._rendered_page = None
        self.stack.setCurrentWidget(self.loading_label)
        self.loading_label.setText("")

    def save_to(self, path: str | Path) -> None:
        """Write the whole content (not just what is shown) to `path`."""
        if self._content is not None:
            Path(path).write_bytes(self._content.data())

    def shown_text(self) -> str:
        """The text in the current page (source, hex, or a rendered document's text), for tests and copying."""
        page = self.stack.currentWidget()
        for widget in (page, *(page.findChildren(QTextBrowser) if page is not None else [])):
            if isinstance(widget, QTextBrowser | QPlainTextEdit):
                return widget.toPlainText()
        return ""

    # -- rendering -----------------------------------------------------------

    def _page_for(self, kind: str) -> QWidget | None:
        if kind not in self._pages:
            renderer = self._registry.get(kind)
            page = renderer.create_page(self, self._actions) if renderer is not None else None
            if page is not None:
                self.stack.addWidget(page)
            self._pages[kind] = page
        return self._pages[kind]

    def _show_safely(self, ready: _Ready) -> None:
        """Show `ready`; if that fails (a renderer's page on hostile content), the content as received instead."""
        try:
            self._show(ready)
        except Exception as exc:
            logger.warning("showing the %s page failed", ready.prepared.kind, exc_info=True)
            if self._content is None:
                raise
            problem = f"Could not show the content ({failure_line(exc)}); showing it as received."
            self._show(_ready(raw_prepared(self._content, problem)))

    def _show(self, ready: _Ready) -> None:
        prepared = self._prepared = ready.prepared
        parts = [prepared.mime_type, human_size(prepared.size), *prepared.details]
        parts.append(self._content.uri if self._content else "")
        self.info_label.setText(" · ".join(parts))
        self.info_label.setToolTip(" · ".join(parts))
        if prepared.notes:
            self.note_label.setText(" ".join(prepared.notes))
            self.note_label.show()
        if prepared.text:
            # The spans are in place before the text arrives, so every line is highlighted once,
            # as it is inserted; a long text goes in piece by piece (see CHUNK_LINES).
            self._highlighter.use_spans(prepared.spans)
            chunks = ready.chunks
            self.text_view.setPlainText(chunks[0])
            self._pending_chunks = chunks[:0:-1]  # reversed: pop() takes the next one
        else:
            self.text_view.clear()
        self._rendered_page = None  # until the renderer's page has it: a failing show leaves the source
        renderer = self._registry.get(prepared.kind)
        page = self._page_for(prepared.kind)
        self._rendered_page = (
            page if renderer is not None and page is not None and renderer.show(page, prepared) else None
        )
        self.toggle_button.blockSignals(True)
        self.toggle_button.setChecked(False)
        self.toggle_button.blockSignals(False)
        self.toggle_button.setVisible(self._rendered_page is not None and bool(prepared.text))
        self._show_page(source=False)
        if self._pending_chunks:
            self._chunk_timer.start()
        else:
            self.rendered.emit()

    def _show_page(self, *, source: bool) -> None:
        page = self._rendered_page
        self.stack.setCurrentWidget(self.text_view if source or page is None else page)

    def _apply_colors(self) -> None:
        """Muted info, warning note and the image backdrop from the palette (again when the theme changes)."""
        palette = self.palette()
        colors = status_colors(palette)
        base, alternate = palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.AlternateBase)
        css = (
            f"QLabel#contentInfo {{ color: {colors.muted_text.name()}; }}"
            f" QLabel#contentNote, QLabel#contentHtmlBlocked {{ color: {colors.warning_text.name()}; }}"
            f" QLabel#contentMediaNote {{ color: {colors.muted_text.name()}; }}"
            f" QLabel#contentImage {{ background: qlineargradient(x1:0, y1:0, x2:1, y2:1,"
            f" stop:0 {base.name()}, stop:1 {alternate.name()}); }}"
        )
        if self.styleSheet() != css:
            self.setStyleSheet(css)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._apply_colors()

    # -- slots ---------------------------------------------------------------

    @Slot(object)
    def _on_future_finished(self, future: Future[_Ready]) -> None:
        if future is not self._future:
            return
        self._future = None
        self._deadline.stop()
        try:
            ready = future.result()
        except Exception as exc:  # the registry turns a renderer's failure into a note; this is the rest
            logger.warning("preparing the preview failed", exc_info=True)
            if self._content is None:
                return
            ready = _ready(raw_prepared(self._content, f"Could not prepare the content ({failure_line(exc)})."))
        self._show_safely(ready)

    @Slot()
    def _on_deadline(self) -> None:
        if self._future is None or self._content is None:
            return
        logger.warning("preparing %s content took more than %g s", self._content.mime_type, self._deadline_s)
        self._future = None  # its answer, if it ever comes, is dropped
        _threads.abandon()
        problem = f"The content took more than {self._deadline_s:g} s to prepare; showing it as received."
        self._show_safely(_ready(raw_prepared(self._content, problem)))

    @Slot()
    def _on_chunk_timeout(self) -> None:
        if not self._pending_chunks:
            return
        cursor = QTextCursor(self.text_view.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText("\n" + self._pending_chunks.pop())
        if self._pending_chunks:
            self._chunk_timer.start()
        else:
            self.rendered.emit()

    @Slot(bool)
    def _on_toggle_toggled(self, source: bool) -> None:
        self._show_page(source=source)

    @Slot()
    def _on_save_clicked(self) -> None:
        if self._content is None:
            return
        suggested = self._content.uri.rstrip("/").rsplit("/", 1)[-1] or "content"
        path, _filter = QFileDialog.getSaveFileName(self, "Save content as", suggested)
        if path:
            try:
                self.save_to(path)
            except (OSError, ValueError) as exc:  # ValueError: text holding a lone surrogate is not UTF-8
                self.note_label.setText(f"Could not save: {exc}")
                self.note_label.show()
