"""The Tests view driven with qtbot: run all, run selected, run a resource's tests, failures shown, off-thread."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.resource_tests import CHECKS_PROJECT
from PySide6.QtCore import QItemSelectionModel
from PySide6.QtWidgets import QPlainTextEdit, QPushButton, QTableView
from pytestqt.qtbot import QtBot

from resources_qt.project import Project, loads_project
from resources_qt.testing.spec import parse_tests
from studio.document.document import ProjectDocument
from studio.tests_page.tests_model import FAILED, NOT_RUN, PASSED, STATUS_COLUMN
from studio.tests_page.tests_view import TestsView

RUN_MS = 60_000
BROKEN = """
[[resources]]
name = "broken"
uri = "broken://one"
mime_type = "text/plain"
reader = '''
def read(uri, params):
    raise RuntimeError("the disk is on fire")
'''
"""


def _project() -> Project:
    project = loads_project(CHECKS_PROJECT + BROKEN)
    tests = parse_tests([
        {"name": "greeting says hello", "uri": "text://greeting", "expect": {"contains": "hello world"}},
        {"name": "greeting is json", "uri": "text://greeting", "expect": {"contains": "hello there"}},
        {"name": "profile 42", "uri": "crm://customers/42/profile", "expect": {"json": {"id": "42"}}},
    ])
    project.tests = tests
    return project


@pytest.fixture
def view(qtbot: QtBot) -> Iterator[TestsView]:
    widget = TestsView(ProjectDocument(_project()))
    qtbot.addWidget(widget)
    widget.resize(900, 500)
    widget.show()
    yield widget
    widget.shutdown()


def _statuses(view: TestsView) -> dict[str, str]:
    return {row.name: row.status for row in view.model.rows()}


def test_lists_every_test_and_sample_not_run(view: TestsView) -> None:
    assert view.objectName() == "testsView"
    # The declared tests read text://greeting and crm://customers/42/profile: they replace those samples.
    assert list(_statuses(view)) == [
        "greeting says hello", "greeting is json", "profile 42",
        "sample: img://logo.png", "sample: multi://pair", "sample: slow://read", "sample: broken://one",
    ]
    assert set(_statuses(view).values()) == {NOT_RUN}
    assert view.findChild(QPushButton, "runTestsButton") is view.run_all_button
    assert view.run_all_button.isEnabled() and not view.run_selected_button.isEnabled()
    assert not view.run_resource_button.isEnabled()  # no resource selected yet


def test_run_all_runs_off_the_gui_thread_and_shows_failures(qtbot: QtBot, view: TestsView) -> None:
    finished: list[tuple[int, int]] = []
    failing: list[list[str]] = []
    view.run_finished.connect(lambda passed, failed: finished.append((passed, failed)))
    view.failing_resources_changed.connect(failing.append)
    with qtbot.waitSignal(view.run_started, timeout=5_000):
        view.run_all_button.click()
    # The click returned while the run goes on: the GUI thread is free.
    assert view.is_running and not view.run_all_button.isEnabled()
    assert "running" in set(_statuses(view).values())
    qtbot.waitUntil(lambda: bool(finished), timeout=RUN_MS)
    assert finished == [(5, 2)]
    statuses = _statuses(view)
    assert (statuses["greeting is json"], statuses["sample: broken://one"]) == (FAILED, FAILED)
    assert statuses["profile 42"] == PASSED
    assert failing == [["greeting", "broken"]]
    assert view.status_label.text() == "5 passed, 2 failed"
    assert view.run_all_button.isEnabled()
    model = view.model
    row = next(number for number in range(model.rowCount()) if model.row(number).name == "greeting is json")
    assert model.index(row, STATUS_COLUMN).data() == FAILED
    assert model.index(row, 4).data() == "contains: 'hello there' not found in the text"
    assert model.index(row, 3).data().endswith(" ms")
    table = view.findChild(QTableView, "testsTable")
    assert table is not None
    table.setCurrentIndex(model.index(row, 1))
    details = view.findChild(QPlainTextEdit, "testDetails")
    assert details is not None
    text = details.toPlainText()
    assert text.startswith("greeting is json: failed in ")
    assert "--- expected (contains)\n+++ text\n" in text and "-hello there\n+hello world" in text


def test_run_selected_runs_only_those_rows(qtbot: QtBot, view: TestsView) -> None:
    model = view.model
    selection = view.table.selectionModel()
    selection.select(model.index(2, 0), QItemSelectionModel.SelectionFlag.Select
                     | QItemSelectionModel.SelectionFlag.Rows)
    assert view.run_selected_button.isEnabled()
    with qtbot.waitSignal(view.run_finished, timeout=RUN_MS) as blocker:
        view.run_selected_button.click()
    assert blocker.args == [1, 0]
    statuses = _statuses(view)
    assert statuses.pop("profile 42") == PASSED
    assert set(statuses.values()) == {NOT_RUN}


def test_run_the_selected_resources_tests(qtbot: QtBot, view: TestsView) -> None:
    view.set_current_resource("greeting")
    assert view.run_resource_button.isEnabled()
    with qtbot.waitSignal(view.run_finished, timeout=RUN_MS) as blocker:
        view.run_resource_button.click()
    assert blocker.args == [1, 1]
    ran = {name: status for name, status in _statuses(view).items() if status != NOT_RUN}
    assert ran == {"greeting says hello": PASSED, "greeting is json": FAILED}


def test_a_resource_with_errors_is_left_out_and_said_so(qtbot: QtBot, tmp_path: Path) -> None:
    project = _project()
    project.resources[0].uri = ""  # "greeting" now has no address: work in progress, not servable
    widget = TestsView(ProjectDocument(project))
    qtbot.addWidget(widget)
    with qtbot.waitSignal(widget.run_started, timeout=5_000):
        assert widget.run_names(["profile 42", "greeting says hello"])
    assert "greeting not served: fix the errors first" in widget.status_label.text()
    qtbot.waitUntil(lambda: not widget.is_running and widget.status_label.text().endswith("failed"), timeout=RUN_MS)
    statuses = _statuses(widget)
    assert statuses["profile 42"] == PASSED
    assert statuses["greeting says hello"] == FAILED  # nothing serves its URI now
    widget.shutdown()


def test_nothing_to_run_does_nothing(qtbot: QtBot) -> None:
    widget = TestsView(ProjectDocument(Project()))
    qtbot.addWidget(widget)
    assert widget.model.rowCount() == 0 and not widget.run_all_button.isEnabled()
    assert widget.run_all() is False and not widget.is_running


def test_runs_use_the_chosen_era(qtbot: QtBot) -> None:
    project = _project()
    project.tests = parse_tests([{"name": "unknown", "uri": "nowhere://x", "expect": {"error": -32002}}])
    widget = TestsView(ProjectDocument(project))
    qtbot.addWidget(widget)
    assert widget.era == "legacy"
    with qtbot.waitSignal(widget.run_finished, timeout=RUN_MS):
        assert widget.run_names(["unknown"])
    assert _statuses(widget)["unknown"] == PASSED  # handshake-era servers answer -32002
    widget.era_combo.setCurrentIndex(widget.era_combo.findData("2026-07-28"))
    with qtbot.waitSignal(widget.run_finished, timeout=RUN_MS):
        assert widget.run_names(["unknown"])
    row = widget.model.row_named("unknown")
    assert row is not None and row.status == FAILED and row.result is not None
    assert row.result.era == "2026-07-28"
    assert row.result.failures[0].startswith("error: expected code -32002, got -32602")
    widget.shutdown()


def test_run_on_save(qtbot: QtBot, tmp_path: Path) -> None:
    document = ProjectDocument()
    document.set_project(_project(), tmp_path / "checks.toml")
    widget = TestsView(document)
    qtbot.addWidget(widget)
    spec = document.spec("greeting")
    assert spec is not None
    edited = copy.deepcopy(spec)
    edited.title = "Greeting"
    document.update_resource("greeting", edited)
    assert document.is_dirty
    document.save()  # not ticked: nothing runs
    assert not widget.is_running and set(_statuses(widget).values()) == {NOT_RUN}
    widget.run_on_save_check.setChecked(True)
    edited = copy.deepcopy(edited)
    edited.title = "Greeting, again"
    document.update_resource("greeting", edited)
    with qtbot.waitSignal(widget.run_finished, timeout=RUN_MS) as blocker:
        document.save()
    assert blocker.args == [5, 2]
    widget.shutdown()


def test_name_and_uri_columns_fit_their_text_when_there_is_room(qtbot: QtBot) -> None:
    project = _project()
    long_name = "a knowledge base page whose name runs long"
    project.tests = [*project.tests, *parse_tests([
        {"name": long_name, "uri": "crm://customers/4242424242/profile", "expect": {"json": {"id": "4242424242"}}},
    ])]
    widget = TestsView(ProjectDocument(project))
    qtbot.addWidget(widget)
    widget.resize(1920, 800)
    widget.show()
    table = widget.findChild(QTableView, "testsTable")
    header = table.horizontalHeader()
    from studio.tests_page.tests_model import MESSAGE_COLUMN, NAME_COLUMN, URI_COLUMN

    # Wide: neither column cuts or wraps its longest text (at the old fixed 240/260 px the name wrapped).
    qtbot.waitUntil(lambda: header.sectionSize(NAME_COLUMN) >= table.sizeHintForColumn(NAME_COLUMN))
    assert header.sectionSize(URI_COLUMN) >= table.sizeHintForColumn(URI_COLUMN)
    # Narrow: each is capped at a third, so the message keeps room.
    widget.resize(700, 500)
    qtbot.waitUntil(lambda: header.sectionSize(NAME_COLUMN) <= widget.width() // 3)
    assert header.sectionSize(URI_COLUMN) <= widget.width() // 3
    assert header.sectionSize(MESSAGE_COLUMN) > 0
    widget.shutdown()
