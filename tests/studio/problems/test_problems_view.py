"""The Problems panel with real widgets and a real document: findings listed, double click, quick fixes, re-lint."""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtWidgets import QLabel, QPushButton, QTableView
from pytestqt.qtbot import QtBot

from resources_qt.project import loads_project
from studio.document.document import ProjectDocument
from studio.problems.problems_model import FINDING_ROLE, LEVEL_COLUMN, RULE_COLUMN
from studio.problems.problems_view import ProblemsView

LINT_MS = 60_000
PROJECT = """\
format = 1

prelude = '''
GIF = b"GIF89a" + bytes(20)
'''

[server]
name = "Panel desk"
workers = 1

[[resources]]
name = "sized"
description = "a sized text"
uri = "docs://sized"
mime_type = "text/plain"
size = 3
reader = '''
def read(uri, params):
    return "twelve bytes"
'''

[[resources]]
name = "logo"
description = "the logo"
uri = "img://logo.png"
mime_type = "image/png"
reader = '''
def read(uri, params):
    return GIF
'''

[[resources]]
name = "ticket"
description = "one ticket"
uri_template = "tickets://{id}"
samples = ["tickets://7", "tickets://8"]
reader = '''
def read(uri, params):
    return params["id"]
'''

[[resources]]
name = "bare"
uri = "docs://bare"
reader = '''
def read(uri, params):
    return "b"
'''
"""


@pytest.fixture
def document() -> ProjectDocument:
    return ProjectDocument(loads_project(PROJECT))


@pytest.fixture
def view(qtbot: QtBot, document: ProjectDocument) -> Iterator[ProblemsView]:
    widget = ProblemsView(document, delay_ms=50, time_limit_s=30.0)
    qtbot.addWidget(widget)
    widget.resize(900, 400)
    widget.show()
    yield widget
    widget.shutdown()


def _linted(qtbot: QtBot, view: ProblemsView) -> tuple[int, int, int]:
    with qtbot.waitSignal(view.lint_finished, timeout=LINT_MS) as finished:
        pass
    return tuple(finished.args)  # type: ignore[return-value]


def _row(view: ProblemsView, rule: str, resource: str) -> int:
    return next(number for number, finding in enumerate(view.findings())
                if finding.rule == rule and finding.resource == resource)


def test_the_panel_lints_the_open_project_and_lists_the_findings(qtbot: QtBot, view: ProblemsView) -> None:
    assert view.objectName() == "problemsView"
    with qtbot.waitSignal(view.resource_levels_changed, timeout=LINT_MS) as levels:
        pass
    assert levels.args == [{"sized": "warning", "logo": "error", "ticket": "warning", "bare": "note"}]
    assert view.resource_levels() == levels.args[0]
    table = view.findChild(QTableView, "problemsTable")
    assert table is not None and table.model().rowCount() == 4
    shown = [(table.model().index(row, LEVEL_COLUMN).data(), table.model().index(row, RULE_COLUMN).data())
             for row in range(4)]
    assert shown == [("error", "mime-mismatch"), ("warning", "size-mismatch"),
                     ("warning", "template-not-discoverable"), ("note", "missing-description")]
    status = view.findChild(QLabel, "problemsStatus")
    assert status is not None and status.text() == "1 error, 2 warnings, 1 note"
    tip = table.model().index(0, 3).data(Qt.ItemDataRole.ToolTipRole)
    assert "the bytes are a GIF" in tip and "Quick fix: Set the MIME type to image/gif" in tip


def test_a_double_click_names_the_resource_and_the_field(qtbot: QtBot, view: ProblemsView) -> None:
    _linted(qtbot, view)
    table = view.table
    row = _row(view, "size-mismatch", "sized")
    rect = table.visualRect(table.model().index(row, RULE_COLUMN))
    with qtbot.waitSignal(view.problem_activated, timeout=5_000) as activated:
        # As a hand does it: QTest's double click alone sends no press for the view to start from.
        qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        qtbot.mouseDClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert activated.args == ["sized", "size"]


@pytest.mark.parametrize(
    ("rule", "resource", "field", "before", "after"),
    [
        ("size-mismatch", "sized", "size", 3, 12),
        ("mime-mismatch", "logo", "mime_type", "image/png", "image/gif"),
        ("template-not-discoverable", "ticket", "instances", "",
         "def instances():\n    # the concrete URIs resources/list shows: one dict per instance\n"
         "    return [\n        {'id': '7'},\n        {'id': '8'},\n    ]\n"),
    ],
)
def test_a_quick_fix_edits_the_document_as_one_undoable_step(
    qtbot: QtBot, view: ProblemsView, document: ProjectDocument, rule: str, resource: str, field: str,
    before: object, after: object,
) -> None:
    _linted(qtbot, view)
    button = view.findChild(QPushButton, "quickFixButton")
    assert button is not None and not button.isEnabled()  # nothing selected yet
    row = _row(view, rule, resource)
    view.table.selectionModel().select(view.model.index(row, 0), QItemSelectionModel.SelectionFlag.ClearAndSelect
                                       | QItemSelectionModel.SelectionFlag.Rows)
    assert button.isEnabled()
    steps = document.undo_stack.count()
    with qtbot.waitSignal(view.lint_finished, timeout=LINT_MS):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        spec = document.peek(resource)
        assert spec is not None and getattr(spec, field) == after
        assert document.is_dirty
        assert rule not in [finding.rule for finding in view.findings() if finding.resource == resource]
    # The edit lints again, and what was fixed stays fixed.
    assert [f.rule for f in view.findings() if f.resource == resource and f.rule == rule] == []
    assert document.undo_stack.count() == steps + 1
    assert document.undo_stack.undoText().startswith("Quick fix: ")
    document.undo_stack.undo()
    spec = document.peek(resource)
    assert spec is not None and getattr(spec, field) == before


def test_a_quick_fix_does_not_merge_with_the_edit_before_it(
    qtbot: QtBot, view: ProblemsView, document: ProjectDocument
) -> None:
    _linted(qtbot, view)
    spec = document.spec("sized")
    assert spec is not None
    spec.title = "Sized"
    document.update_resource("sized", spec)  # an edit of the same resource, right before the fix
    steps = document.undo_stack.count()
    assert view.quick_fix(_row(view, "size-mismatch", "sized"))
    assert document.undo_stack.count() == steps + 1
    document.undo_stack.undo()
    undone = document.peek("sized")
    assert undone is not None and (undone.size, undone.title) == (3, "Sized")


def test_an_edit_lints_again_after_the_quiet_time(qtbot: QtBot, view: ProblemsView, document: ProjectDocument) -> None:
    _linted(qtbot, view)
    spec = document.spec("bare")
    assert spec is not None
    spec.reader = "def read(uri, params):\n    raise RuntimeError('the disk is on fire')\n"
    document.update_resource("bare", spec)
    errors, _warnings, _notes = _linted(qtbot, view)
    assert errors == 2
    (finding,) = [f for f in view.findings() if f.rule == "sample-fails"]
    assert finding.resource == "bare" and "the disk is on fire" in finding.message
    assert view.model.index(0, 0).data(FINDING_ROLE) in view.findings()


def test_resources_with_errors_are_left_out_and_named(qtbot: QtBot, document: ProjectDocument) -> None:
    spec = document.spec("bare")
    assert spec is not None
    spec.uri = ""  # no address: the document keeps it, nothing serves it
    document.update_resource("bare", spec)
    view = ProblemsView(document, delay_ms=50)
    qtbot.addWidget(view)
    try:
        with qtbot.waitSignal(view.lint_started, timeout=5_000):
            pass
        assert view.status_label.text() == "Linting… (bare left out: fix the errors first)"
        _linted(qtbot, view)
        assert "bare" not in view.resource_levels()
    finally:
        view.shutdown()


SLOW = """\
format = 1

[server]
name = "Slow desk"
workers = 2
reader_timeout = 3.0
""" + "".join(
    f'\n[[resources]]\nname = "slow{n}"\ndescription = "slow"\nuri = "slow://{n}"\nreader = \'\'\'\n'
    "import time\ndef read(uri, params):\n    time.sleep(30)\n    return 'late'\n\'\'\'\n"
    for n in range(20)
)


def test_lint_runs_off_the_gui_thread_and_stops_at_its_time_limit(qtbot: QtBot) -> None:
    """20 reads that each time out after 3 s, 8 at a time: past the 4 s limit no further read starts."""
    view = ProblemsView(ProjectDocument(loads_project(SLOW)), delay_ms=10, time_limit_s=4.0)
    qtbot.addWidget(view)
    ticks: list[float] = []
    try:
        with qtbot.waitSignal(view.lint_started, timeout=5_000):
            pass
        started = time.monotonic()
        assert view.is_running and not view.lint_button.isEnabled()
        with qtbot.waitSignal(view.lint_finished, timeout=LINT_MS) as finished:
            while view.is_running:
                ticks.append(time.monotonic())
                qtbot.wait(20)  # the event loop keeps turning while the lint reads
        took = time.monotonic() - started
    finally:
        view.shutdown()
    assert len(ticks) > 20 and max(b - a for a, b in itertools.pairwise(ticks)) < 1.0
    # The limit, then the reads under way (3 s each, waiting included), then closing: not 20 reads' worth.
    assert took < 4.0 + 3.0 + 6.0, took
    errors, _warnings, _notes = finished.args
    assert all(f.rule == "sample-fails" and "timed out" in f.message for f in view.findings())
    status = view.status_label.text()
    left = re.search(r"legacy: (\d+) of 20 reads left out \(stopped early\)", status)
    if left is None:  # the workers took the whole limit to start
        assert "stopped before the legacy era" in status and errors == 0, status
    else:  # a batch of 8 or two started before the limit, the rest never did
        assert int(left.group(1)) >= 4 and errors == 20 - int(left.group(1)), status


def test_shutdown_stops_a_lint_under_way(qtbot: QtBot, document: ProjectDocument) -> None:
    view = ProblemsView(document, delay_ms=10)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.lint_started, timeout=5_000):
        pass
    view.shutdown(timeout=30.0)
    assert not view.is_running
