"""The resource form's collapsible "Live data" group: `watch.files` and `watch.interval`, checked by the model."""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from resources_qt.project import ResourceSpec
from resources_qt.project.model import WATCH_INTERVAL_MAX, WATCH_INTERVAL_MIN, WatchSpec
from studio.look.elided_label import ElidedLabel
from studio.look.marks import mark_colors

__all__ = ["LiveDataFields", "change_detail", "change_text", "interval_text"]

_SHOWN = 20


def interval_text(interval: float | None) -> str:
    """An interval as the field shows it: whole seconds without ".0", otherwise every digit (never rounded)."""
    if interval is None:
        return ""
    return str(int(interval)) if float(interval).is_integer() else repr(float(interval))


def change_text(when: float, uris: list[str], paths: list[str]) -> str:
    """The last change of watched data in a line: `changed 12:04:31: tickets/3.json (tickets://3 updated)`.

    What changed comes first: the files (project-relative), or "poll" for a polled read; then the URIs
    that were sent `updated`, when any was.
    """
    text = "changed " + time.strftime("%H:%M:%S", time.localtime(when)) + ": " + _first(paths, "poll")
    if uris:
        text += f" ({_first(uris, '')} updated)"
    return text


def _first(items: list[str], none: str) -> str:
    if not items:
        return none
    return items[0] + (f" +{len(items) - 1} more" if len(items) > 1 else "")


def change_detail(when: float, uris: list[str], paths: list[str]) -> str:
    """The change at length (the line's tooltip): every file and URI, up to 20 of each."""
    lines = ["Watched data last changed at " + time.strftime("%H:%M:%S", time.localtime(when))
             + (":" if paths else ", found by polling")]  # fmt: skip
    lines += [f"  {path}" for path in _shown(paths)]
    if uris:
        lines.append("resources/updated sent for:")
        lines += [f"  {uri}" for uri in _shown(uris)]
    else:
        lines.append("No subscribed URI's content changed: no resources/updated was sent.")
    return "\n".join(lines)


def _shown(items: list[str]) -> list[str]:
    return items[:_SHOWN] + ([f"… and {len(items) - _SHOWN} more"] if len(items) > _SHOWN else [])


class _ChangeLine(ElidedLabel):
    """The last change's line, cut with "…" to fit; its tooltip is always the whole line and the details.

    No signals.
    """

    def __init__(self, parent: QWidget) -> None:
        self._detail = ""
        super().__init__("", parent)

    def set_change(self, line: str, detail: str) -> None:
        self._detail = detail
        self.setText(line)

    def setText(self, text: str) -> None:
        super().setText(text)
        self._tip()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._tip()

    def _tip(self) -> None:
        # ElidedLabel tips only a cut text; this line's details (every file and URI) are worth a tip anyway.
        tip = "\n".join(part for part in (self.text(), self._detail) if part)
        if self.toolTip() != tip:
            self.setToolTip(tip)


class LiveDataFields(QObject):
    """What tells subscribers the content changed: watched file patterns and a polling interval.

    `box` is the group the form lays out: a header that folds the fields away
    (with a one-line summary of what is in effect, so a folded group still
    says what is watched, and never a refused value) and the fields.
    `apply(spec)` writes what the fields say into a spec and returns what it
    could not take as (field, message) pairs, in the words of the project
    loader (`WatchSpec.problem`, the one copy of the rules); the refused text
    stays typed, its message shows right under its field (scrolled into view
    while that field is being edited), and the spec keeps its previous
    `watch`, so an unloadable value never reaches the document or the file.
    `note_data_changed` (the controller's `data_changed`) shows when the
    shown resource's watched data last changed (`liveDataChanged`).

    Signals:
        edited(): text was typed (commit after a pause).
        editing_finished(): the interval field lost the focus or got Enter (the files box, a
            plain text edit, has no such moment: it commits after the pause like every edit).
    """

    edited = Signal()
    editing_finished = Signal()

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self._loading = False
        self.box = QWidget(parent)
        self.box.setObjectName("liveDataBox")
        self.toggle = QToolButton(self.box)
        self.toggle.setObjectName("liveDataToggle")
        self.toggle.setText("Live data")
        self.toggle.setCheckable(True)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.setToolTip("Watched files and polling: what makes the server send resources/updated")
        self.summary = QLabel(self.box)
        self.summary.setObjectName("liveDataSummary")
        self.summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        # Its own line under the header: the files and URIs of a change need more room than the header has.
        self.changed_label = _ChangeLine(self.box)
        self.changed_label.setObjectName("liveDataChanged")
        self.changed_label.hide()
        self._name = ""
        self._applied = WatchSpec()
        self._changes: dict[str, tuple[float, list[str], list[str]]] = {}

        self.body = QWidget(self.box)
        self.body.setObjectName("liveDataFields")
        self.files_edit = QPlainTextEdit(self.body)
        self.files_edit.setObjectName("watchFilesEdit")
        self.files_edit.setPlaceholderText("one glob per line, e.g. data/*.csv")
        self.files_edit.setToolTip(
            "watch.files: glob patterns relative to the project folder (*, ?, ** across folders, [abc]);\n"
            "a folder covers everything below it. A change sends resources/updated to its subscribers."
        )
        self.files_edit.setTabChangesFocus(True)
        self.files_edit.setFixedHeight(self.files_edit.fontMetrics().lineSpacing() * 3 + 12)
        self.interval_edit = QLineEdit(self.body)
        self.interval_edit.setObjectName("watchIntervalEdit")
        self.interval_edit.setPlaceholderText("none")
        self.interval_edit.setToolTip(
            f"watch.interval: seconds ({WATCH_INTERVAL_MIN:g} to {WATCH_INTERVAL_MAX:,.0f}) between re-reads of "
            "each subscribed URI;\nan update is sent when the content changed. Empty: no polling."
        )
        unit = QLabel("seconds", self.body)
        unit.setObjectName("watchIntervalUnit")
        interval_row = QHBoxLayout()
        interval_row.setContentsMargins(0, 0, 0, 0)
        interval_row.addWidget(self.interval_edit, 1)
        interval_row.addWidget(unit)

        fields = QFormLayout(self.body)
        fields.setContentsMargins(0, 0, 0, 0)
        fields.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        fields.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        fields.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        files_label = QLabel("&Files", self.body)
        files_label.setBuddy(self.files_edit)
        fields.addRow(files_label, self.files_edit)
        self.files_error = self._error_label("watchFilesError")
        fields.addRow("", self.files_error)
        interval_label = QLabel("Inter&val", self.body)
        interval_label.setBuddy(self.interval_edit)
        fields.addRow(interval_label, interval_row)
        self.interval_error = self._error_label("watchIntervalError")
        fields.addRow("", self.interval_error)

        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        header.addWidget(self.toggle)
        header.addWidget(self.summary, 1)
        layout = QVBoxLayout(self.box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(header)
        layout.addWidget(self.changed_label)
        layout.addWidget(self.body)
        self.body.hide()

        self.toggle.toggled.connect(self.set_expanded)
        self.files_edit.textChanged.connect(self._on_text_edited)
        self.interval_edit.textEdited.connect(self._on_text_edited)
        self.interval_edit.editingFinished.connect(self._on_editing_finished)
        self.box.installEventFilter(self)
        self._apply_style()

    # -- public API ----------------------------------------------------------

    @property
    def expanded(self) -> bool:
        return not self.body.isHidden()

    @Slot(bool)
    def set_expanded(self, on: bool) -> None:
        """Unfold (on) or fold the fields; the header and its summary always stay."""
        self.body.setVisible(on)
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
        if self.toggle.isChecked() != on:
            self.toggle.setChecked(on)

    @Slot(str, float, list, list)
    def note_data_changed(self, name: str, when: float, uris: list[str], paths: list[str]) -> None:
        """Resource `name`'s watched data changed at `when`: the files `paths` ([] for a poll), and `uris`
        were sent `updated`."""
        self._changes[name] = (when, list(uris), list(paths))
        if name == self._name:
            self._update_changed()

    def markable(self) -> dict[str, QWidget]:
        """The widgets by the field names problems carry."""
        return {"watch.files": self.files_edit, "watch.interval": self.interval_edit, "watch": self.files_edit}

    def texts(self) -> tuple[str, str]:
        """What is typed now (files, interval): kept by the form when it cannot be taken yet."""
        return self.files_edit.toPlainText(), self.interval_edit.text()

    def load(self, spec: ResourceSpec) -> None:
        watch = spec.watch or WatchSpec()
        self._name = spec.name
        self._applied = watch
        self._show_problems([], follow=False)
        self.set_texts("\n".join(watch.files), interval_text(watch.interval))
        self._update_changed()

    def set_texts(self, files: str, interval: str) -> None:
        self._loading = True
        try:
            if self.files_edit.toPlainText() != files:
                self.files_edit.setPlainText(files)
            self.interval_edit.setText(interval)
        finally:
            self._loading = False
        self._update_summary()

    def apply(self, spec: ResourceSpec) -> list[tuple[str, str]]:
        """Write the fields into `spec.watch` (in place); returns the (field, message) of values not taken."""
        watch, problems = self._parse(spec.watch or WatchSpec())
        spec.watch = None if watch.is_empty else watch
        self._name = spec.name
        self._applied = watch
        self._show_problems(problems, follow=True)
        self._update_summary()
        return problems

    # -- internals -------------------------------------------------------------

    def _parse(self, before: WatchSpec) -> tuple[WatchSpec, list[tuple[str, str]]]:
        """What the fields say, as a watch (a refused value keeps `before`'s), and the problems."""
        problems: list[tuple[str, str]] = []
        files = [line.strip() for line in self.files_edit.toPlainText().splitlines() if line.strip()]
        files_problem = WatchSpec(files=files).problem()
        if files_problem is not None:
            problems.append(("watch.files", files_problem[1]))
            files = list(before.files)
        interval: float | None = None
        typed = self.interval_edit.text().strip()
        if typed:
            try:
                interval = float(typed)
            except ValueError:
                problems.append(("watch.interval", f"watch.interval must be a number of seconds, not {typed!r}"))
                interval = before.interval
            else:
                interval_problem = WatchSpec(interval=interval).problem()
                if interval_problem is not None:
                    problems.append(("watch.interval", interval_problem[1]))
                    interval = before.interval
        return WatchSpec(files=files, interval=interval), problems

    def _update_summary(self) -> None:
        # What is in effect: a refused value is not (the spec keeps the previous one), so it is not shown.
        watch, problems = self._parse(self._applied)
        files, interval = watch.files, interval_text(watch.interval)
        parts = []
        if files:
            parts.append(files[0] if len(files) == 1 else f"{len(files)} patterns")
        if interval:
            parts.append(f"every {interval} s")
        text = ", ".join(parts) if parts else "not watched"
        if problems:
            refused = " and ".join(key.removeprefix("watch.") for key, _message in problems)
            text += f" ({refused} refused)"
        self.summary.setText(text)
        self.summary.setToolTip("\n".join([*files, *([f"every {interval} s"] if interval else [])]) or text)

    def _error_label(self, name: str) -> QLabel:
        label = QLabel(self.body)
        label.setObjectName(name)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.hide()
        return label

    def _show_problems(self, problems: list[tuple[str, str]], *, follow: bool) -> None:
        """Each message under its own field; with `follow`, the one of the field being edited scrolled into view."""
        by_field = {"watch.files": self.files_error, "watch.interval": self.interval_error}
        for key, label in by_field.items():
            messages = [message for field, message in problems if field == key]
            label.setText("\n".join(messages))
            label.setVisible(bool(messages))
        if not follow:
            return
        for key, edit in (("watch.files", self.files_edit), ("watch.interval", self.interval_edit)):
            if edit.hasFocus() and by_field[key].text():
                # Once laid out: the label's place is known only after this event.
                QTimer.singleShot(0, lambda label=by_field[key]: self._scroll_to(label))

    def _scroll_to(self, label: QLabel) -> None:
        widget = self.box.parentWidget()
        while widget is not None and not isinstance(widget, QScrollArea):
            widget = widget.parentWidget()
        if isinstance(widget, QScrollArea) and label.isVisible():
            widget.ensureWidgetVisible(label, 0, 8)

    def _update_changed(self) -> None:
        change = self._changes.get(self._name)
        if change is None:
            self.changed_label.clear()
            self.changed_label.hide()
            return
        when, uris, paths = change
        self.changed_label.set_change(change_text(when, uris, paths), change_detail(when, uris, paths))
        self.changed_label.show()

    def _apply_style(self) -> None:
        colors = mark_colors(self.box.palette())
        for label in (self.files_error, self.interval_error):
            label.setStyleSheet(f"QLabel {{ color: {colors.error.name()}; }}")

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.box and event.type() == QEvent.Type.PaletteChange:
            self._apply_style()
        return False

    @Slot()
    def _on_text_edited(self) -> None:
        self._update_summary()
        if not self._loading:
            self.edited.emit()

    @Slot()
    def _on_editing_finished(self) -> None:
        if not self._loading:
            self.editing_finished.emit()
