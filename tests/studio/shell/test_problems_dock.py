"""View > Problems (F8) docks the lint findings of the open project; nothing lints until it is first shown."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget

from resources_qt.project import load_project, save_project
from studio.catalogue.catalogue_model import LINT_WARNING_TEXT, NAME_ROLE
from studio.problems.problems_view import ProblemsView

LINT_MS = 60_000


def test_the_problems_dock_lints_the_open_project_once_shown_and_a_finding_selects_its_resource(
    make_window, project_file, qtbot
) -> None:
    project = load_project(project_file)
    project.resources[0].size = 1  # readme declares 1 byte and serves more: a size-mismatch warning
    save_project(project, project_file)
    window = make_window()
    window.open_project(project_file)
    window.show()
    qtbot.waitExposed(window)
    dock = window.findChild(QDockWidget, "problemsDock")
    assert dock is window.problems and not dock.isVisible() and dock.view is None  # no lint before it is shown
    assert window.problems.toggle_action in window.commands.view_menu.actions()
    with qtbot.waitSignal(window.problems.toggle_action.toggled, timeout=5_000):
        window.problems.toggle_action.trigger()
    view = dock.view
    assert isinstance(view, ProblemsView) and view.objectName() == "problemsView" and dock.widget() is view
    qtbot.waitUntil(lambda: not view.is_running, timeout=LINT_MS)
    with qtbot.waitSignal(view.lint_finished, timeout=LINT_MS):
        assert view.refresh()
    assert all(finding.resource in window.document.names() or not finding.resource for finding in view.findings())
    warned = {finding.resource for finding in view.findings() if finding.level in ("error", "warning")}
    model = window.catalogue.resource_model
    marked = {model.index(row, 0).data(NAME_ROLE) for row in range(model.rowCount())
              if LINT_WARNING_TEXT in (model.index(row, 0).data(Qt.ItemDataRole.ToolTipRole) or "")}  # fmt: skip
    assert "readme" in warned and "readme" in marked
    assert marked == warned & {model.index(row, 0).data(NAME_ROLE) for row in range(model.rowCount())}
    names = window.document.names()
    window.catalogue.select(names[0])
    view.problem_activated.emit(names[-1], "size")
    assert window.editor.resource_name == names[-1]
