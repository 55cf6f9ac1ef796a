"""Compile checks of snippet sources for the document: cached by source, long ones done outside the GUI's thread."""

from __future__ import annotations

import itertools
from collections import OrderedDict

from PySide6.QtCore import QObject, Signal, Slot

from studio.analysis.source_check import CheckResult, check_source

__all__ = ["BACKGROUND_CHECK_LINES", "CheckResult", "SnippetChecks"]

BACKGROUND_CHECK_LINES = 400
"""Sources with more lines are checked in the completion process: compiling 2,000 lines holds the GIL for
hundreds of milliseconds, which would stall the window on every edit."""

CACHE_SIZE = 256

class SnippetChecks(QObject):
    """Answers "does this snippet compile?" from a bounded cache; a long source's first answer comes later.

    `result()` checks a short source at once. A long one is sent to the
    completion process and reported as fine until its answer arrives, then
    `checks_finished` tells the owner which source to ask about again. With `background=False`
    every check is done at once (for scripts and tests that need it so).

    Signals:
        checks_finished(str source): a background check of `source` finished; its cached result changed.
    """

    checks_finished = Signal(str)

    def __init__(self, parent: QObject | None = None, *, background: bool = True) -> None:
        super().__init__(parent)
        self._background = background
        self._results: OrderedDict[tuple[str, str | None], CheckResult] = OrderedDict()
        self._pending: dict[int, tuple[str, str | None]] = {}
        self._ids = itertools.count(1)
        self._owner = id(self)
        self._worker_connected = False

    def result(self, source: str, *, function: str | None, filename: str = "<reader>") -> CheckResult:
        key = (source, function)
        if key in self._results:
            self._results.move_to_end(key)
            return self._results[key]
        if self._background and source.count("\n") >= BACKGROUND_CHECK_LINES and self._submit(key):
            return None
        found = check_source(source, filename=filename, function=function)
        self._store(key, found)
        return found

    def _store(self, key: tuple[str, str | None], found: CheckResult) -> None:
        self._results[key] = found
        while len(self._results) > CACHE_SIZE:
            self._results.popitem(last=False)

    def _submit(self, key: tuple[str, str | None]) -> bool:
        if key in self._pending.values():
            return True
        from studio.analysis.completion_source import CheckRequest
        from studio.analysis.worker import CompletionWorker

        worker = CompletionWorker.shared()
        if not self._worker_connected:
            worker.checked.connect(self._on_checked)
            self._worker_connected = True
        request_id = next(self._ids)
        self._pending[request_id] = key
        worker.submit(CheckRequest(request_id=request_id, owner=self._owner, source=key[0], function=key[1]))
        return True

    @Slot(object, object)
    def _on_checked(self, request: object, found: object) -> None:
        from studio.analysis.completion_source import CheckRequest

        if not isinstance(request, CheckRequest) or request.owner != self._owner:
            return
        key = self._pending.pop(request.request_id, None)
        if key is None:
            return
        if found is False:  # the process could not check it: check here after all
            self._store(key, check_source(key[0], function=key[1]))
        elif isinstance(found, tuple):
            self._store(key, (int(found[0]), int(found[1]), str(found[2])))
        else:
            self._store(key, None)
        self.checks_finished.emit(key[0])
