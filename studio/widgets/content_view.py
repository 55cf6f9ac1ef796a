"""Renders one piece of resource content: highlighted text, Markdown, CSV table, image or hex dump.

Preparing the display (pretty-printing, lexing, CSV parsing, decoding) is
plain Python in `prepare()`; small content is prepared inline, large content
on a worker thread, and the view fills in when the result arrives, so a
10 MB answer never freezes the window.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import logging
import re
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import (
    QAbstractTableModel,
    QByteArray,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSize,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtGui import QFontDatabase, QImage, QPainter, QPalette, QPixmap, QTextCursor
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QStackedWidget,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from resources_qt.content import ResourceContent
from studio.theme import status_colors
from studio.widgets.highlighter import SpanHighlighter, Spans, lex_spans, lexer_for_mime

logger = logging.getLogger(__name__)

__all__ = ["ContentView", "Prepared", "human_size", "prepare"]

INLINE_LIMIT = 64 * 1024
"""Content up to this size is prepared on the GUI thread (it takes a few milliseconds)."""
DISPLAY_LIMIT = 256 * 1024
"""Characters of text put into the view; the rest is reachable through "Save content as...". """
HIGHLIGHT_LIMIT = 256 * 1024
"""Characters of text that are syntax-highlighted; the rest of the shown text is plain."""
MARKDOWN_LIMIT = 200 * 1024
HEX_LIMIT = 16 * 1024
CSV_ROW_LIMIT = 100_000
FULL_JSON_LIMIT = 1024 * 1024
"""JSON up to this size is parsed whole (validated, then pretty-printed); larger JSON is pretty-printed
by a streaming tokenizer only as far as it is shown: `json.loads` of 10 MB holds the GIL (and so the GUI
thread) for a quarter of a second, and builds an object graph the garbage collector then walks."""
CHUNK_LINES = 1500
CHUNK_CHARS = 24 * 1024
"""Text goes into the view in pieces of at most this many lines or characters, one per event-loop turn
(a piece lays out and highlights in a few milliseconds), so the window keeps answering while it fills."""

_executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="preview-render")


def human_size(count: int) -> str:
    size = float(count)
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{count} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{count} bytes"


def _base_mime(mime: str) -> str:
    return (mime or "").split(";", 1)[0].strip().lower()


def _is_textual(mime: str) -> bool:
    base = _base_mime(mime)
    return (
        base.startswith("text/")
        or base.endswith(("json", "+xml", "/xml", "yaml", "javascript"))
        or base in ("application/x-python", "application/toml")
    )


@dataclass
class Prepared:
    """What the view needs to show a content; built off the GUI thread for large content."""

    kind: str  # "text", "markdown", "csv", "image", "svg", "hex"
    mime_type: str
    size: int
    text: str = ""
    spans: Spans = field(default_factory=dict)
    rows: list[list[str]] = field(default_factory=list)
    image: QImage | None = None
    data: bytes = b""
    notes: list[str] = field(default_factory=list)


def _hex_dump(data: bytes) -> str:
    lines = []
    for offset in range(0, len(data), 16):
        chunk = data[offset : offset + 16]
        hexes = " ".join(f"{b:02x}" for b in chunk)
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{offset:08x}  {hexes[:23]:<23}  {hexes[24:]:<23}  |{text}|")
    return "\n".join(lines)


_JSON_TOKEN = re.compile(
    r'[ \t\n\r]*(?:("(?:[^"\\\x00-\x1f]|\\.)*")|([{}\[\],:])|(-?\d[\d.eE+-]*|true|false|null))'
)
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_CLOSING = {"{": "}", "[": "]"}


def pretty_json_prefix(text: str, limit: int) -> tuple[str, bool] | None:
    """The start of `text` pretty-printed like `json.dumps(indent=2)`, up to about `limit` characters.

    Returns (pretty text, whether all of `text` was formatted), or None when the part read is not
    JSON. Pure Python token by token, so a worker thread running it never holds the GIL for long.
    Strings are kept as received (escapes included).
    """
    out: list[str] = []
    size = depth = pos = 0
    end = len(text)
    while size < limit:
        match = _JSON_TOKEN.match(text, pos)
        if match is None:
            if _JSON_SPACE.match(text, pos).end() == end:  # type: ignore[union-attr]
                return "".join(out), True
            return None
        pos = match.end()
        string, punct, scalar = match.groups()
        if punct in _CLOSING:
            after = _JSON_TOKEN.match(text, pos)
            if after is not None and after.group(2) == _CLOSING[punct]:
                piece, pos = punct + after.group(2), after.end()
            else:
                depth += 1
                piece = punct + "\n" + "  " * depth
        elif punct in ("}", "]"):
            depth = max(depth - 1, 0)
            piece = "\n" + "  " * depth + punct
        elif punct == ",":
            piece = ",\n" + "  " * depth
        elif punct == ":":
            piece = ": "
        else:
            piece = string or scalar or ""
        out.append(piece)
        size += len(piece)
    return "".join(out), _JSON_SPACE.match(text, pos).end() == end  # type: ignore[union-attr]


def _text_prepared(text: str, mime: str, size: int) -> Prepared:
    base = _base_mime(mime)
    notes: list[str] = []
    whole = True  # `text` is all there is to show (not a pretty-printed prefix)
    if base.endswith("json") and len(text) <= FULL_JSON_LIMIT:
        try:
            text = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        except ValueError:
            notes.append("Not valid JSON; shown as received.")
    elif base.endswith("json"):
        pretty = pretty_json_prefix(text, DISPLAY_LIMIT)
        if pretty is None:
            notes.append("Not valid JSON; shown as received.")
        elif not pretty[1]:
            text, whole = pretty[0], False
        else:
            text = pretty[0]
    shown = text
    if len(text) > DISPLAY_LIMIT or not whole:
        shown = text[:DISPLAY_LIMIT]
        of_what = (
            f"{human_size(len(text))} of text"
            if whole
            else f"{human_size(size)} of JSON, pretty-printed (and checked) as far as shown"
        )
        notes.append(
            f"Showing the first {human_size(DISPLAY_LIMIT)} of {of_what}; use Save content as... for all of it."
        )
    head = shown[:HIGHLIGHT_LIMIT]
    if len(shown) > HIGHLIGHT_LIMIT:
        notes.append(f"Highlighting the first {human_size(HIGHLIGHT_LIMIT)}.")
    spans = lex_spans(head, lexer_for_mime(mime)) if head else {}
    return Prepared("text", mime, size, text=shown, spans=spans, notes=notes)


def _render_svg(data: bytes) -> QImage | None:
    renderer = QSvgRenderer(QByteArray(data))
    if not renderer.isValid():
        return None
    size = renderer.defaultSize()
    if size.isEmpty():
        size = QSize(256, 256)
    size = size.boundedTo(QSize(4096, 4096))
    image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    return image


def prepare(content: ResourceContent) -> Prepared:
    """Decide how to show `content` and do the heavy work; safe on any thread (no widgets)."""
    mime = content.mime_type or ("application/octet-stream" if content.is_blob else "text/plain")
    base = _base_mime(mime)
    data = content.data() if content.is_blob else b""
    text = content.text if not content.is_blob else None
    size = len(data) if content.is_blob else len((text or "").encode("utf-8"))
    if base == "image/svg+xml":
        source = data if content.is_blob else (text or "").encode("utf-8")
        image = _render_svg(source)
        if image is not None:
            prepared = _text_prepared(source.decode("utf-8", "replace"), mime, size)
            prepared.kind, prepared.image = "svg", image
            return prepared
    if content.is_blob and base.startswith("image/"):
        image = QImage.fromData(data)
        if not image.isNull():
            return Prepared("image", mime, size, image=image, data=data)
        hexed = _hex_prepared(data, mime, size)
        hexed.notes.insert(0, "The image could not be decoded; showing its bytes.")
        return hexed
    if content.is_blob:
        if _is_textual(mime):
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                return _hex_prepared(data, mime, size)
        else:
            return _hex_prepared(data, mime, size)
    text = text or ""
    if base in ("text/csv", "text/tab-separated-values"):
        delimiter = "\t" if base == "text/tab-separated-values" else ","
        reader = csv.reader(io.StringIO(text[: DISPLAY_LIMIT * 8]), delimiter=delimiter)
        rows: list[list[str]] = []
        notes = []
        try:
            for row in reader:
                if len(rows) >= CSV_ROW_LIMIT:
                    notes.append(f"Showing the first {CSV_ROW_LIMIT:,} rows.")
                    break
                rows.append(row)
        except csv.Error as exc:
            notes.append(f"CSV stopped parsing at row {len(rows) + 1}: {exc}")
        prepared = _text_prepared(text, mime, size)
        prepared.kind, prepared.rows = "csv", rows
        prepared.notes = notes + prepared.notes
        return prepared
    prepared = _text_prepared(text, mime, size)
    if base in ("text/markdown", "text/x-markdown"):
        prepared.kind = "markdown"
        if len(text) > MARKDOWN_LIMIT:
            prepared.notes.append(
                f"Too large to render (over {human_size(MARKDOWN_LIMIT)}); showing the source."
            )
    return prepared


def _hex_prepared(data: bytes, mime: str, size: int) -> Prepared:
    notes = [f"{human_size(size)} of binary data ({mime})."]
    if size > HEX_LIMIT:
        notes.append(
            f"Showing the first {human_size(HEX_LIMIT)} of {human_size(size)}; use Save content as... for all."
        )
    return Prepared("hex", mime, size, text=_hex_dump(data[:HEX_LIMIT]), data=data, notes=notes)


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


class _CsvModel(QAbstractTableModel):
    """A read-only table over parsed rows; the first row is the header."""

    def __init__(self, rows: list[list[str]], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._header = rows[0] if rows else []
        self._rows = rows[1:]
        self._columns = max((len(row) for row in rows), default=0)

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self._columns

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole) and index.isValid():
            row = self._rows[index.row()]
            return row[index.column()] if index.column() < len(row) else ""
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return self._header[section] if section < len(self._header) else f"column {section + 1}"
        return str(section + 1)


class _Relay(QObject):
    """Carries finished futures from worker threads to the GUI thread; lives as long as the app."""

    finished = Signal(object)


@functools.cache
def _get_relay() -> _Relay:
    """One relay for the process, made on first use (on the GUI thread, so it lives there)."""
    return _Relay()


class ContentView(QWidget):
    """Shows one `ResourceContent` in the best available form.

    Signals:
        rendered(): the content is on screen (after the worker finished, for large content).
    """

    rendered = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("contentView")
        self._apply_colors()
        self._content: ResourceContent | None = None
        self._prepared: Prepared | None = None
        self._future: Future[Prepared] | None = None
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

        self.info_label = QLabel(self)
        self.info_label.setObjectName("contentInfo")
        # The line may be cut at the right in a narrow preview rather than widening it; the tooltip has it all.
        self.info_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
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
        self.text_view.setReadOnly(True)
        self.text_view.setFont(mono)
        self.text_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text_view.setUndoRedoEnabled(False)  # read-only: an undo history would only cost memory
        self._highlighter = SpanHighlighter(self.text_view.document())
        self._pending_chunks: list[str] = []
        self._chunk_timer = QTimer(self)
        self._chunk_timer.setSingleShot(True)
        self._chunk_timer.setInterval(0)
        self.markdown_view = QTextBrowser(self)
        self.markdown_view.setObjectName("contentMarkdown")
        self.markdown_view.setOpenExternalLinks(True)
        self.table_view = QTableView(self)
        self.table_view.setObjectName("contentTable")
        self.table_view.setAlternatingRowColors(True)
        self.table_view.horizontalHeader().setStretchLastSection(True)
        self.table_view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.image_label = QLabel(self)
        self.image_label.setObjectName("contentImage")
        self.image_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        image_scroll = QScrollArea(self)
        image_scroll.setWidget(self.image_label)
        image_scroll.setWidgetResizable(True)
        self.hex_view = QPlainTextEdit(self)
        self.hex_view.setObjectName("contentHex")
        self.hex_view.setReadOnly(True)
        self.hex_view.setFont(mono)
        self.hex_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self._pages = {
            "loading": self.loading_label,
            "text": self.text_view,
            "markdown": self.markdown_view,
            "csv": self.table_view,
            "image": image_scroll,
            "hex": self.hex_view,
        }
        for page in self._pages.values():
            self.stack.addWidget(page)

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
        _get_relay().finished.connect(self._on_future_finished)

    # -- public API ----------------------------------------------------------

    @property
    def content(self) -> ResourceContent | None:
        return self._content

    @property
    def kind(self) -> str:
        """How the content is shown: "loading", "text", "markdown", "csv", "image", "svg" or "hex"."""
        return self._prepared.kind if self._prepared is not None else "loading"

    @property
    def is_ready(self) -> bool:
        """The content is prepared and all of its shown text is in the view."""
        return self._prepared is not None and not self._pending_chunks

    def _apply_colors(self) -> None:
        """Muted info, warning note and the image backdrop from the palette (again when the theme changes)."""
        palette = self.palette()
        colors = status_colors(palette)
        base, alternate = palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.AlternateBase)
        css = (
            f"QLabel#contentInfo {{ color: {colors.muted_text.name()}; }}"
            f" QLabel#contentNote {{ color: {colors.warning_text.name()}; }}"
            f" QLabel#contentImage {{ background: qlineargradient(x1:0, y1:0, x2:1, y2:1,"
            f" stop:0 {base.name()}, stop:1 {alternate.name()}); }}"
        )
        if self.styleSheet() != css:
            self.setStyleSheet(css)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._apply_colors()

    def set_content(self, content: ResourceContent) -> None:
        """Show `content`; returns at once, large content appears when its worker is done."""
        self._content = content
        self._prepared = None
        self._future = None
        self._pending_chunks = []
        self._chunk_timer.stop()
        size = len(content.blob or "") if content.is_blob else len(content.text or "")
        self.info_label.setText(f"{content.mime_type or 'no MIME type'} · {content.uri}")
        self.toggle_button.hide()
        self.note_label.hide()
        if size <= INLINE_LIMIT:
            self._show(prepare(content))
            return
        self.stack.setCurrentWidget(self.loading_label)
        self.loading_label.setText(f"Preparing {human_size(size)} of content...")
        future = _executor.submit(prepare, content)
        self._future = future
        relay = _get_relay()
        future.add_done_callback(relay.finished.emit)

    def save_to(self, path: str | Path) -> None:
        """Write the whole content (not just what is shown) to `path`."""
        if self._content is not None:
            Path(path).write_bytes(self._content.data())

    def shown_text(self) -> str:
        """The text in the current page (text, hex or Markdown source), for tests and copying."""
        page = self.stack.currentWidget()
        if page is self.markdown_view:
            return self.markdown_view.toPlainText()
        if isinstance(page, QPlainTextEdit):
            return page.toPlainText()
        return ""

    # -- rendering -----------------------------------------------------------

    def _show(self, prepared: Prepared) -> None:
        self._prepared = prepared
        parts = [prepared.mime_type, human_size(prepared.size)]
        if prepared.image is not None:
            parts.append(f"{prepared.image.width()} \u00d7 {prepared.image.height()} px")
        parts.append(self._content.uri if self._content else "")
        self.info_label.setText(" · ".join(parts))
        self.info_label.setToolTip(" · ".join(parts))
        if prepared.notes:
            self.note_label.setText(" ".join(prepared.notes))
            self.note_label.show()
        kind = prepared.kind
        if kind in ("text", "markdown", "csv", "svg"):
            # The spans are in place before the text arrives, so every line is highlighted once,
            # as it is inserted; a long text goes in piece by piece (see CHUNK_LINES).
            self._highlighter.use_spans(prepared.spans)
            chunks = _chunks(prepared.text)
            self.text_view.setPlainText(chunks[0])
            self._pending_chunks = chunks[:0:-1]  # reversed: pop() takes the next one
        if kind == "hex":
            self.hex_view.setPlainText(prepared.text)
        if kind == "csv":
            model = _CsvModel(prepared.rows, self.table_view)
            old = self.table_view.model()
            self.table_view.setModel(model)
            if old is not None:
                old.deleteLater()
        if kind == "markdown" and len(prepared.text) <= MARKDOWN_LIMIT:
            self.markdown_view.setMarkdown(prepared.text)
        if kind in ("image", "svg") and prepared.image is not None:
            self.image_label.setPixmap(QPixmap.fromImage(prepared.image))
            self.image_label.setToolTip(f"{prepared.image.width()} x {prepared.image.height()} pixels")
        renderable = kind in ("csv", "svg") or (kind == "markdown" and len(prepared.text) <= MARKDOWN_LIMIT)
        self.toggle_button.blockSignals(True)
        self.toggle_button.setChecked(False)
        self.toggle_button.blockSignals(False)
        self.toggle_button.setVisible(renderable)
        self._show_page(source=not renderable)
        if self._pending_chunks:
            self._chunk_timer.start()
        else:
            self.rendered.emit()

    def _show_page(self, *, source: bool) -> None:
        kind = self.kind
        if kind in ("hex", "image"):
            page = kind
        elif source or kind == "text":
            page = "text"
        else:
            page = {"markdown": "markdown", "csv": "csv", "svg": "image", "image": "image"}[kind]
        self.stack.setCurrentWidget(self._pages[page])

    # -- slots ---------------------------------------------------------------

    @Slot(object)
    def _on_future_finished(self, future: Future[Prepared]) -> None:
        if future is not self._future:
            return
        self._future = None
        try:
            prepared = future.result()
        except Exception as exc:
            logger.exception("preparing the preview failed")
            prepared = Prepared("text", "text/plain", 0, text=f"Could not prepare the content: {exc}")
        self._show(prepared)

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
            except OSError as exc:
                self.note_label.setText(f"Could not save: {exc}")
                self.note_label.show()
