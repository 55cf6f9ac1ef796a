"""The preview's "Add as test": a read becomes a `[[tests]]` entry (and its snapshot), undoably."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtGui import QUndoCommand

from resources_qt.errors import ValidationError
from resources_qt.testing.recording import record_snapshot, test_from_read
from resources_qt.testing.snapshots import SnapshotStore, snapshot_dir_for
from resources_qt.testing.spec import TestSpec
from studio.document import ProjectDocument

if TYPE_CHECKING:
    from resources_qt.qt import PreviewOutcome

logger = logging.getLogger(__name__)

__all__ = ["add_test_from_outcome"]


class _AddTest(QUndoCommand):
    """Appends one test to the project's tests; undo takes it out again."""

    def __init__(self, document: ProjectDocument, spec: TestSpec, changed: Callable[[], None]) -> None:
        super().__init__(f"Add test {spec.name}")
        self._document = document
        self._spec = spec
        self._changed = changed

    def redo(self) -> None:
        self._document.project.tests.append(self._spec)
        self._changed()

    def undo(self) -> None:
        tests = self._document.project.tests
        if self._spec in tests:
            tests.remove(self._spec)
        self._changed()


def add_test_from_outcome(
    document: ProjectDocument, outcome: PreviewOutcome, *, changed: Callable[[], None]
) -> TestSpec:
    """Add a test expecting what `outcome` answered; a content read also records its snapshot.

    The snapshot lives beside the project file, so a project never saved is refused with a
    `ValidationError` saying so (nothing is added). `changed` is called after the tests changed
    (also on undo and redo), e.g. to refresh a tests view.
    """
    if not outcome.uri:
        raise ValidationError("Add as test: read a URI first", field="uri")
    existing = [test.name for test in document.project.tests]
    spec = test_from_read(outcome.uri, resource=outcome.resource_name, contents=outcome.contents,
                          error_code=outcome.error_code, existing=existing)  # fmt: skip
    if spec.expect.wants_snapshot:
        path = document.path
        if path is None:
            raise ValidationError(
                "Add as test: save the project first; the test's snapshot is kept beside the project file",
                field="path",
            )
        record_snapshot(SnapshotStore(snapshot_dir_for(path)), spec, list(outcome.contents or []))
    document.undo_stack.push(_AddTest(document, spec, changed))
    logger.info("added test %s for %s", spec.name, spec.uri)
    return spec
