"""The live table of connected MCP sessions: client, protocol version, transport, subscriptions."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelection,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

if TYPE_CHECKING:
    from resources_qt.qt import SessionInfo

__all__ = ["SessionRow", "SessionsModel", "SessionsView", "connected_text", "shown_text"]

AGE_REFRESH_MS = 30_000
CLIENT_COLUMN_CHARS = 40
"""The client column grows to the longest client name up to this many characters; longer ones are cut, whole in
their tooltip."""
MAX_SHOWN_CHARS = 500
"""Client strings longer than this are cut where they are shown (a URI may be kilobytes long)."""
_MAX_TIP_SUBSCRIPTIONS = 20


def shown_text(text: str, *, limit: int = MAX_SHOWN_CHARS) -> str:
    """A client-provided string made safe to show: non-printables escaped as in repr(), long ones cut.

    Clients choose their name, version and URIs: control characters, terminal escapes
    and invisible format characters would otherwise forge or hide text in the views.
    The model keeps the strings as sent (sends use them); only what is displayed is escaped.
    """
    if text.isprintable() and len(text) <= limit:
        return text
    escaped = "".join(char if char.isprintable() else repr(char)[1:-1] for char in text[: limit + 1])
    if len(text) > limit or len(escaped) > limit:
        return f"{escaped[:limit]}… ({len(text):,} characters)"
    return escaped


def connected_text(connected_at: datetime, now: datetime | None = None) -> str:
    """Local clock time and age, e.g. "12:03:41 (2 min ago)"; the engine stamps sessions in UTC."""
    local = connected_at.astimezone() if connected_at.tzinfo is not None else connected_at
    now = now if now is not None else datetime.now(local.tzinfo)
    minutes = max(0, int((now - local).total_seconds() // 60))
    if minutes < 1:
        age = "just now"
    elif minutes < 60:
        age = f"{minutes} min ago"
    else:
        age = f"{minutes // 60} h {minutes % 60} min ago"
    return f"{local:%H:%M:%S} ({age})"

_HEADERS = ("Client", "Protocol", "Transport", "Connected", "Subscriptions")


def caller_text(info: SessionInfo) -> str:
    """Who called an authorized server: the token's subject and client id, never the token ("" without auth)."""
    return " ".join(part for part in (info.subject, f"({info.client_id})" if info.client_id else "") if part)


@dataclass
class SessionRow:
    """What the table shows of one session; subscriptions change while it is connected."""

    id: str
    client: str
    protocol_version: str
    transport: str
    connected_at: datetime | None
    subscriptions: set[str] = field(default_factory=set)

    @classmethod
    def from_info(cls, info: SessionInfo) -> SessionRow:
        """From the facade's `SessionInfo` record."""
        name = info.client_name or "unknown client"
        who = caller_text(info)
        return cls(
            id=info.id,
            client=f"{name} {info.client_version}".strip() + (f" · {who}" if who else ""),
            protocol_version=info.protocol_version or "",
            transport=f"{info.transport} (listen)" if info.kind == "listen" else info.transport,
            connected_at=info.connected_at,
            subscriptions=set(info.subscriptions),
        )


class SessionsModel(QAbstractTableModel):
    """Sessions in order of connection, kept current from the facade's session signals.

    Signals:
        subscriptions_changed(): some session's subscriptions (or the set of sessions) changed.
    """

    subscriptions_changed = Signal()

    SessionIdRole = Qt.ItemDataRole.UserRole + 1
    COLUMN_SUBSCRIPTIONS = 4

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[SessionRow] = []
        # The "Connected" column says how long ago; it is refreshed now and then, not per second.
        self._age_timer = QTimer(self)
        self._age_timer.setInterval(AGE_REFRESH_MS)
        self._age_timer.timeout.connect(self._on_age_timeout)
        self._age_timer.start()

    @Slot()
    def _on_age_timeout(self) -> None:
        if self._rows:
            self.dataChanged.emit(self.index(0, 3), self.index(len(self._rows) - 1, 3))

    def rows(self) -> list[SessionRow]:
        return list(self._rows)

    def session(self, session_id: str) -> SessionRow | None:
        return next((row for row in self._rows if row.id == session_id), None)

    def subscribed_uris(self) -> list[str]:
        """Every URI some session subscribed to, sorted."""
        return sorted({uri for row in self._rows for uri in row.subscriptions})

    def _row_of(self, session_id: str) -> int:
        return next((i for i, row in enumerate(self._rows) if row.id == session_id), -1)

    def set_sessions(self, infos: Iterable[SessionInfo]) -> None:
        self.beginResetModel()
        self._rows = [SessionRow.from_info(info) for info in infos]
        self.endResetModel()
        self.subscriptions_changed.emit()

    def add_session(self, info: SessionInfo) -> None:
        row = SessionRow.from_info(info)
        index = self._row_of(row.id)
        if index >= 0:  # a repeated announcement refreshes the row
            self._rows[index] = row
            self.dataChanged.emit(self.index(index, 0), self.index(index, len(_HEADERS) - 1))
        else:
            self.beginInsertRows(QModelIndex(), len(self._rows), len(self._rows))
            self._rows.append(row)
            self.endInsertRows()
        self.subscriptions_changed.emit()

    def remove_session(self, session_id: str) -> None:
        index = self._row_of(session_id)
        if index < 0:
            return
        self.beginRemoveRows(QModelIndex(), index, index)
        del self._rows[index]
        self.endRemoveRows()
        self.subscriptions_changed.emit()

    def clear(self) -> None:
        self.set_sessions([])

    def add_subscription(self, session_id: str, uri: str) -> None:
        self._change_subscription(session_id, uri, add=True)

    def remove_subscription(self, session_id: str, uri: str) -> None:
        self._change_subscription(session_id, uri, add=False)

    def _change_subscription(self, session_id: str, uri: str, *, add: bool) -> None:
        index = self._row_of(session_id)
        if index < 0:
            return
        subscriptions = self._rows[index].subscriptions
        if add:
            subscriptions.add(uri)
        else:
            subscriptions.discard(uri)
        cell = self.index(index, self.COLUMN_SUBSCRIPTIONS)
        self.dataChanged.emit(cell, cell)
        self.subscriptions_changed.emit()

    # -- Qt model API --------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(_HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return _HEADERS[section]
        return None

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        row = self._rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return shown_text(row.client, limit=120)
            if column == 1:
                return shown_text(row.protocol_version, limit=40)
            if column == 2:
                return row.transport
            if column == 3:
                return connected_text(row.connected_at) if row.connected_at else ""
            if column == self.COLUMN_SUBSCRIPTIONS:
                return shown_text(", ".join(sorted(row.subscriptions))) if row.subscriptions else "—"
        elif role == Qt.ItemDataRole.ToolTipRole:
            # Each cell's tooltip has its own text whole first (the cell may be cut), then the session.
            listed = sorted(row.subscriptions)
            subscriptions = "\n".join(shown_text(uri) for uri in listed[:_MAX_TIP_SUBSCRIPTIONS]) or "no subscriptions"
            if len(listed) > _MAX_TIP_SUBSCRIPTIONS:
                subscriptions += f"\n… and {len(listed) - _MAX_TIP_SUBSCRIPTIONS} more"
            parts = (row.client, row.transport, row.protocol_version)
            about = " · ".join(shown_text(part, limit=120) for part in parts)
            session = f"Session {shown_text(row.id, limit=120)}\n{about}"
            if column == self.COLUMN_SUBSCRIPTIONS:
                count = f"{len(listed)} subscription{'s' if len(listed) != 1 else ''}"
                return f"{count}:\n{subscriptions}\n{session}"
            if column == 0:
                return f"{shown_text(row.client)}\n{session}\n{subscriptions}"
            return f"{session}\n{subscriptions}"
        elif role == self.SessionIdRole:
            return row.id
        return None


class SessionsView(QTableView):
    """The sessions table (`sessionsView`); one session can be selected for per-session sends.

    Signals:
        session_selected(str session_id): the selected session changed ("" when none is selected).
    """

    session_selected = Signal(str)

    def __init__(self, model: SessionsModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sessionsView")
        self.setModel(model)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(22)
        header = self.horizontalHeader()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        connected = self.fontMetrics().horizontalAdvance("00:00:00 (59 min ago)") + 12
        for column, width in enumerate((110, 80, 62, connected)):
            self.setColumnWidth(column, width)
        self.setToolTip("Connected clients; select one to send it an update on its own")
        self.selectionModel().selectionChanged.connect(self._on_selection_changed)
        model.rowsInserted.connect(self._on_rows_inserted)
        model.modelReset.connect(self._on_model_reset)

    def _fit_client_column(self, first: int, last: int) -> None:
        """Widen the client column to the names of rows first..last (up to CLIENT_COLUMN_CHARS), never narrow it:
        measured per new row, so thousands of sessions cost nothing more per arrival."""
        model, metrics = self.model(), self.fontMetrics()
        names = (str(model.index(row, 0).data() or "") for row in range(first, last + 1))
        widest = max((metrics.horizontalAdvance(name) for name in names), default=0)
        wanted = min(widest, metrics.averageCharWidth() * CLIENT_COLUMN_CHARS) + 14
        if wanted > self.columnWidth(0):
            self.setColumnWidth(0, wanted)

    @Slot(QModelIndex, int, int)
    def _on_rows_inserted(self, _parent: QModelIndex, first: int, last: int) -> None:
        self._fit_client_column(first, last)

    @Slot()
    def _on_model_reset(self) -> None:
        rows = self.model().rowCount()
        if rows:
            self._fit_client_column(0, min(rows, 200) - 1)  # a reset (set_sessions) measures the first rows

    def selected_session_id(self) -> str:
        rows = self.selectionModel().selectedRows()
        return str(rows[0].data(SessionsModel.SessionIdRole)) if rows else ""

    @Slot(QItemSelection, QItemSelection)
    def _on_selection_changed(self, selected: QItemSelection, deselected: QItemSelection) -> None:
        self.session_selected.emit(self.selected_session_id())
