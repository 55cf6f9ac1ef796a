"""The project settings view: every `[server]` key editable, undoable, validated by the model, restart-aware."""

from __future__ import annotations

import logging
from dataclasses import replace

from PySide6.QtCore import QEvent, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from resources_qt.project import ServerSettings
from studio.document.document import ProjectDocument
from studio.look.marks import banner_style, invalid_style, note_style
from studio.settings_page.auth_group import AuthSettingsGroup
from studio.settings_page.settings_fields import LIVE_KEYS, SettingField, available_specs, settings_problem

logger = logging.getLogger(__name__)

__all__ = ["COMMIT_DEBOUNCE_MS", "ProjectSettingsView"]

COMMIT_DEBOUNCE_MS = 400
_RESTART_NOTE = "⟳ restart to apply"
_COLUMN_CHARS = 72
"""The narrowest a column of settings groups is, in average characters: as many columns as fit (at most
`_MAX_COLUMNS`) share the page's width, so a wide window is used rather than left empty beside one column."""
_MAX_COLUMNS = 3


class ProjectSettingsView(QWidget):
    """Edits the project's `[server]` table through the document (each change one undo step).

    A value the model refuses stays typed in its field, framed, with the model's
    message (naming the key) in the view's error line, and is not written to the
    document. While the server runs, keys that only apply at start and differ
    from what the server started with are marked, and "Restart server" asks for
    a restart.

    Signals:
        restart_requested(): the user asked to restart the running server.
    """

    restart_requested = Signal()

    def __init__(self, document: ProjectDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("projectSettings")
        self._document = document
        self._loading = False
        self._committing = False
        self._running = False
        self._started_with: ServerSettings | None = None
        self._shown = replace(document.project.server)
        self._errors: dict[str, str] = {}
        self._fields: dict[str, SettingField] = {}
        self._notes: dict[str, QLabel] = {}

        self.restart_banner = QWidget(self)
        self.restart_banner.setObjectName("restartBanner")
        self.restart_label = QLabel(self.restart_banner)
        self.restart_label.setObjectName("restartLabel")
        self.restart_label.setWordWrap(True)
        self.restart_button = QPushButton("Restart server", self.restart_banner)
        self.restart_button.setObjectName("restartServerButton")
        self.restart_button.setToolTip("Stop the server and start it again with these settings")
        banner_row = QHBoxLayout(self.restart_banner)
        banner_row.setContentsMargins(0, 0, 0, 0)
        banner_row.addWidget(self.restart_label, 1)
        banner_row.addWidget(self.restart_button)
        self.restart_banner.hide()

        self.error_label = QLabel(self)
        self.error_label.setObjectName("settingsError")
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Its room is kept while empty, so an error appearing never moves the fields being typed into.
        policy = self.error_label.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.error_label.setSizePolicy(policy)
        self.error_label.setMinimumHeight(self.fontMetrics().lineSpacing() * 2 + 10)
        self.error_label.setVisible(False)

        content = QWidget(self)
        content_layout = QHBoxLayout(content)
        content_layout.setContentsMargins(8, 4, 8, 8)
        self._columns = content_layout
        self._boxes: list[QGroupBox] = []
        forms: dict[str, QFormLayout] = {}
        labels: list[QLabel] = []
        for spec in available_specs():
            form = forms.get(spec.section)
            if form is None:
                box = QGroupBox(spec.section, content)
                box.setObjectName(f"settings{spec.section.replace(' ', '')}Box")
                form = QFormLayout(box)
                form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
                form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                forms[spec.section] = form
                self._boxes.append(box)
            field = SettingField(spec, content)
            self._fields[spec.key] = field
            note = QLabel(_RESTART_NOTE, content)
            note.setObjectName(f"restartNote_{spec.key}")
            note.setToolTip("The running server keeps the old value until it is restarted")
            note_policy = note.sizePolicy()
            note_policy.setRetainSizeWhenHidden(True)
            note.setSizePolicy(note_policy)
            note.hide()
            self._notes[spec.key] = note
            row = QHBoxLayout()
            row.setContentsMargins(0, 0, 0, 0)
            row.addWidget(field.widget, 1)
            row.addWidget(note)
            # A check box carries its own text; its empty label keeps it in the fields' column.
            label = QLabel("" if isinstance(field.widget, QCheckBox) else spec.label, content)
            if not isinstance(field.widget, QCheckBox):
                label.setBuddy(field.widget)
            labels.append(label)
            form.addRow(label, row)
        # `[server.auth]`: a group of its own (studio/settings_page/auth_group.py).
        self.auth = AuthSettingsGroup(document, content)
        self._boxes.append(self.auth)  # laid out in the columns with the other groups
        labels.extend(self.auth.labels)
        # One label column for every group, so the fields line up down the page.
        label_width = max((label.sizeHint().width() for label in labels), default=0)
        for label in labels:
            label.setMinimumWidth(label_width)
            label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self._column_count = 0
        self._reflow(1)
        scroll = QScrollArea(self)
        scroll.setObjectName("projectSettingsArea")
        scroll.setAccessibleName("Project settings")
        scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Tab goes on to the fields, the area follows them
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(content)
        scroll.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        scroll.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addWidget(self.restart_banner)
        layout.addWidget(self.error_label)
        layout.addWidget(scroll, 1)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(COMMIT_DEBOUNCE_MS)
        self._timer.timeout.connect(self.commit)
        self._connect_fields()
        self.restart_button.clicked.connect(self._on_restart_clicked)
        document.settings_changed.connect(self._on_settings_changed)
        document.project_reset.connect(self._on_project_reset)
        self._apply_styles()
        self._load(document.project.server, everything=True)

    # -- public API ----------------------------------------------------------

    def field(self, key: str) -> QWidget:
        """The widget editing `[server] key` (`auth.issuer`: a `[server.auth]` key; KeyError for a key the model
        does not have)."""
        if key.startswith("auth."):
            return self.auth.field(key.removeprefix("auth."))
        return self._fields[key].widget

    @property
    def errors(self) -> dict[str, str]:
        """Refused values by key: the model's message for each ({} when everything typed was taken)."""
        return dict(self._errors)

    def pending_restart(self) -> list[str]:
        """Keys changed since the running server started that it only takes at start."""
        started = self._started_with
        if not self._running or started is None:
            return []
        current = self._document.project.server
        return [
            key for key in (*self._fields, "auth")
            if key not in LIVE_KEYS and getattr(current, key) != getattr(started, key)
        ]  # fmt: skip

    def set_server_running(self, running: bool) -> None:
        """Whether the server runs: while it does, changes that need a restart are marked and offered one."""
        if running and not self._running:
            # What it started with: a later change to a start-only key needs a restart.
            self._started_with = replace(self._document.project.server)
        if not running:
            self._started_with = None
        self._running = running
        self._update_restart()

    def commit(self) -> None:
        """Write every acceptable typed value to the document now (typing also does, after a pause)."""
        self._timer.stop()
        if self._loading:
            return
        current = self._document.project.server
        candidate = replace(current)
        errors: dict[str, str] = {}
        for key, field in self._fields.items():
            try:
                value = field.value()
            except ValueError as exc:
                errors[key] = str(exc)
                continue
            problem = settings_problem(replace(current, **{key: value}))
            if problem is not None and problem[0] == key:
                errors[key] = problem[1]
                continue
            setattr(candidate, key, value)
        problem = settings_problem(candidate)
        # A value the file already held that is refused (a hand-edited file) does not block other edits.
        blocking = problem is not None and getattr(candidate, problem[0], None) != getattr(current, problem[0], None)
        if problem is not None and blocking:
            errors.setdefault(problem[0], problem[1])
        elif candidate != current:
            self._committing = True
            try:
                self._document.set_server_settings(candidate)
            finally:
                self._committing = False
            self._shown = replace(self._document.project.server)
        self._show_errors(errors)
        self._update_restart()

    # -- internals -----------------------------------------------------------

    def _connect_fields(self) -> None:
        for field in self._fields.values():
            widget = field.widget
            if isinstance(widget, QCheckBox):
                widget.toggled.connect(self._on_toggled)
            elif isinstance(widget, QComboBox):
                widget.currentTextChanged.connect(self._on_choice_changed)
            elif isinstance(widget, QPlainTextEdit):
                widget.textChanged.connect(self._on_edited)
            elif isinstance(widget, QLineEdit):
                widget.textEdited.connect(self._on_edited)
                widget.editingFinished.connect(self._on_editing_finished)

    def _load(self, settings: ServerSettings, *, everything: bool) -> None:
        """Show `settings`; without `everything`, only keys whose value changed (a refused draft stays typed)."""
        self._loading = True
        try:
            for key, field in self._fields.items():
                value = getattr(settings, key)
                if everything or value != getattr(self._shown, key):
                    field.show(value)
                    self._errors.pop(key, None)
        finally:
            self._loading = False
        self._shown = replace(settings)
        errors = dict(self._errors) if not everything else {}
        # A hand-edited file may hold a value the model refuses: mark it (it is kept as written).
        problem = settings_problem(settings)
        if problem is not None and problem[0] in self._fields:
            errors.setdefault(problem[0], problem[1])
        self._show_errors(errors)

    def _show_errors(self, errors: dict[str, str]) -> None:
        self._errors = errors
        self.error_label.setText("\n".join(errors.values()))
        self.error_label.setVisible(bool(errors))
        style = invalid_style(self.palette())
        for key, field in self._fields.items():
            message = errors.get(key)
            field.widget.setStyleSheet(style if message else "")
            field.widget.setToolTip(message or field.default_tip)

    def _update_restart(self) -> None:
        pending = self.pending_restart()
        for key, note in self._notes.items():
            note.setVisible(key in pending)
        self.restart_banner.setVisible(self._running)
        self.restart_button.setEnabled(bool(pending))
        if pending:
            self.restart_label.setText("Restart the server to apply: " + ", ".join(pending))
        else:
            self.restart_label.setText(
                "The server is running: changes here apply at once (name, version and instructions to new sessions)"
            )

    def _apply_styles(self) -> None:
        palette = self.palette()
        self.error_label.setStyleSheet(banner_style(palette))
        for note in self._notes.values():
            note.setStyleSheet(note_style(palette, warning=True))
        self._show_errors(self._errors)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_styles()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        column = self.fontMetrics().averageCharWidth() * _COLUMN_CHARS
        self._reflow(max(1, min(_MAX_COLUMNS, self.width() // max(1, column))))

    @property
    def column_count(self) -> int:
        """How many columns the settings groups are laid out in (more in a wider window)."""
        return self._column_count

    def _reflow(self, count: int) -> None:
        """The groups in `count` columns of about equal height, in order: down the first, then the next."""
        if count == self._column_count:
            return
        self._column_count = count
        while (item := self._columns.takeAt(0)) is not None:
            inner = item.layout()
            if inner is not None:
                while inner.takeAt(0) is not None:
                    pass  # the boxes stay the content's children; only their places go
                inner.deleteLater()
        heights = [box.sizeHint().height() for box in self._boxes]
        target, filled, column = sum(heights) / count, 0.0, 0
        columns = [QVBoxLayout() for _ in range(count)]
        for box, height in zip(self._boxes, heights, strict=True):
            if column < count - 1 and filled and filled + height / 2 > target * (column + 1):
                column += 1
            columns[column].addWidget(box)
            filled += height
        for layout in columns:
            layout.addStretch(1)
            self._columns.addLayout(layout, 1)

    # -- slots ---------------------------------------------------------------

    @Slot()
    def _on_edited(self) -> None:
        if not self._loading:
            self._timer.start()

    @Slot(bool)
    def _on_toggled(self, _checked: bool) -> None:
        if not self._loading:
            self.commit()

    @Slot(str)
    def _on_choice_changed(self, _text: str) -> None:
        if not self._loading:
            self.commit()

    @Slot()
    def _on_editing_finished(self) -> None:
        if not self._loading and self._timer.isActive():
            self.commit()

    @Slot()
    def _on_restart_clicked(self) -> None:
        self.commit()
        self.restart_requested.emit()

    @Slot()
    def _on_settings_changed(self) -> None:
        if not self._committing:
            # Undo/redo or another view (the server panel's switches): show the document's values.
            self._timer.stop()
            self._load(self._document.project.server, everything=False)
        if self._document.project.server.auth != self.auth.shown:
            self.auth.load(self._document.project.server.auth)
        self._update_restart()

    @Slot()
    def _on_project_reset(self) -> None:
        self._timer.stop()
        self._load(self._document.project.server, everything=True)
        self.auth.load(self._document.project.server.auth)
        if self._running:
            self._started_with = replace(self._document.project.server)
        self._update_restart()
