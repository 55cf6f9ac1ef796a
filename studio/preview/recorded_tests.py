"""The preview's "Add as test": a read becomes a `[[tests]]` entry (and its snapshot), undoably."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from resources_qt.errors import ValidationError
from resources_qt.testing.recording import record_snapshot, test_from_read
from resources_qt.testing.snapshots import SnapshotStore, snapshot_dir_for
from resources_qt.testing.spec import TestSpec
from studio.document.document import ProjectDocument

if TYPE_CHECKING:
    from resources_qt.qt import PreviewOutcome

logger = logging.getLogger(__name__)

__all__ = ["add_test_from_outcome"]


def add_test_from_outcome(
    document: ProjectDocument, outcome: PreviewOutcome
) -> TestSpec:
    """Add a test expecting what `outcome` answered; a content read also records its snapshot.

    The snapshot lives beside the project file, so a project never saved is refused with a
    `ValidationError` saying so (nothing is added). The test is added through the document, so it
    is one undo step and marks the project modified (`ProjectDocument.tests_changed` follows).
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
    document.add_test(spec)
    logger.info("added test %s for %s", spec.name, spec.uri)
    return spec
