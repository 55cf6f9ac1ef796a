"""View > Problems: the lint findings of the open project in a dock, built the first time it is shown."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow

from studio.document.document import ProjectDocument
from studio.problems.problems_view import ProblemsView

__all__ = ["ProblemsDock"]


class ProblemsDock(QDockWidget):
    """The Problems panel at the bottom of the window, toggled by `toggle_action` (View > Problems, F8).

    Its `ProblemsView` is made when the dock is first shown: a lint serves the project through a real
    engine and reads every sample, which a session that never looks at problems should not pay for.
    Double clicking a finding selects its resource (`select`) and, for a field's, opens the builder; the
    resources with warnings or errors are passed to `mark` after each lint (the catalogue's marks). No signals
    of its own.
    """

    def __init__(
        self,
        document: ProjectDocument,
        *,
        select: Callable[[str], bool],
        open_builder: Callable[[], None],
        mark: Callable[[list[str]], None],
        parent: QMainWindow,
    ) -> None:
        super().__init__("Problems", parent)
        self.setObjectName("problemsDock")
        self._document = document
        self._select = select
        self._open_builder = open_builder
        self._mark = mark
        self.view: ProblemsView | None = None
        self.toggle_action = self.toggleViewAction()
        self.toggle_action.setText("&Problems")
        self.toggle_action.setShortcut(QKeySequence("F8"))
        self.toggle_action.setToolTip("The lint findings of the open project (F8)")
        parent.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self)
        self.hide()
        self.visibilityChanged.connect(self._on_visibility_changed)

    def shutdown(self) -> None:
        """Stop a lint under way (idempotent)."""
        if self.view is not None:
            self.view.shutdown()

    @Slot(bool)
    def _on_visibility_changed(self, visible: bool) -> None:
        if visible and self.view is None:
            self.view = ProblemsView(self._document, self)
            self.view.problem_activated.connect(self._on_problem_activated)
            self.view.resource_levels_changed.connect(self._on_levels_changed)
            self.setWidget(self.view)

    @Slot(dict)
    def _on_levels_changed(self, levels: dict[str, str]) -> None:
        # The catalogue marks what has warnings or errors; notes are not worth a mark.
        self._mark(sorted(name for name, level in levels.items() if level in ("error", "warning")))

    @Slot(str, str)
    def _on_problem_activated(self, resource: str, field: str) -> None:
        if self._select(resource) and field:
            self._open_builder()
