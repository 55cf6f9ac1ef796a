"""The editor page's presenter: the preview's reads, completions, snippet output and recorded tests."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot

from resources_qt.errors import ValidationError
from resources_qt.qt.protocol import StudioController
from studio.document.document import ProjectDocument
from studio.preview.snippet_output import OutputBlock
from studio.shell.resource_editor import ResourceEditor

if TYPE_CHECKING:
    from resources_qt.qt import PreviewOutcome

logger = logging.getLogger(__name__)

__all__ = ["PreviewPresenter"]


class PreviewPresenter(QObject):
    """Connects the editor page's preview to the controller.

    Reads go to the controller and their outcomes come back to the preview. Completion requests of a
    template's variables are numbered: an answer to an older request, or for a resource no longer
    shown, is stale and dropped. What a snippet printed during a read is shown when it is the shown
    resource's. "Add as test" records the shown read as a resource test of the document.

    Signals:
        message_posted(str text, int timeout_ms): a note for the status bar.
    """

    message_posted = Signal(str, int)

    def __init__(
        self,
        *,
        document: ProjectDocument,
        controller: StudioController,
        editor: ResourceEditor,
        report_error: Callable[[str, str], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._document = document
        self._controller = controller
        self._editor = editor
        self._report_error = report_error
        self._completion_serial = 0
        self._completion_requests: dict[str, tuple[str, str]] = {}  # request id -> (resource, variable)
        preview = editor.preview
        preview.preview_requested.connect(controller.preview)
        preview.completion_requested.connect(self._on_completion_requested)
        preview.add_test_requested.connect(self._on_add_test_requested)
        controller.preview_finished.connect(preview.show_outcome)
        controller.completions_ready.connect(self._on_completions_ready)
        # One block per read (time, URI, streams in order); the plain snippet_output stream is for scripts.
        controller.read_output.connect(self._on_read_output)
        preview.read_as.attach(controller)  # "Read as" a scope set, through the facade

    @property
    def pending_completions(self) -> Mapping[str, tuple[str, str]]:
        """Completion requests not answered yet: request id -> (resource, variable)."""
        return self._completion_requests

    @Slot(str, str, str, dict)
    def _on_completion_requested(self, resource: str, variable: str, value: str, context: Mapping[str, str]) -> None:
        self._completion_serial += 1
        request_id = str(self._completion_serial)
        self._completion_requests[request_id] = (resource, variable)
        self._controller.complete(request_id, resource, variable, value, context)

    @Slot(str, list)
    def _on_completions_ready(self, request_id: str, values: list[object]) -> None:
        resource, variable = self._completion_requests.pop(request_id, ("", ""))
        # Answers to older requests, or for a resource no longer shown, are stale.
        editor = self._editor
        if resource and resource == editor.resource_name and int(request_id) == self._completion_serial:
            editor.preview.set_completions(variable, [str(value) for value in values])

    def _shows_key(self, key: str) -> bool:
        name = self._editor.resource_name
        spec = self._document.peek(name) if name else None
        return spec is not None and key in (name, spec.key)

    @Slot(object)
    def _on_read_output(self, output: OutputBlock) -> None:
        if self._shows_key(output.key):
            self._editor.add_output_block(OutputBlock(output.key, output.uri, output.started, tuple(output.chunks)))

    @Slot(object)
    def _on_add_test_requested(self, outcome: PreviewOutcome) -> None:
        from studio.preview.recorded_tests import add_test_from_outcome  # the SDK's types, for the first recording only

        try:
            spec = add_test_from_outcome(self._document, outcome)
        except (ValidationError, OSError) as exc:
            self._report_error("Add as test", str(exc))
            return
        self.message_posted.emit(f"Added test {spec.name!r}; it runs on the Tests page (Ctrl+5)", 8000)
