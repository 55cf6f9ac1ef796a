"""The traffic log: JSON-RPC messages in and out, bounded, filterable, highlighted and exportable."""

from __future__ import annotations

import json
import logging
from collections import deque
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import JsonLexer
from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelection,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtGui import QBrush, QFontDatabase, QGuiApplication, QTextOption
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSplitter,
    QStyle,
    QTableView,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from resources_qt.project import write_atomic
from studio.look.icons import icon
from studio.look.theme import pygments_style, status_colors

if TYPE_CHECKING:
    from resources_qt.qt import TrafficEntry

logger = logging.getLogger(__name__)

__all__ = ["DEFAULT_CAPACITY", "TrafficFilterModel", "TrafficLog", "TrafficModel", "entry_to_dict"]

DEFAULT_CAPACITY = 5000
ALL_SESSIONS = "*"
METHOD_COLUMN_CHARS = 48
"""The method column grows to its longest method up to this many characters (a client names its own methods);
a longer one is cut with its tooltip whole."""
_HEADERS = ("Time", "Session", "", "Method", "Summary")


def _short(session_id: str | None) -> str:
    return session_id[:8] if session_id else "—"


def _summary(message: Any) -> str:
    """A few words on what a message is about, so the table is readable without the detail pane."""
    if not isinstance(message, dict):
        return ""
    if isinstance(message.get("error"), dict):
        error = message["error"]
        return f"error {error.get('code')}: {error.get('message', '')}"[:200]
    params = message.get("params")
    if isinstance(params, dict):
        for key in ("uri", "name", "cursor"):
            if isinstance(params.get(key), str):
                return f"{key}={params[key]}"[:200]
        ref = params.get("ref")
        if isinstance(ref, dict):
            return f"ref={ref.get('uri') or ref.get('name') or ''}"[:200]
    result = message.get("result")
    if isinstance(result, dict):
        for key in ("resources", "resourceTemplates", "contents"):
            if isinstance(result.get(key), list):
                return f"{len(result[key])} {key}"
    if "id" in message:
        return f"id={message['id']}"
    return ""


def entry_to_dict(entry: TrafficEntry) -> dict[str, Any]:
    """A traffic entry as a JSON-serialisable dict (one line of an export)."""
    when = entry.time
    return {
        "time": when.isoformat() if isinstance(when, datetime) else str(when),
        "session": entry.session_id,
        "direction": entry.direction,
        "method": entry.method,
        "message": entry.message,
    }


class TrafficModel(QAbstractTableModel):
    """A ring buffer of traffic entries (oldest dropped past `capacity`), appended in batches.

    Entries are the facade's `TrafficEntry` records (time, session_id, direction, method, message).

    Signals:
        sessions_seen(list session_ids): `list[str]`, the ids of sessions new to the log, in order of
            appearance.
    """

    sessions_seen = Signal(list)

    COLUMN_TIME, COLUMN_SESSION, COLUMN_DIRECTION, COLUMN_METHOD, COLUMN_SUMMARY = range(5)
    EntryRole = Qt.ItemDataRole.UserRole + 1

    def __init__(self, capacity: int = DEFAULT_CAPACITY, parent: QObject | None = None) -> None:
        super().__init__(parent)
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, not {capacity}")
        self._capacity = capacity
        self._rows: deque[TrafficEntry] = deque()
        self._summaries: dict[int, str] = {}
        self._known_sessions: set[str] = set()

    @property
    def capacity(self) -> int:
        return self._capacity

    def entries(self) -> list[TrafficEntry]:
        return list(self._rows)

    def entry(self, row: int) -> TrafficEntry:
        return self._rows[row]

    def append_batch(self, batch: Sequence[TrafficEntry]) -> None:
        """Append one batch: at most one remove and one insert notification, whatever its size."""
        if not batch:
            return
        batch = list(batch)[-self._capacity :]
        overflow = len(self._rows) + len(batch) - self._capacity
        if overflow > 0:
            self.beginRemoveRows(QModelIndex(), 0, overflow - 1)
            for _ in range(overflow):
                self._summaries.pop(id(self._rows.popleft()), None)
            self.endRemoveRows()
        first = len(self._rows)
        self.beginInsertRows(QModelIndex(), first, first + len(batch) - 1)
        self._rows.extend(batch)
        self.endInsertRows()
        fresh = []
        for entry in batch:
            session = entry.session_id
            if session and session not in self._known_sessions:
                self._known_sessions.add(session)
                fresh.append(session)
        if fresh:
            self.sessions_seen.emit(fresh)

    def clear(self) -> None:
        self.beginResetModel()
        self._rows.clear()
        self._summaries.clear()
        self.endResetModel()

    # -- Qt model API ----------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(_HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return _HEADERS[section]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole:
            return ("When the message passed", "The session (first characters of its id)",
                    "Direction: ← received from the client, → sent by the server", "JSON-RPC method",
                    "What the message is about")[section]  # fmt: skip
        return None

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        entry = self._rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == self.COLUMN_TIME:
                when = entry.time
                return when.strftime("%H:%M:%S.%f")[:-3] if isinstance(when, datetime) else str(when)
            if column == self.COLUMN_SESSION:
                return _short(entry.session_id)
            if column == self.COLUMN_DIRECTION:
                return "←" if entry.direction == "in" else "→"
            if column == self.COLUMN_METHOD:
                return entry.method or "(response)"
            if column == self.COLUMN_SUMMARY:
                key = id(entry)
                if key not in self._summaries:
                    self._summaries[key] = _summary(entry.message)
                return self._summaries[key]
        elif role == Qt.ItemDataRole.ForegroundRole:
            # From the application palette, so the log follows View > Theme.
            colors = status_colors(QGuiApplication.palette())
            if column == self.COLUMN_DIRECTION:
                return QBrush(colors.incoming if entry.direction == "in" else colors.outgoing)
            if column == self.COLUMN_SUMMARY and isinstance(entry.message, dict) and "error" in entry.message:
                return QBrush(colors.error_text)
        elif role == Qt.ItemDataRole.ToolTipRole:
            if column == self.COLUMN_SESSION:
                return entry.session_id or "no session (a sessionless request)"
            if column == self.COLUMN_DIRECTION:
                return "received from the client" if entry.direction == "in" else "sent by the server"
            if column == self.COLUMN_METHOD:
                return entry.method or "a response to a request"
        elif role == Qt.ItemDataRole.TextAlignmentRole and column == self.COLUMN_DIRECTION:
            return Qt.AlignmentFlag.AlignCenter
        elif role == self.EntryRole:
            return entry
        return None


class TrafficFilterModel(QSortFilterProxyModel):
    """Shows the entries of one session (or all) whose method contains the filter text. No signals of its own."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._session = ALL_SESSIONS
        self._method = ""

    def set_session(self, session_id: str) -> None:
        self.beginFilterChange()
        self._session = session_id or ALL_SESSIONS
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def set_method(self, text: str) -> None:
        self.beginFilterChange()
        self._method = text.strip().lower()
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def is_filtering(self) -> bool:
        return self._session != ALL_SESSIONS or bool(self._method)

    def filterAcceptsRow(self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex) -> bool:
        if not self.is_filtering():
            return True
        model = self.sourceModel()
        assert isinstance(model, TrafficModel)
        entry = model.entry(source_row)
        if self._session != ALL_SESSIONS and entry.session_id != self._session:
            return False
        return not self._method or self._method in (entry.method or "(response)").lower()


class TrafficLog(QWidget):
    """The traffic log panel: table, filters, pause/clear/export and a highlighted detail pane.

    Feed it with `add_entries(batch)` (the facade's `traffic_logged`).

    Signals:
        exported(str path): the visible entries were written to this JSON-lines file.
    """

    exported = Signal(str)

    def __init__(self, capacity: int = DEFAULT_CAPACITY, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("trafficLogPanel")
        self.model = TrafficModel(capacity, self)
        self.proxy = TrafficFilterModel(self)
        self.proxy.setSourceModel(self.model)
        self._paused = False
        self._held: deque[TrafficEntry] = deque(maxlen=capacity)
        self._follow = True
        self._session_labels: dict[str, str] = {}

        self.session_filter = QComboBox()
        self.session_filter.setObjectName("trafficSessionFilter")
        self.session_filter.addItem("All sessions", ALL_SESSIONS)
        self.session_filter.setToolTip("Show only the messages of one session")
        self.session_filter.setMinimumContentsLength(14)
        self.method_filter = QLineEdit()
        self.method_filter.setObjectName("trafficMethodFilter")
        self.method_filter.setPlaceholderText("Filter by method…")
        self.method_filter.setClearButtonEnabled(True)
        self.method_filter.setToolTip(
            "Show only messages whose method contains this text (e.g. resources/read)"
        )
        self.method_filter.addAction(icon("filter"), QLineEdit.ActionPosition.LeadingPosition)
        self.method_filter.setAccessibleName("Filter by method")
        self.session_filter.setAccessibleName("Session shown")

        self.pause_button = self._tool(
            "pause", "Pause", "Pause the log (messages are held and shown on resume)"
        )
        self.pause_button.setObjectName("trafficPauseButton")
        self.pause_button.setCheckable(True)
        self.clear_button = self._tool("clear", "Clear", "Clear the log")
        self.clear_button.setObjectName("trafficClearButton")
        self.export_button = self._tool("export", "Export…", "Export the shown messages as JSON lines")
        self.export_button.setObjectName("trafficExportButton")
        self.count_label = QLabel()
        self.count_label.setObjectName("trafficCount")
        self.count_label.setToolTip(f"The log keeps the latest {capacity:,} messages")

        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.session_filter)
        bar.addWidget(self.method_filter, 1)
        for widget in (self.pause_button, self.clear_button, self.export_button, self.count_label):
            bar.addWidget(widget)

        self.table = QTableView()
        self.table.setObjectName("trafficLog")
        self.table.setModel(self.proxy)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for column, width in enumerate((96, 76, 28, 190)):
            self.table.setColumnWidth(column, width)
        self.table.setToolTip(
            "JSON-RPC messages between the clients and the server; select one to see it in full"
        )
        self.table.setAccessibleName("Traffic")
        self.table.setAccessibleDescription(
            "JSON-RPC messages between the clients and the server: time, session, direction, method and "
            "summary; select one to see it in full"
        )

        self.detail = QTextBrowser()
        self.detail.setObjectName("trafficDetail")
        self.detail.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.detail.setPlaceholderText("Select a message to see it in full")
        self.detail.setOpenLinks(False)
        self.detail.setAccessibleName("Message")
        self.detail.setAccessibleDescription("The selected message in full, as JSON")
        # Long lines (a URI, a base64 blob) wrap, anywhere if they must: nothing is out of sight sideways.
        self.detail.setLineWrapMode(QTextBrowser.LineWrapMode.WidgetWidth)
        self.detail.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.table)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setChildrenCollapsible(False)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(splitter, 1)

        self.session_filter.currentIndexChanged.connect(self._on_session_filter_changed)
        self.method_filter.textChanged.connect(self._on_method_filter_changed)
        self.pause_button.toggled.connect(self._on_pause_toggled)
        self.clear_button.clicked.connect(self._on_clear_clicked)
        self.export_button.clicked.connect(self._on_export_clicked)
        self.model.sessions_seen.connect(self._on_sessions_seen)
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self.table.verticalScrollBar().valueChanged.connect(self._on_scrolled)
        self._update_count()

    def _tool(self, icon_name: str, text: str, tip: str) -> QToolButton:
        button = QToolButton()
        button.setIcon(icon(icon_name))
        button.setText(text)
        button.setToolTip(tip)
        button.setAutoRaise(True)
        return button

    # -- feeding ------------------------------------------------------------------------

    @property
    def paused(self) -> bool:
        return self._paused

    @Slot(list)
    def add_entries(self, batch: Iterable[TrafficEntry]) -> None:
        """Append a batch of traffic entries (held while paused)."""
        entries = list(batch)
        if self._paused:
            self._held.extend(entries)
            self._update_count()
            return
        self.model.append_batch(entries)
        self._fit_method_column(entries)
        self._update_count()
        if self._follow:
            self.table.scrollToBottom()

    def _fit_method_column(self, entries: Iterable[TrafficEntry]) -> None:
        """Widen the method column to the longest method logged (up to METHOD_COLUMN_CHARS), never narrow it."""
        metrics = self.table.fontMetrics()
        methods = {(entry.method or "(response)")[: METHOD_COLUMN_CHARS + 1] for entry in entries}
        padding = 2 * self.table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 12
        widest = max((metrics.horizontalAdvance(method) for method in methods), default=0) + padding
        wanted = min(widest, metrics.averageCharWidth() * METHOD_COLUMN_CHARS + padding)
        column = TrafficModel.COLUMN_METHOD
        if wanted > self.table.columnWidth(column):
            self.table.setColumnWidth(column, wanted)

    def set_session_label(self, session_id: str, label: str) -> None:
        """Name a session in the filter (e.g. by its client) instead of by its id."""
        self._session_labels[session_id] = label
        index = self.session_filter.findData(session_id)
        if index >= 0:
            self.session_filter.setItemText(index, f"{label} ({_short(session_id)})")

    def export_jsonl(self, path: str | Path) -> int:
        """Write the shown entries (after filtering) as JSON lines; returns how many."""
        lines = []
        for row in range(self.proxy.rowCount()):
            entry = self.proxy.index(row, 0).data(TrafficModel.EntryRole)
            lines.append(json.dumps(entry_to_dict(entry), ensure_ascii=False, default=str) + "\n")
        write_atomic(path, "".join(lines))
        self.exported.emit(str(path))
        return len(lines)

    # -- slots --------------------------------------------------------------------------

    @Slot(list)
    def _on_sessions_seen(self, sessions: list[str]) -> None:
        for session in sessions:
            label = self._session_labels.get(session)
            text = f"{label} ({_short(session)})" if label else _short(session)
            self.session_filter.addItem(text, session)

    @Slot(int)
    def _on_session_filter_changed(self, index: int) -> None:
        self.proxy.set_session(self.session_filter.itemData(index) or ALL_SESSIONS)
        self._update_count()

    @Slot(str)
    def _on_method_filter_changed(self, text: str) -> None:
        self.proxy.set_method(text)
        self._update_count()

    @Slot(bool)
    def _on_pause_toggled(self, paused: bool) -> None:
        self._paused = paused
        self.pause_button.setToolTip(
            "Resume the log" if paused else "Pause the log (messages are held and shown on resume)"
        )
        if not paused and self._held:
            held = list(self._held)
            self._held.clear()
            self.add_entries(held)
        self._update_count()

    @Slot()
    def _on_clear_clicked(self) -> None:
        self._held.clear()
        self.model.clear()
        self.detail.clear()
        self._update_count()

    @Slot()
    def _on_export_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Export traffic", "traffic.jsonl", "JSON lines (*.jsonl);;All files (*)"
        )
        if path:
            try:
                self.export_jsonl(path)
            except OSError as exc:
                logger.warning("traffic export failed: %s", exc)

    @Slot(int)
    def _on_scrolled(self, value: int) -> None:
        bar = self.table.verticalScrollBar()
        self._follow = value >= bar.maximum() - 2

    @Slot(QItemSelection, QItemSelection)
    def _on_selection_changed(self, selected: QItemSelection, deselected: QItemSelection) -> None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            self.detail.clear()
            return
        entry = rows[0].data(TrafficModel.EntryRole)
        self.show_entry(entry)

    @Slot(float)
    def scroll_to_time(self, when: float) -> bool:
        """Select and show the first message shown at or after wall-clock second `when` (a chart's spike);
        the log stops following new messages. False when none is that recent."""
        target = datetime.fromtimestamp(int(when), UTC)
        proxy = self.proxy
        low, high = 0, proxy.rowCount()
        while low < high:  # the log is in arrival order, so times only grow
            middle = (low + high) // 2
            entry = proxy.index(middle, 0).data(TrafficModel.EntryRole)
            if isinstance(entry.time, datetime) and entry.time < target:
                low = middle + 1
            else:
                high = middle
        if low >= proxy.rowCount():
            return False
        self._follow = False
        index = proxy.index(low, 0)
        self.table.selectRow(low)
        self.table.scrollTo(index, QTableView.ScrollHint.PositionAtTop)
        return True

    def show_entry(self, entry: TrafficEntry) -> None:
        text = json.dumps(entry.message, indent=2, ensure_ascii=False, default=str)
        if len(text) > 200_000:  # highlighting megabytes would stall the GUI; show the start
            text = text[:200_000] + "\n… (truncated)"
        palette = self.detail.palette()
        formatter = HtmlFormatter(noclasses=True, nobackground=True, style=pygments_style(palette),
                                  prestyles="white-space: pre-wrap")  # fmt: skip
        html = highlight(text, JsonLexer(), formatter)
        direction = "received from" if entry.direction == "in" else "sent to"
        when = (
            entry.time.strftime("%H:%M:%S.%f")[:-3] if isinstance(entry.time, datetime) else str(entry.time)
        )
        muted = status_colors(palette).muted_text.name()
        header = (f"<p style='color:{muted}'>{when} · {direction} session "
                  f"<b>{entry.session_id or '—'}</b> · {entry.method or '(response)'}</p>")  # fmt: skip
        self.detail.setHtml(header + html)

    def _update_count(self) -> None:
        shown, total = self.proxy.rowCount(), self.model.rowCount()
        text = f"{total:,} messages" if shown == total else f"{shown:,} of {total:,} messages"
        if self._held:
            text += f" · {len(self._held):,} held"
        self.count_label.setText(text)
