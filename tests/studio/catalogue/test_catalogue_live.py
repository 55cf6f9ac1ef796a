"""The catalogue's live-data marks: watching, last change time, a failing instances snippet."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from resources_qt.project import Project, ResourceSpec
from resources_qt.project.model import WatchSpec
from studio.catalogue.catalogue_model import ERRORS_ROLE, LAST_CHANGE_ROLE, WATCH_ROLE, CatalogueModel
from studio.document.document import ProjectDocument

READER = "def read(uri, params):\n    return ''\n"


def _document() -> ProjectDocument:
    return ProjectDocument(Project(resources=[
        ResourceSpec(name="index", uri="notes-index://all", watch=WatchSpec(files=["index.txt"], interval=5.0),
                     reader=READER),
        ResourceSpec(name="plain", uri="plain://x", reader=READER),
        ResourceSpec(name="note", uri_template="notes://{+path}", watch=WatchSpec(files=["notes"]),
                     instances="def instances():\n    return []\n", reader=READER),
    ]))  # fmt: skip


def test_watched_resources_carry_the_mark_and_their_last_change(qtbot: Any) -> None:
    model = CatalogueModel(_document(), templates=False)
    index, plain = model.index(0, 0), model.index(1, 0)
    assert index.data(WATCH_ROLE) == "both" and plain.data(WATCH_ROLE) == ""
    assert "Watching: files index.txt; every 5 s" in index.data(Qt.ItemDataRole.ToolTipRole)
    assert "Watching" not in plain.data(Qt.ItemDataRole.ToolTipRole)
    assert index.data(LAST_CHANGE_ROLE) is None
    with qtbot.waitSignal(model.dataChanged):
        model.note_data_changed("index", 1_700_000_000.0, ["notes-index://all"])
    assert index.data(LAST_CHANGE_ROLE) == 1_700_000_000.0
    assert "Last change: " in index.data(Qt.ItemDataRole.ToolTipRole)


def test_a_failing_instances_snippet_shows_against_its_template_until_it_answers(qtbot: Any) -> None:
    model = CatalogueModel(_document(), templates=True)
    note = model.index(0, 0)
    assert note.data(WATCH_ROLE) == "files" and note.data(ERRORS_ROLE) == []
    model.note_instances_failed("note", "instances() failed: OSError: gone (line 2)")
    assert note.data(ERRORS_ROLE) == ["instances: instances() failed: OSError: gone (line 2)"]
    assert "OSError: gone" in note.data(Qt.ItemDataRole.ToolTipRole)
    model.note_instances_listed("note", 3)
    assert note.data(ERRORS_ROLE) == []
