"""The document's undo commands: each edit of a project is one QUndoCommand, merged while typing."""

from __future__ import annotations

import time
import weakref
from dataclasses import fields, replace
from typing import Protocol

from PySide6.QtGui import QUndoCommand

from resources_qt.project import ResourceSpec, ServerSettings
from resources_qt.project.upstreams import UpstreamSpec
from resources_qt.testing.spec import TestSpec

__all__ = [
    "MERGE_WINDOW_S", "EditedDocument", "InsertResource", "SetPrelude", "SetSettings", "SetTests",
    "UpdateResource", "changed_settings",
]  # fmt: skip

MERGE_WINDOW_S = 2.0
"""Edits of one resource closer together than this become one undo step."""

_UPDATE_ID = 1001
_PRELUDE_ID = 1002
_SETTINGS_ID = 1003


def changed_settings(before: ServerSettings, after: ServerSettings) -> tuple[str, ...]:
    """The `[server]` keys whose values differ, in declaration order."""
    return tuple(f.name for f in fields(before) if getattr(before, f.name) != getattr(after, f.name, None))


class EditedDocument(Protocol):
    """What the commands change: `ProjectDocument`'s primitives, which apply a change and emit its signals.

    They are private to the document and its commands: everything else edits through the undo stack.
    """

    def _insert(self, index: int, spec: ResourceSpec) -> None: ...

    def _take(self, name: str) -> None: ...

    def _replace(self, old_name: str, spec: ResourceSpec) -> None: ...

    def _apply_prelude(self, source: str) -> None: ...

    def _apply_tests(self, tests: list[TestSpec]) -> None: ...

    def _apply_settings(self, settings: ServerSettings) -> None: ...

    def _apply_upstreams(self, upstreams: list[UpstreamSpec]) -> None: ...


class Edit(QUndoCommand):
    """An edit of a document, holding the document weakly.

    A strong reference would make the document, its undo stack and the commands one
    garbage cycle; the collector may then free a command's Python half before the
    stack's C++ destructor deletes the command, which crashed the test suite.
    """

    _document_ref: weakref.ref[EditedDocument]

    @property
    def _document(self) -> EditedDocument:
        document = self._document_ref()
        if document is None:
            raise RuntimeError("the document of this edit is gone")  # the stack dies with its document
        return document


class UpdateResource(Edit):
    """Replaces the spec named `old_name` (`before`) by `after`; edits of one resource within `MERGE_WINDOW_S`
    are one step."""

    def __init__(self, document: EditedDocument, old_name: str, *, before: ResourceSpec, after: ResourceSpec) -> None:
        super().__init__(f"Edit {after.name or old_name}")
        self._document_ref = weakref.ref(document)
        self._before = before
        self._after = after
        self._stamp = time.monotonic()

    def id(self) -> int:
        return _UPDATE_ID

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, UpdateResource) or other._before.name != self._after.name:
            return False
        if other._stamp - self._stamp > MERGE_WINDOW_S:
            return False
        self._after = other._after
        self._stamp = other._stamp
        self.setText(f"Edit {self._after.name}")
        # Typing something and deleting it again leaves no undo step behind.
        self.setObsolete(self._after == self._before)
        return True

    def redo(self) -> None:
        self._document._replace(self._before.name, self._after)

    def undo(self) -> None:
        self._document._replace(self._after.name, self._before)


class InsertResource(Edit):
    """Adds `spec` at `index` (redo) and removes it (undo); `remove=True` swaps the two."""

    def __init__(self, document: EditedDocument, index: int, *, spec: ResourceSpec, remove: bool, text: str) -> None:
        super().__init__(text)
        self._document_ref = weakref.ref(document)
        self._index = index
        self._spec = spec
        self._remove = remove

    def redo(self) -> None:
        if self._remove:
            self._document._take(self._spec.name)
        else:
            self._document._insert(self._index, self._spec)

    def undo(self) -> None:
        if self._remove:
            self._document._insert(self._index, self._spec)
        else:
            self._document._take(self._spec.name)


class SetPrelude(Edit):
    """Replaces the project's prelude; typing within `MERGE_WINDOW_S` is one step."""

    def __init__(self, document: EditedDocument, *, before: str, after: str) -> None:
        super().__init__("Edit prelude")
        self._document_ref = weakref.ref(document)
        self._before = before
        self._after = after
        self._stamp = time.monotonic()

    def id(self) -> int:
        return _PRELUDE_ID

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, SetPrelude) or other._stamp - self._stamp > MERGE_WINDOW_S:
            return False
        self._after = other._after
        self._stamp = other._stamp
        return True

    def redo(self) -> None:
        self._document._apply_prelude(self._after)

    def undo(self) -> None:
        self._document._apply_prelude(self._before)


class SetTests(Edit):
    """Replaces the project's `[[tests]]` (adding or removing one test is one step)."""

    def __init__(self, document: EditedDocument, text: str, *, before: list[TestSpec], after: list[TestSpec]) -> None:
        super().__init__(text)
        self._document_ref = weakref.ref(document)
        self._before = list(before)
        self._after = list(after)

    def redo(self) -> None:
        self._document._apply_tests(self._after)

    def undo(self) -> None:
        self._document._apply_tests(self._before)


class SetUpstreams(Edit):
    """Replaces the project's `[[upstreams]]` (client mode's import declares one)."""

    def __init__(self, document: EditedDocument, text: str, *, before: list[UpstreamSpec],
                 after: list[UpstreamSpec]) -> None:  # fmt: skip
        super().__init__(text)
        self._document_ref = weakref.ref(document)
        self._before = [replace(u) for u in before]
        self._after = [replace(u) for u in after]

    def redo(self) -> None:
        self._document._apply_upstreams(self._after)

    def undo(self) -> None:
        self._document._apply_upstreams(self._before)


class SetSettings(Edit):
    """Changes `[server]`; typing into one setting within `MERGE_WINDOW_S` is one step."""

    def __init__(self, document: EditedDocument, *, before: ServerSettings, after: ServerSettings) -> None:
        self._keys = changed_settings(before, after)
        super().__init__(f"Change server setting {', '.join(self._keys)}" if self._keys else "Change server settings")
        self._document_ref = weakref.ref(document)
        self._before = before
        self._after = after
        self._stamp = time.monotonic()

    def id(self) -> int:
        return _SETTINGS_ID

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, SetSettings) or other._keys != self._keys:
            return False
        if other._stamp - self._stamp > MERGE_WINDOW_S:
            return False
        self._after = other._after
        self._stamp = other._stamp
        self.setObsolete(self._after == self._before)
        return True

    def redo(self) -> None:
        self._document._apply_settings(self._after)

    def undo(self) -> None:
        self._document._apply_settings(self._before)
