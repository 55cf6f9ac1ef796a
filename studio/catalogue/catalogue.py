"""The catalogue: direct resources and templates in two lists, a filter box, and add/duplicate/delete."""

from __future__ import annotations

import logging

from PySide6.QtCore import (
    QAbstractItemModel,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QRegularExpression,
    QSize,
    QSortFilterProxyModel,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtGui import QAction, QFont, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSplitter,
    QStyle,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from resources_qt.qt.protocol import StudioController
from studio.catalogue.catalogue_model import FILTER_ROLE, NAME_ROLE, CatalogueModel
from studio.document.document import ProjectDocument
from studio.look.icons import studio_icon

logger = logging.getLogger(__name__)

__all__ = ["FILTER_DEBOUNCE_MS", "CatalogueView"]

FILTER_DEBOUNCE_MS = 150


class _List(QTreeView):
    """A flat, two-column list tuned for many rows. No signals of its own."""

    def __init__(self, object_name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(object_name)
        self.setRootIsDecorated(False)
        self.setUniformRowHeights(True)
        self.setItemsExpandable(False)
        self.setAllColumnsShowFocus(True)
        self.setAlternatingRowColors(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setIconSize(QSize(16, 16))
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.header().setStretchLastSection(False)

    def setModel(self, model: QAbstractItemModel | None) -> None:
        super().setModel(model)
        header = self.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        # Just wide enough for the common types, so the name column (which stretches) gets the rest.
        header.resizeSection(1, self.fontMetrics().horizontalAdvance("application/json") + 14)


class CatalogueView(QWidget):
    """Both lists of the project's resources with a shared filter and the catalogue actions.

    Signals:
        resource_selected(str name): the user (or `select`) made a resource current; "" when none is.
    """

    resource_selected = Signal(str)

    def __init__(self, document: ProjectDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("catalogue")
        self._document = document
        self._current = ""
        self._document_changing = False
        # Connected before the models so that it runs first: row moves made by the models
        # while the document changes must not read as the user picking another resource.
        for signal in (document.resource_removed, document.project_reset, document.resource_changed):
            signal.connect(self._on_document_changing)

        self.filter_edit = QLineEdit(self)
        self.filter_edit.setObjectName("catalogueFilter")
        self.filter_edit.setPlaceholderText("Filter by name, address or MIME type")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setAccessibleName("Filter the catalogue")
        self.filter_edit.setAccessibleDescription("Shows only the resources whose name, address or MIME type "
                                                  "contains the text")  # fmt: skip
        self.filter_edit.addAction(
            studio_icon("filter", QStyle.StandardPixmap.SP_FileDialogContentsView),
            QLineEdit.ActionPosition.LeadingPosition,
        )

        self.resource_model = CatalogueModel(document, templates=False, parent=self)
        self.template_model = CatalogueModel(document, templates=True, parent=self)
        self.resource_proxy = self._proxy(self.resource_model)
        self.template_proxy = self._proxy(self.template_model)
        self.resource_list = _List("resourceList", self)
        self.resource_list.setModel(self.resource_proxy)
        self.resource_list.setAccessibleName("Resources")
        self.resource_list.setAccessibleDescription("The project's direct resources: name and MIME type; "
                                                    "the selected one is edited")  # fmt: skip
        self.template_list = _List("templateList", self)
        self.template_list.setModel(self.template_proxy)
        self.template_list.setAccessibleName("Templates")
        self.template_list.setAccessibleDescription("The project's resource templates: name and MIME type; "
                                                    "the selected one is edited")  # fmt: skip
        self._resource_label = QLabel(self)
        self._template_label = QLabel(self)

        self.add_resource_action = self._action(
            "Add resource",
            "add-resource",
            QStyle.StandardPixmap.SP_FileIcon,
            "Add a resource with a fixed URI",
        )
        self.add_template_action = self._action(
            "Add template", "add-template", QStyle.StandardPixmap.SP_FileDialogNewFolder,
            "Add a resource template addressed by a URI template",
        )  # fmt: skip
        self.duplicate_action = self._action(
            "Duplicate", "duplicate", QStyle.StandardPixmap.SP_FileLinkIcon, "Duplicate the selected resource"
        )
        self.duplicate_action.setShortcut(QKeySequence("Ctrl+D"))
        self.delete_action = self._action(
            "Delete", "delete", QStyle.StandardPixmap.SP_TrashIcon, "Delete the selected resource"
        )
        self.delete_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))

        toolbar = QHBoxLayout()
        toolbar.setContentsMargins(0, 0, 0, 0)
        toolbar.setSpacing(2)
        for action in (
            self.add_resource_action,
            self.add_template_action,
            self.duplicate_action,
            self.delete_action,
        ):
            button = QToolButton(self)
            button.setDefaultAction(action)
            button.setAutoRaise(True)
            button.setObjectName(action.objectName() + "Button")
            toolbar.addWidget(button)
        toolbar.addStretch(1)

        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.setChildrenCollapsible(False)
        for label, view in (
            (self._resource_label, self.resource_list),
            (self._template_label, self.template_list),
        ):
            pane = QWidget(splitter)
            pane_layout = QVBoxLayout(pane)
            pane_layout.setContentsMargins(0, 6, 0, 0)
            pane_layout.setSpacing(3)
            font = label.font()
            font.setWeight(QFont.Weight.DemiBold)
            label.setFont(font)
            pane_layout.addWidget(label)
            pane_layout.addWidget(view)
            splitter.addWidget(pane)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addWidget(self.filter_edit)
        layout.addLayout(toolbar)
        layout.addWidget(splitter, 1)

        # Filtering 10,000 rows takes tens of milliseconds: do it once typing pauses.
        self._filter_timer = QTimer(self)
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(FILTER_DEBOUNCE_MS)
        self._filter_timer.timeout.connect(self._on_filter_timeout)
        self.filter_edit.textChanged.connect(self._filter_timer.start)
        self.add_resource_action.triggered.connect(self._on_add_resource)
        self.add_template_action.triggered.connect(self._on_add_template)
        self.duplicate_action.triggered.connect(self._on_duplicate)
        self.delete_action.triggered.connect(self._on_delete)
        # The selection, not the current row, says which resource is picked: Tab into a list makes its
        # first row current (for the arrows) without selecting it, and must not switch resources.
        for view in (self.resource_list, self.template_list):
            view.selectionModel().selectionChanged.connect(self._on_selection_changed)
        # The source models' signals, not the proxies': a proxy announces a removal while its source
        # still counts the row, so a count taken then is one too many.
        for source in (self.resource_model, self.template_model):
            source.rowsInserted.connect(self._on_rows_changed)
            source.rowsRemoved.connect(self._on_rows_changed)
            source.modelReset.connect(self._on_rows_changed)
        document.project_reset.connect(self._on_project_reset)
        document.resource_added.connect(self._on_resource_added)
        document.resource_removed.connect(self._on_resource_removed)
        document.resource_changed.connect(self._on_resource_changed)
        self._update_labels()
        self._update_actions()

    # -- public API ----------------------------------------------------------

    @property
    def current_name(self) -> str:
        """The selected resource's name, "" when none is selected."""
        return self._current

    def focus_target(self) -> QWidget:
        """Where the focus goes when the catalogue is entered (F6): the list of the selected resource."""
        spec = self._document.peek(self._current) if self._current else None
        return self.template_list if spec is not None and spec.is_template else self.resource_list

    def follow_server(self, controller: StudioController) -> None:
        """Show what the server reports of the resources: data changes, and templates' instances runs."""
        controller.data_changed.connect(self.note_data_changed)
        controller.instances_failed.connect(self.note_instances_failed)
        controller.instances_listed.connect(self.note_instances_listed)

    @Slot(str, float, list, list)
    def note_data_changed(self, name: str, when: float, uris: list[str], paths: list[str]) -> None:
        """A watched file or polled read of `name` changed at `when`: its row shows the time."""
        for model in (self.resource_model, self.template_model):
            model.note_data_changed(name, when, uris, paths)

    @Slot(str, str)
    def note_instances_failed(self, name: str, message: str) -> None:
        """The template's `instances` snippet failed: its row (and the editor's Instances tab) carries the error."""
        self.template_model.note_instances_failed(name, message)

    @Slot(str, int)
    def note_instances_listed(self, name: str, count: int) -> None:
        self.template_model.note_instances_listed(name, count)

    def set_lint_warnings(self, names: list[str]) -> None:
        """Mark the resources and templates the lint finds warnings or errors in (unmark the rest)."""
        self.resource_model.set_lint_warnings(names)
        self.template_model.set_lint_warnings(names)

    def select(self, name: str) -> bool:
        """Make `name` current in its list (clearing the filter if it hides it); False when unknown."""
        spec = self._document.peek(name)
        if spec is None:
            return False
        view, proxy, model = self._parts(spec.is_template)
        row = model.row_of(name)
        if row < 0:
            return False
        index = proxy.mapFromSource(model.index(row, 0))
        if not index.isValid():
            self.filter_edit.clear()
            self.apply_filter()
            index = proxy.mapFromSource(model.index(row, 0))
        view.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        )
        view.scrollTo(index)
        self._set_current(name)
        return True

    # -- construction helpers ------------------------------------------------

    def _proxy(self, model: CatalogueModel) -> QSortFilterProxyModel:
        proxy = QSortFilterProxyModel(self)
        proxy.setSourceModel(model)
        proxy.setFilterRole(FILTER_ROLE)
        proxy.setFilterKeyColumn(0)
        proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        return proxy

    def _action(self, text: str, icon: str, fallback: QStyle.StandardPixmap, tip: str) -> QAction:
        action = QAction(studio_icon(icon, fallback), text, self)
        action.setObjectName(icon.replace("-", "_") + "_action")
        action.setToolTip(tip)
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.addAction(action)
        return action

    def _parts(self, templates: bool) -> tuple[QTreeView, QSortFilterProxyModel, CatalogueModel]:
        if templates:
            return self.template_list, self.template_proxy, self.template_model
        return self.resource_list, self.resource_proxy, self.resource_model

    def _set_current(self, name: str) -> None:
        if name != self._current:
            self._current = name
            self._update_actions()
            self.resource_selected.emit(name)

    def _update_actions(self) -> None:
        has = bool(self._current)
        self.duplicate_action.setEnabled(has)
        self.delete_action.setEnabled(has)

    # -- slots ---------------------------------------------------------------

    @Slot()
    def _on_rows_changed(self) -> None:
        self._update_labels()

    def _update_labels(self) -> None:
        filtered = bool(self.filter_edit.text())
        for label, title, proxy, model in (
            (self._resource_label, "Resources", self.resource_proxy, self.resource_model),
            (self._template_label, "Templates", self.template_proxy, self.template_model),
        ):
            shown, total = proxy.rowCount(), model.rowCount()
            label.setText(f"{title}  ({shown} of {total})" if filtered else f"{title}  ({total})")

    def apply_filter(self) -> None:
        """Filter both lists by the filter box now (typing applies it after a short pause)."""
        self._filter_timer.stop()
        pattern = QRegularExpression.escape(self.filter_edit.text().strip())
        for proxy in (self.resource_proxy, self.template_proxy):
            proxy.setFilterRegularExpression(
                QRegularExpression(pattern, QRegularExpression.PatternOption.CaseInsensitiveOption)
            )
        self._update_labels()

    @Slot()
    def _on_filter_timeout(self) -> None:
        self.apply_filter()

    @Slot()
    def _on_document_changing(self) -> None:
        self._document_changing = True

    @Slot(QItemSelection, QItemSelection)
    def _on_selection_changed(self, selected: QItemSelection, _deselected: QItemSelection) -> None:
        indexes = selected.indexes()
        if not indexes or self._document_changing:
            return
        current = indexes[0]
        sender_view = self.template_list if current.model() is self.template_proxy else self.resource_list
        other = self.resource_list if sender_view is self.template_list else self.template_list
        other.selectionModel().clear()
        self._set_current(current.data(NAME_ROLE) or "")

    @Slot()
    def _on_add_resource(self) -> None:
        self.select(self._document.add_resource(template=False))

    @Slot()
    def _on_add_template(self) -> None:
        self.select(self._document.add_resource(template=True))

    @Slot()
    def _on_duplicate(self) -> None:
        if self._current:
            self.select(self._document.duplicate_resource(self._current))

    @Slot()
    def _on_delete(self) -> None:
        name = self._current
        if not name:
            return
        spec = self._document.peek(name)
        _view, proxy, model = self._parts(spec.is_template if spec else False)
        row = proxy.mapFromSource(model.index(model.row_of(name), 0)).row()
        self._document.remove_resource(name)
        # Keep the user in place: select the row that took the deleted one's position.
        neighbour = proxy.index(min(row, proxy.rowCount() - 1), 0) if proxy.rowCount() else QModelIndex()
        if neighbour.isValid():
            self.select(neighbour.data(NAME_ROLE))

    @Slot()
    def _on_project_reset(self) -> None:
        self._document_changing = False
        self._set_current("")

    @Slot(str)
    def _on_resource_added(self, name: str) -> None:
        # Added, duplicated, or brought back by undo: the user wants to see it (connected after the
        # models, so its row is already there).
        self.select(name)

    @Slot(str)
    def _on_resource_removed(self, name: str) -> None:
        self._document_changing = False
        if name == self._current:
            self.resource_list.selectionModel().clear()
            self.template_list.selectionModel().clear()
            self._set_current("")

    @Slot(str, str)
    def _on_resource_changed(self, old_name: str, new_name: str) -> None:
        self._document_changing = False
        if old_name == self._current:
            self._current = new_name  # a rename keeps the selection; no new selection signal
            self.select(new_name)
