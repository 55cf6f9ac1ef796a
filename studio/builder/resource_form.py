"""The builder form of one resource: declaration fields, validated inline with the builder's own messages."""

from __future__ import annotations

import logging
from dataclasses import replace

from PySide6.QtCore import QEvent, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from resources_qt.errors import ValidationError
from resources_qt.project import ResourceSpec
from resources_qt.resource import Annotations, Audience
from resources_qt.templates import CompiledTemplate, compile_template
from studio.builder.field_marks import FieldMarks
from studio.builder.icons_table import IconsTable
from studio.builder.live_fields import LiveDataFields
from studio.builder.resource_details import ResourceDetails
from studio.builder.tab_order import follow_layout
from studio.builder.template_completions import CompletionsBox
from studio.document.document import Problem, ProjectDocument, default_sample
from studio.look.marks import banner_style, invalid_style, note_style

logger = logging.getLogger(__name__)

__all__ = ["COMMON_MIME_TYPES", "ResourceForm"]

COMMIT_DEBOUNCE_MS = 400

COMMON_MIME_TYPES = (
    "text/plain", "text/markdown", "application/json", "text/csv", "text/html", "application/xml",
    "application/yaml", "text/x-python", "image/png", "image/jpeg", "image/svg+xml", "image/gif",
    "application/pdf", "application/octet-stream",
)  # fmt: skip

_NO_PRIORITY = -0.1
_BANNER_LINES = 2
"""Lines of room the error banner always keeps, so an error appearing never moves the fields."""


class ResourceForm(QWidget):
    """Edits the declaration of one resource of the document.

    Every edit is committed to the document (debounced, so typing makes one
    undo step) even when invalid, so nothing is lost; the builder's message
    is shown under the fields and the offending field is framed red. Only a
    rename to an empty or taken name is held back: the old name stays in the
    document and the typed one stays in the field, and comes back with its
    error when the resource is shown again after another one.

    Signals:
        errors_changed(list messages): `list[str]`, the messages of the form's current problems ([] when
            valid).
    """

    errors_changed = Signal(list)

    def __init__(self, document: ProjectDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resourceForm")
        self._document = document
        self._name = ""
        self._loading = False
        self._committing = False
        self._edited = False
        self._errors: list[Problem] = []
        self._detail_problems: list[Problem] = []
        self._template: CompiledTemplate | None = None  # the last valid template typed or loaded
        # resource name -> a rename the document refused (empty or taken): nothing typed is lost
        self._drafts: dict[str, str] = {}
        # resource name -> live data fields (files, interval) typed but refused: kept the same way
        self._live_drafts: dict[str, tuple[str, str]] = {}

        self.name_edit = QLineEdit(self)
        self.name_edit.setObjectName("nameEdit")
        self.name_edit.setPlaceholderText("unique name, e.g. release_notes")
        self.title_edit = QLineEdit(self)
        self.title_edit.setObjectName("titleEdit")
        self.title_edit.setPlaceholderText("optional human-readable title")
        self.description_edit = QPlainTextEdit(self)
        self.description_edit.setObjectName("descriptionEdit")
        self.description_edit.setPlaceholderText(
            "optional: what the resource holds, for the model and the user"
        )
        self.description_edit.setTabChangesFocus(True)
        self.description_edit.setFixedHeight(self.fontMetrics().lineSpacing() * 3 + 12)

        self.direct_radio = QRadioButton("Direct URI", self)
        self.direct_radio.setObjectName("directRadio")
        self.template_radio = QRadioButton("URI template", self)
        self.template_radio.setObjectName("templateRadio")
        self._kind_group = QButtonGroup(self)
        self._kind_group.addButton(self.direct_radio)
        self._kind_group.addButton(self.template_radio)
        self.direct_radio.setChecked(True)
        self.uri_edit = QLineEdit(self)
        self.uri_edit.setObjectName("uriEdit")

        self.mime_edit = QComboBox(self)
        self.mime_edit.setObjectName("mimeEdit")
        self.mime_edit.setEditable(True)
        self.mime_edit.addItems(COMMON_MIME_TYPES)
        self.mime_edit.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.mime_edit.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.mime_edit.setMinimumContentsLength(12)

        self.icons_table = IconsTable(self)

        self.audience_user = QCheckBox("user", self)
        self.audience_user.setObjectName("audienceUser")
        self.audience_assistant = QCheckBox("assistant", self)
        self.audience_assistant.setObjectName("audienceAssistant")
        self.priority_spin = QDoubleSpinBox(self)
        self.priority_spin.setObjectName("prioritySpin")
        self.priority_spin.setRange(_NO_PRIORITY, 1.0)
        self.priority_spin.setSingleStep(0.1)
        self.priority_spin.setDecimals(2)
        self.priority_spin.setSpecialValueText("not set")
        self.priority_spin.setToolTip("0 = least important, 1 = most important")
        self.priority_spin.setMaximumWidth(110)

        self.samples_edit = QPlainTextEdit(self)
        self.samples_edit.setObjectName("samplesEdit")
        self.samples_edit.setPlaceholderText("one URI per line, for the preview")
        self.samples_edit.setTabChangesFocus(True)
        self.samples_edit.setFixedHeight(self.fontMetrics().lineSpacing() * 4 + 12)

        self.samples_warning = QLabel(self)
        self.samples_warning.setObjectName("samplesWarning")
        self.samples_warning.setWordWrap(True)
        self.samples_warning.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.samples_warning.hide()

        self.completions_box = CompletionsBox(self)

        self.error_label = QLabel(self)
        self.error_label.setObjectName("formError")
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        # The banner's room is kept (hidden, not removed) and fixed, so the fields under the
        # pointer stay put when an error comes or goes; the full text is in its tooltip.
        policy = self.error_label.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.error_label.setSizePolicy(policy)
        self.error_label.setFixedHeight(self.fontMetrics().lineSpacing() * _BANNER_LINES + 12)
        self.error_label.hide()

        self.details = ResourceDetails(self)
        self.live = LiveDataFields(self)

        self._build_layout()
        follow_layout(self)
        # By the field names problems carry; each widget's place here is its place in `marked_fields`.
        self._marks = FieldMarks({
            "name": self.name_edit, "title": self.title_edit, "description": self.description_edit,
            "uri": self.uri_edit, "uri_template": self.uri_edit, "mime_type": self.mime_edit,
            "samples": self.samples_edit, "icons": self.icons_table.table,
            "annotations.priority": self.priority_spin, "annotations.audience": self.priority_spin,
            "annotations": self.priority_spin, "completions": self.completions_box,
            **self.details.markable(), **self.live.markable(),
        }, by_message=(("icon", self.icons_table.table), ("annotation", self.priority_spin)))  # fmt: skip
        self._apply_styles()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(COMMIT_DEBOUNCE_MS)
        self._timer.timeout.connect(self.commit)
        self._connect_edits()
        document.resource_changed.connect(self._on_resource_changed)
        document.resource_removed.connect(self._on_resource_removed)
        document.project_reset.connect(self._on_project_reset)
        document.resource_added.connect(self._on_other_resource_changed)
        self.setEnabled(False)

    def _build_layout(self) -> None:
        kind_row = QHBoxLayout()
        kind_row.setContentsMargins(0, 0, 0, 0)
        kind_row.addWidget(self.direct_radio)
        kind_row.addWidget(self.template_radio)
        kind_row.addStretch(1)
        audience_row = QHBoxLayout()
        audience_row.setContentsMargins(0, 0, 0, 0)
        audience_row.addWidget(self.audience_user)
        audience_row.addWidget(self.audience_assistant)
        audience_row.addStretch(1)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        # In a narrow builder a row too wide for its field column puts its label above it, so nothing
        # is cut off or scrolled away sideways.
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.addRow("&Name", self.name_edit)
        form.addRow("&Title", self.title_edit)
        form.addRow("&Description", self.description_edit)
        form.addRow("Kind", kind_row)
        self._address_label = QLabel("&URI", self)
        self._address_label.setBuddy(self.uri_edit)
        form.addRow(self._address_label, self.uri_edit)
        form.addRow("&MIME type", self.mime_edit)
        form.addRow("Audience", audience_row)
        form.addRow("&Priority", self.priority_spin)
        for text, field, buddy in self.details.rows():
            label = QLabel(text, self)
            label.setBuddy(buddy)  # makes the & a shortcut rather than a character, also for a row of widgets
            form.addRow(label, field)
        form.addRow("Icons", self.icons_table)
        form.addRow("&Samples", self.samples_edit)
        form.addRow("", self.samples_warning)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.setSpacing(8)
        layout.addWidget(self.error_label)
        layout.addLayout(form)
        layout.addWidget(self.completions_box)
        layout.addWidget(self.live.box)
        layout.addStretch(1)

    def _connect_edits(self) -> None:
        for edit in (self.name_edit, self.title_edit, self.uri_edit):
            edit.textEdited.connect(self._on_edited)
            edit.editingFinished.connect(self._on_editing_finished)
        self.uri_edit.textEdited.connect(self._on_address_edited)
        self.description_edit.textChanged.connect(self._on_edited)
        self.samples_edit.textChanged.connect(self._on_edited)
        self.samples_edit.textChanged.connect(self._update_samples_warning)
        self.mime_edit.editTextChanged.connect(self._on_edited)
        self.mime_edit.activated.connect(self._on_changed_now)
        self.direct_radio.toggled.connect(self._on_kind_toggled)
        self.audience_user.toggled.connect(self._on_changed_now)
        self.audience_assistant.toggled.connect(self._on_changed_now)
        self.priority_spin.valueChanged.connect(self._on_edited)
        self.icons_table.icons_edited.connect(self._on_changed_now)
        self.details.edited.connect(self._on_edited)
        self.details.changed.connect(self._on_changed_now)
        self.details.editing_finished.connect(self._on_editing_finished)
        self.completions_box.edited.connect(self._on_edited)
        self.completions_box.editing_finished.connect(self._on_editing_finished)
        self.completions_box.rows_rebuilt.connect(self._on_completion_rows_rebuilt)
        self.live.edited.connect(self._on_edited)
        self.live.editing_finished.connect(self._on_editing_finished)

    # -- public API ----------------------------------------------------------

    @property
    def resource_name(self) -> str:
        return self._name

    @property
    def errors(self) -> list[str]:
        """The problems shown on the form ([] when the declaration is valid)."""
        return [problem.message for problem in self._errors]

    def marked_fields(self) -> list[QWidget]:
        """The fields framed as invalid now."""
        return self._marks.marked()

    def set_resource(self, name: str) -> None:
        """Show the named resource ("" or an unknown name clears and disables the form)."""
        self.commit()
        self._keep_draft()
        spec = self._document.peek(name) if name else None
        self._name = name if spec is not None else ""
        self.setEnabled(spec is not None)
        base_dir = self._document.path.parent if self._document.path else None
        self.icons_table.set_base_dir(str(base_dir) if base_dir else "")
        self._load(spec or ResourceSpec())
        live_draft = self._live_drafts.get(self._name) if spec is not None else None
        if live_draft is not None:
            # Live data fields the user typed but that could not be taken come back too, with their errors.
            self.live.set_texts(*live_draft)
        draft = self._drafts.get(self._name)
        if spec is not None and draft is not None:
            # The name the user typed but the document refused comes back, with its error.
            self._loading = True
            try:
                self.name_edit.setText(draft)
            finally:
                self._loading = False
            name_error = self.candidate()[1]
            if name_error is None:  # the name became free meanwhile: the draft is an edit like any other
                self._on_edited()
            self._show_errors(self._current_errors(name_error))
            return
        if live_draft is not None:
            self._show_errors(self._current_errors(self.candidate()[1]))
            return
        self._show_errors(self._document.form_problems(self._name) if spec is not None else [])

    def draft_name(self, name: str) -> str | None:
        """The rejected name typed for resource `name` and kept while another resource is shown."""
        return self._drafts.get(name)

    def _keep_draft(self) -> None:
        if not self._name or self._document.peek(self._name) is None:
            return
        name_error = self.candidate()[1]
        if name_error is not None:
            self._drafts[self._name] = self.name_edit.text()
        else:
            self._drafts.pop(self._name, None)
        if any(problem.field and problem.field.startswith("watch") for problem in self._detail_problems):
            self._live_drafts[self._name] = self.live.texts()
        else:
            self._live_drafts.pop(self._name, None)

    def commit(self) -> None:
        """Write the user's edits to the document now (also happens shortly after each edit).

        Without an edit since the fields were loaded nothing is written, so
        looking at a resource never changes it (the fields normalise, e.g. trim).
        """
        self._timer.stop()
        if self._loading or not self._edited or not self._name or self._document.peek(self._name) is None:
            return
        self._edited = False
        candidate, name_error = self.candidate()
        self._committing = True
        try:
            self._document.update_resource(self._name, candidate)
            self._name = candidate.name
        finally:
            self._committing = False
        self._show_errors(self._current_errors(name_error))

    def candidate(self) -> tuple[ResourceSpec, str | None]:
        """The spec the fields describe, and why the typed name was not taken (or None)."""
        base = self._document.spec(self._name) or ResourceSpec()
        name = self.name_edit.text().strip()
        name_error = None
        if not name:
            name_error = "Resource name must not be empty"
        elif name != self._name and self._document.peek(name) is not None:
            name_error = f"Another resource is already named {name!r}"
        address = self.uri_edit.text().strip()
        template = self.template_radio.isChecked()
        spec = replace(
            base,
            name=self._name if name_error else name,
            title=self.title_edit.text().strip(),
            description=self.description_edit.toPlainText().strip(),
            uri="" if template else address,
            uri_template=address if template else "",
            mime_type=self.mime_edit.currentText().strip(),
            samples=[line.strip() for line in self.samples_edit.toPlainText().splitlines() if line.strip()],
            completions=self.completions_box.values() if template else {},
        )
        icon_problems: list[Problem] = []
        try:
            spec.icons = self.icons_table.icons()
        except ValidationError as exc:
            # The row stays as typed in the table; the document keeps the last icons that were valid.
            spec.icons = list(base.icons)
            icon_problems.append(Problem(exc.message, "icons"))
        roles: tuple[tuple[Audience, QCheckBox], ...] = (
            ("user", self.audience_user), ("assistant", self.audience_assistant),
        )  # fmt: skip
        audience = tuple(role for role, box in roles if box.isChecked())
        priority = (
            None
            if self.priority_spin.value() <= _NO_PRIORITY + 1e-9
            else round(self.priority_spin.value(), 2)
        )
        last_modified = base.annotations.last_modified if base.annotations else None
        annotations = Annotations(audience, priority, last_modified)
        spec.annotations = None if annotations.is_empty else annotations
        # Size, last modified and cache hint: a value that does not parse keeps the stored one.
        details = self.details.apply(spec, template=template) + self.live.apply(spec)
        self._detail_problems = icon_problems + [Problem(message, key) for key, message in details]
        return spec, name_error

    # -- loading -------------------------------------------------------------

    def _load(self, spec: ResourceSpec) -> None:
        self._edited = False
        self._detail_problems = []
        self._loading = True
        try:
            self.name_edit.setText(spec.name)
            self.title_edit.setText(spec.title)
            self._set_plain(self.description_edit, spec.description)
            # A spec holding both kinds (from a hand-edited file) shows the template; the error says why.
            self.template_radio.setChecked(spec.is_template)
            self.direct_radio.setChecked(not spec.is_template)
            self.uri_edit.setText(spec.uri_template or spec.uri)
            self.mime_edit.setCurrentText(spec.mime_type)
            self.icons_table.set_icons(spec.icons)
            ann = spec.annotations
            self.audience_user.setChecked(bool(ann and "user" in ann.audience))
            self.audience_assistant.setChecked(bool(ann and "assistant" in ann.audience))
            priority = ann.priority if ann and ann.priority is not None else _NO_PRIORITY
            self.priority_spin.setValue(priority)
            self._set_plain(self.samples_edit, "\n".join(spec.samples))
            self.completions_box.rebuild(self._variables() or [], spec.completions)
            self.details.load(spec)
            self.live.load(spec)
            self._update_address_label()
            self._template = self._compiled()
        finally:
            self._loading = False
        self._update_samples_warning()

    @staticmethod
    def _set_plain(edit: QPlainTextEdit, text: str) -> None:
        if edit.toPlainText() != text:
            edit.setPlainText(text)

    def _update_address_label(self) -> None:
        template = self.template_radio.isChecked()
        self._address_label.setText("&URI template" if template else "&URI")
        self.uri_edit.setPlaceholderText("e.g. notes://{folder}/{id}" if template else "e.g. docs://readme")
        self.completions_box.setVisible(template)
        self.details.set_template(template)

    def _compiled(self) -> CompiledTemplate | None:
        """The address field's template, None when it is not a template or not a valid one."""
        if not self.template_radio.isChecked():
            return None
        try:
            return compile_template(self.uri_edit.text().strip())
        except ValidationError:
            return None

    def _variables(self) -> list[str] | None:
        try:
            return list(compile_template(self.uri_edit.text().strip()).variable_names)
        except ValidationError:
            return None

    def _samples(self) -> list[str]:
        return [line.strip() for line in self.samples_edit.toPlainText().splitlines() if line.strip()]

    @staticmethod
    def _default_sample(template: CompiledTemplate) -> str:
        """The sample a new template starts with (as the document's starter: `{city}` gives `city-1`)."""
        return default_sample(template)

    def _follow_template(self) -> None:
        # A sample still equal to the old template's default follows the template the user types;
        # a sample the user wrote is theirs and stays.
        new = self._compiled()
        if new is None:
            return
        old, self._template = self._template, new
        if old is not None and self._samples() == [self._default_sample(old)]:
            default = self._default_sample(new)
            if default != self._samples()[0]:
                self.samples_edit.setPlainText(default)

    @Slot()
    def _on_completion_rows_rebuilt(self) -> None:
        follow_layout(self)

    @Slot()
    def _update_samples_warning(self) -> None:
        template = self._compiled()
        stray = [uri for uri in self._samples() if template.match(uri) is None] if template else []
        if stray:
            listed = ", ".join(stray[:5]) + (f" and {len(stray) - 5} more" if len(stray) > 5 else "")
            noun = "sample does" if len(stray) == 1 else "samples do"
            self.samples_warning.setText(f"⚠ {len(stray)} {noun} not match the template: {listed}")
        self.samples_warning.setVisible(bool(stray))

    def _follow_variables(self) -> None:
        variables = self._variables()
        if variables is not None:
            self.completions_box.follow(variables)

    # -- errors --------------------------------------------------------------

    def _current_errors(self, name_error: str | None) -> list[Problem]:
        own = [Problem(name_error, "name")] if name_error else []
        return own + self._detail_problems + self._document.form_problems(self._name)

    def _show_errors(self, errors: list[Problem]) -> None:
        self._errors = errors
        messages = [problem.message for problem in errors]
        shown = messages[:_BANNER_LINES]
        if len(messages) > _BANNER_LINES:
            shown[-1] += f" (and {len(messages) - _BANNER_LINES + 1} more: see the tooltip)"
        self.error_label.setText("\n".join(shown))
        self.error_label.setToolTip("\n".join(messages))
        self.error_label.setVisible(bool(errors))
        if any(problem.field and problem.field.startswith("watch") for problem in errors):
            self.live.set_expanded(True)  # a refused value is never folded out of sight
        self._marks.show(errors, style=invalid_style(self.palette()))
        self.errors_changed.emit(messages)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_styles()

    def _apply_styles(self) -> None:
        palette = self.palette()
        self.error_label.setStyleSheet(banner_style(palette))
        self.samples_warning.setStyleSheet(note_style(palette, warning=True))
        self.live.summary.setStyleSheet(note_style(palette))
        if self._errors:
            self._show_errors(self._errors)

    # -- slots ---------------------------------------------------------------

    @Slot()
    def _on_edited(self) -> None:
        if not self._loading:
            self._edited = True
            self._timer.start()

    @Slot()
    def _on_changed_now(self) -> None:
        if not self._loading:
            self._edited = True
            self.commit()

    @Slot()
    def _on_editing_finished(self) -> None:
        if not self._loading:
            self.commit()

    @Slot(str)
    def _on_address_edited(self, _text: str) -> None:
        if self.template_radio.isChecked():
            self._follow_variables()
            self._follow_template()
        self._update_samples_warning()

    @Slot(bool)
    def _on_kind_toggled(self, _direct: bool) -> None:
        self._update_address_label()
        if self._loading:
            return
        self._update_samples_warning()
        self._follow_variables()
        self._on_changed_now()

    @Slot(str, str)
    def _on_resource_changed(self, old_name: str, new_name: str) -> None:
        if old_name != new_name and old_name in self._drafts:
            self._drafts[new_name] = self._drafts.pop(old_name)
        if old_name != new_name and old_name in self._live_drafts:
            self._live_drafts[new_name] = self._live_drafts.pop(old_name)
        if self._committing:
            return
        if old_name == self._name:
            self._name = new_name
            spec = self._document.peek(new_name)
            if spec is not None and self.candidate()[0] != spec:
                # Undo/redo or another view changed what the form shows: show the document's version.
                # (A snippet edit leaves the fields alone, with any rejected name still typed in.)
                self._timer.stop()
                self._load(spec)
        self._on_other_resource_changed(new_name)

    @Slot(str)
    def _on_other_resource_changed(self, _name: str) -> None:
        # Duplicate addresses involve two resources, so any edit may change this form's errors.
        known = self._name and self._document.peek(self._name) is not None
        if known and not self._committing and not self._timer.isActive():
            self._show_errors(self._current_errors(self.candidate()[1]))

    @Slot(str)
    def _on_resource_removed(self, name: str) -> None:
        self._drafts.pop(name, None)
        self._live_drafts.pop(name, None)
        if name == self._name:
            self._timer.stop()
            self.set_resource("")
        else:
            self._on_other_resource_changed(name)

    @Slot()
    def _on_project_reset(self) -> None:
        self._timer.stop()
        self._drafts.clear()
        self._live_drafts.clear()
        self._name = ""
        self.set_resource("")
