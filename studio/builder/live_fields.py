"""The resource form's collapsible "Live data" group: `watch.files` and `watch.interval`, checked by the model."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from resources_qt.project import ResourceSpec
from resources_qt.project.model import WATCH_INTERVAL_MAX, WATCH_INTERVAL_MIN, WatchSpec

__all__ = ["LiveDataFields", "interval_text"]


def interval_text(interval: float | None) -> str:
    """An interval as the field shows it: whole seconds without ".0", otherwise every digit (never rounded)."""
    if interval is None:
        return ""
    return str(int(interval)) if float(interval).is_integer() else repr(float(interval))


class LiveDataFields(QObject):
    """What tells subscribers the content changed: watched file patterns and a polling interval.

    `box` is the group the form lays out: a header that folds the fields away
    (with a one-line summary, so a folded group still says what is watched)
    and the fields. `apply(spec)` writes what the fields say into a spec and
    returns what it could not take as (field, message) pairs, in the words of
    the project loader (`WatchSpec.problem`, the one copy of the rules); the
    refused text stays typed and the spec keeps its previous `watch`, so an
    unloadable value never reaches the document or the file.

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
        interval_label = QLabel("Inter&val", self.body)
        interval_label.setBuddy(self.interval_edit)
        fields.addRow(interval_label, interval_row)

        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        header.addWidget(self.toggle)
        header.addWidget(self.summary, 1)
        layout = QVBoxLayout(self.box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(header)
        layout.addWidget(self.body)
        self.body.hide()

        self.toggle.toggled.connect(self.set_expanded)
        self.files_edit.textChanged.connect(self._on_text_edited)
        self.interval_edit.textEdited.connect(self._on_text_edited)
        self.interval_edit.editingFinished.connect(self._on_editing_finished)

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

    def markable(self) -> dict[str, QWidget]:
        """The widgets by the field names problems carry."""
        return {"watch.files": self.files_edit, "watch.interval": self.interval_edit, "watch": self.files_edit}

    def texts(self) -> tuple[str, str]:
        """What is typed now (files, interval): kept by the form when it cannot be taken yet."""
        return self.files_edit.toPlainText(), self.interval_edit.text()

    def load(self, spec: ResourceSpec) -> None:
        watch = spec.watch or WatchSpec()
        self.set_texts("\n".join(watch.files), interval_text(watch.interval))

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
        before = spec.watch or WatchSpec()
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
        watch = WatchSpec(files=files, interval=interval)
        spec.watch = None if watch.is_empty else watch
        return problems

    # -- internals -------------------------------------------------------------

    def _update_summary(self) -> None:
        files = [line.strip() for line in self.files_edit.toPlainText().splitlines() if line.strip()]
        interval = self.interval_edit.text().strip()
        parts = []
        if files:
            parts.append(files[0] if len(files) == 1 else f"{len(files)} patterns")
        if interval:
            parts.append(f"every {interval} s")
        text = ", ".join(parts) if parts else "not watched"
        self.summary.setText(text)
        self.summary.setToolTip("\n".join(files + ([f"every {interval} s"] if interval else [])) or text)

    @Slot()
    def _on_text_edited(self) -> None:
        self._update_summary()
        if not self._loading:
            self.edited.emit()

    @Slot()
    def _on_editing_finished(self) -> None:
        if not self._loading:
            self.editing_finished.emit()
