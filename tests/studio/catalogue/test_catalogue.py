"""CatalogueView: two lists, filter, add/duplicate/delete, error marks, selection, 10,000 entries."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QBuffer, Qt
from PySide6.QtGui import QColor, QImage

from resources_qt.project import Project, ResourceSpec
from resources_qt.resource import Icon
from studio.catalogue.catalogue import CatalogueView
from studio.catalogue.catalogue_model import ERRORS_ROLE
from studio.document.document import ProjectDocument


def names(view) -> list[str]:
    model = view.model()
    return [model.index(row, 0).data() for row in range(model.rowCount())]


def make(qtbot, document) -> CatalogueView:
    view = CatalogueView(document)
    qtbot.addWidget(view)
    return view


def test_direct_resources_and_templates_are_in_separate_lists(qtbot, document):
    view = make(qtbot, document)
    assert view.objectName() == "catalogue"
    assert names(view.resource_list) == ["readme", "config"]
    assert names(view.template_list) == ["notes"]
    assert (
        view.resource_list.objectName() == "resourceList"
        and view.template_list.objectName() == "templateList"
    )
    mime = view.resource_list.model().index(1, 1).data()
    assert mime == "application/json"
    assert view.resource_list.uniformRowHeights()


def test_filter_applies_to_both_lists(qtbot, document):
    view = make(qtbot, document)
    qtbot.keyClicks(view.filter_edit, "JSON")
    qtbot.waitUntil(lambda: names(view.resource_list) == ["config"])  # applied once typing pauses
    assert names(view.template_list) == ["notes"]
    view.filter_edit.setText("notes://")
    view.apply_filter()
    assert names(view.resource_list) == [] and names(view.template_list) == ["notes"]
    view.filter_edit.setText("(")  # taken literally, not as a pattern
    view.apply_filter()
    assert names(view.resource_list) == [] and names(view.template_list) == []


def test_add_duplicate_delete_through_actions_select_the_result(qtbot, document):
    view = make(qtbot, document)
    selected: list[str] = []
    view.resource_selected.connect(selected.append)
    view.add_template_action.trigger()
    new_template = selected[-1]
    assert new_template in names(view.template_list)
    view.add_resource_action.trigger()
    new_resource = selected[-1]
    assert new_resource in names(view.resource_list)
    view.duplicate_action.trigger()
    assert selected[-1] == f"{new_resource}_copy"
    assert names(view.resource_list)[-2:] == [new_resource, f"{new_resource}_copy"]
    view.delete_action.trigger()
    assert f"{new_resource}_copy" not in document.names()
    assert view.current_name == new_resource  # the neighbour took over
    document.undo_stack.undo()
    assert f"{new_resource}_copy" in names(view.resource_list)


def test_selecting_in_one_list_clears_the_other(qtbot, document):
    view = make(qtbot, document)
    with qtbot.waitSignal(view.resource_selected) as blocker:
        view.select("notes")
    assert blocker.args == ["notes"]
    assert view.template_list.selectionModel().hasSelection()
    view.select("readme")
    assert not view.template_list.selectionModel().hasSelection()
    assert view.current_name == "readme"
    assert not view.select("missing")


def test_select_clears_a_filter_that_hides_the_resource(qtbot, document):
    view = make(qtbot, document)
    view.filter_edit.setText("config")
    view.apply_filter()
    assert view.select("readme")
    assert view.filter_edit.text() == ""


def test_error_mark_has_the_message_and_clears_when_fixed(qtbot, document):
    view = make(qtbot, document)
    spec = document.spec("config")
    document.update_resource("config", replace(spec, reader="def read(uri, params)\n    pass\n"))
    index = view.resource_list.model().index(1, 0)
    assert index.data(ERRORS_ROLE)
    assert "line 1" in index.data(Qt.ItemDataRole.ToolTipRole)
    assert index.data(Qt.ItemDataRole.ForegroundRole) is not None
    document.undo_stack.undo()
    assert index.data(ERRORS_ROLE) == []
    assert "docs://config" in index.data(Qt.ItemDataRole.ToolTipRole)


def test_duplicate_address_marks_both_entries(qtbot, document):
    view = make(qtbot, document)
    document.update_resource("config", replace(document.spec("config"), uri="docs://readme"))
    model = view.resource_list.model()
    assert all(model.index(row, 0).data(ERRORS_ROLE) for row in range(2))


def test_switching_kind_moves_the_entry_and_keeps_the_selection(qtbot, document):
    view = make(qtbot, document)
    view.select("config")
    spec = document.spec("config")
    document.update_resource("config", replace(spec, uri="", uri_template="docs://config/{part}"))
    assert names(view.resource_list) == ["readme"]
    assert names(view.template_list) == ["config", "notes"]  # project order
    assert view.current_name == "config"
    assert view.template_list.selectionModel().hasSelection()


def test_rename_and_project_reset(qtbot, document):
    view = make(qtbot, document)
    view.select("readme")
    document.update_resource("readme", replace(document.spec("readme"), name="intro"))
    assert names(view.resource_list) == ["intro", "config"] and view.current_name == "intro"
    with qtbot.waitSignal(view.resource_selected) as blocker:
        document.new_project()
    assert blocker.args == [""]
    assert names(view.resource_list) == [] and not view.delete_action.isEnabled()


def test_ten_thousand_entries_load_and_filter(qtbot):
    specs = [
        ResourceSpec(
            name=f"r{i}", uri=f"x://r/{i}", mime_type="text/plain", reader="def read(u, p):\n    return ''\n"
        )
        for i in range(10_000)
    ]
    document = ProjectDocument(Project(resources=specs))
    view = make(qtbot, document)
    view.resize(300, 600)
    view.show()
    qtbot.waitExposed(view)
    assert view.resource_model.rowCount() == 10_000
    view.resource_list.scrollToBottom()
    view.filter_edit.setText("r9999")
    view.apply_filter()
    assert names(view.resource_list) == ["r9999"]


def test_entry_icon_is_the_first_local_icon_else_the_kind_icon(qtbot, document):
    image = QImage(4, 4, QImage.Format.Format_ARGB32)
    image.fill(QColor("red"))
    buffer = QBuffer()
    buffer.open(QBuffer.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    data_uri = "data:image/png;base64," + bytes(buffer.data().toBase64()).decode()
    view = make(qtbot, document)
    model = view.resource_list.model()
    generic = model.index(0, 0).data(Qt.ItemDataRole.DecorationRole)
    document.update_resource("readme", replace(document.spec("readme"), icons=[Icon(data_uri, "image/png")]))
    # Decoded off the GUI thread: the kind icon shows until the thumbnail arrives.
    qtbot.waitUntil(lambda: model.index(0, 0).data(Qt.ItemDataRole.DecorationRole).cacheKey() != generic.cacheKey())
    custom = model.index(0, 0).data(Qt.ItemDataRole.DecorationRole)
    assert custom.pixmap(16, 16).toImage().pixelColor(8, 8) == QColor("red")
    assert generic.cacheKey() != custom.cacheKey()
    document.update_resource("readme", replace(document.spec("readme"), icons=[Icon("https://x/i.png")]))
    assert model.index(0, 0).data(Qt.ItemDataRole.DecorationRole).cacheKey() == generic.cacheKey()


def test_a_name_is_not_elided_while_the_mime_column_has_room(qtbot, document):
    view = make(qtbot, document)
    document.duplicate_resource("readme")
    spec = replace(document.spec("readme_copy"), name="customer_profile")
    document.update_resource("readme_copy", spec)
    view.resize(270, 500)  # the catalogue's width in the window at 1280x800
    view.show()
    qtbot.waitExposed(view)
    tree = view.resource_list
    needed = tree.iconSize().width() + tree.fontMetrics().horizontalAdvance("customer_profile") + 12
    assert tree.header().sectionSize(0) >= needed
    mime_text = tree.fontMetrics().horizontalAdvance("application/json")
    assert mime_text <= tree.header().sectionSize(1) <= mime_text + 16  # room for the type, not more


def test_headers_count_correctly_after_delete_convert_and_undo(qtbot, document):
    view = CatalogueView(document)
    qtbot.addWidget(view)
    labels = lambda: (view._resource_label.text(), view._template_label.text())  # noqa: E731
    assert labels() == ("Resources  (2)", "Templates  (1)")
    view.select("readme")
    view.delete_action.trigger()
    assert labels() == ("Resources  (1)", "Templates  (1)")
    view.select("notes")
    view.delete_action.trigger()
    assert labels() == ("Resources  (1)", "Templates  (0)")
    document.undo_stack.undo()
    document.undo_stack.undo()
    assert labels() == ("Resources  (2)", "Templates  (1)")
    document.update_resource("notes", replace(document.spec("notes"), uri_template="", uri="notes://all"))
    assert labels() == ("Resources  (3)", "Templates  (0)")
    view.filter_edit.setText("config")
    view.apply_filter()
    view.select("config")
    view.delete_action.trigger()
    assert labels() == ("Resources  (0 of 2)", "Templates  (0 of 0)")
