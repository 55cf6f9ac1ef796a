"""The Tests page on authoring slips: held-back readers named, placeholders, orphan snapshots, catalogue marks."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.resource_tests import CHECKS_PROJECT
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton
from pytestqt.qtbot import QtBot

from resources_qt.project import loads_project
from resources_qt.templates import compile_template
from resources_qt.testing.servable import placeholder_sample
from resources_qt.testing.snapshots import safe_file_name
from studio.catalogue.catalogue_model import TESTS_FAILING_ROLE
from studio.document.document import ProjectDocument, default_sample
from studio.tests_page.tests_model import FAILED, PASSED
from studio.tests_page.tests_view import TestsView

RUN_MS = 60_000

BROKEN_READER = """
[[resources]]
name = "customer_profile"
uri_template = "crm://profiles/{id}"
mime_type = "application/json"
samples = ["crm://profiles/42"]
reader = '''
def read(uri, params):
    profile = {"id": params["id"]
    return profile
'''

[[tests]]
name = "profile 42"
uri = "crm://profiles/42"
expect = { resource = "customer_profile", json = { id = "42" } }
"""

FAILING_SAMPLE = """
[[resources]]
name = "flaky"
uri = "flaky://one"
mime_type = "text/plain"
reader = '''
def read(uri, params):
    raise RuntimeError("the disk is on fire")
'''
"""


def _view(qtbot: QtBot, document: ProjectDocument) -> TestsView:
    view = TestsView(document)
    qtbot.addWidget(view)
    view.show()
    return view


def _run_all(qtbot: QtBot, view: TestsView) -> tuple[int, int]:
    with qtbot.waitSignal(view.run_finished, timeout=RUN_MS) as finished:
        view.run_all_button.click()
    passed, failed = finished.args
    return passed, failed


def test_a_resource_held_back_by_its_reader_says_it_does_not_compile_and_where(qtbot: QtBot) -> None:
    view = _view(qtbot, ProjectDocument(loads_project(CHECKS_PROJECT + BROKEN_READER)))
    try:
        names = [row.name for row in view.model.rows()]
        _run_all(qtbot, view)
        row = view.model.row_named("profile 42")
        assert row is not None and row.status == FAILED and row.result is not None
        assert row.result.failures == (
            "not run: 'customer_profile' is not served: its reader does not compile: "
            "SyntaxError: '{' was never closed (line 2, column 15)",
        )
        assert "sample: crm://profiles/42" not in names  # the declared test of that URI replaces it
        assert view.model.counts()[1] == 1
        view.table.selectRow(names.index("profile 42"))
        assert "does not compile: SyntaxError: '{' was never closed (line 2, column 15)" in view.details.toPlainText()
        assert "got no resource" not in view.details.toPlainText()
        assert view.model.failing_resources() == ["customer_profile"]
    finally:
        view.shutdown()


def test_a_new_templates_placeholder_sample_is_not_a_test_until_it_is_edited(qtbot: QtBot) -> None:
    document = ProjectDocument(loads_project(CHECKS_PROJECT))
    view = _view(qtbot, document)
    name = document.add_resource(template=True)
    spec = document.spec(name)
    assert spec is not None and len(spec.samples) == 1
    placeholder = spec.samples[0]
    assert placeholder == placeholder_sample(compile_template(spec.uri_template))
    assert f"sample: {placeholder}" not in [row.name for row in view.model.rows()]
    spec.samples = [placeholder.replace("id-1", "17")]
    document.update_resource(name, spec)
    assert f"sample: {spec.samples[0]}" in [row.name for row in view.model.rows()]


@pytest.mark.parametrize("template", ["example://resource/{id}", "notes://{+path}", "shop://{order}/lines/{line}",
                                      "search://q{?term,page}", "files://{/dir*}"])
def test_the_placeholder_is_the_sample_the_studio_starts_a_template_with(template: str) -> None:
    compiled = compile_template(template)
    assert placeholder_sample(compiled) == default_sample(compiled)


def test_snapshot_files_whose_test_is_gone_are_shown_and_deleted_once_confirmed(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = tmp_path / "checks.toml"
    path.write_text(CHECKS_PROJECT + '\n[[tests]]\nname = "kept"\nuri = "text://greeting"\n'
                    'expect = { snapshot = true }\n', encoding="utf-8")
    snapshots = tmp_path / "checks.snapshots"
    snapshots.mkdir()
    kept = snapshots / safe_file_name("kept")
    gone = snapshots / safe_file_name("a test renamed since")
    for file in (kept, gone):
        file.write_text("=== content 1 of 1: text://greeting (text/plain)\nhello world\n", encoding="utf-8")
    (snapshots / "notes.txt").write_text("Reviewed on Monday\n", encoding="utf-8")  # not a snapshot
    document = ProjectDocument()
    document.set_project(loads_project(path.read_text("utf-8")), path)
    view = _view(qtbot, document)
    label = view.findChild(QLabel, "orphanSnapshotsLabel")
    button = view.findChild(QPushButton, "deleteOrphanSnapshotsButton")
    assert label is view.orphans_label and button is view.delete_orphans_button
    assert label.isVisible() and button.isVisible()
    assert label.text() == f"1 snapshot file in checks.snapshots has no test: {gone.name}"
    asked: list[list[Path]] = []
    view.ask_delete_snapshots = lambda paths: asked.append(paths) is not None and False  # "No"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert asked == [[gone]] and gone.exists() and label.isVisible()
    view.ask_delete_snapshots = lambda paths: asked.append(paths) is None  # "Yes"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert not gone.exists() and kept.exists() and (snapshots / "notes.txt").exists()
    assert not label.isVisible() and not button.isVisible() and view.orphan_snapshots == []
    # Removing the test leaves its file behind: the page says so at once.
    document.tests_changed.connect(view.refresh)  # as the window's pages do
    document.remove_test("kept")
    assert view.orphan_snapshots == [kept] and label.isVisible()
    view.shutdown()


def test_resources_with_failing_tests_are_marked_in_the_catalogue(make_window, qtbot: QtBot, tmp_path: Path) -> None:
    path = tmp_path / "checks.toml"
    path.write_text(CHECKS_PROJECT + FAILING_SAMPLE, encoding="utf-8")
    window = make_window()
    assert window.open_project(path)
    window.show_page("tests")
    tests = window.tests_view
    model = window.catalogue.resource_model
    row = model.row_of("flaky")
    flaky, greeting = model.index(row, 0), model.index(model.row_of("greeting"), 0)
    assert flaky.data(TESTS_FAILING_ROLE) is False
    with qtbot.waitSignal(tests.run_finished, timeout=RUN_MS):
        assert tests.run_all()
    assert flaky.data(TESTS_FAILING_ROLE) is True and greeting.data(TESTS_FAILING_ROLE) is False
    assert "A test of this resource failed in the last run" in flaky.data(Qt.ItemDataRole.ToolTipRole)
    assert flaky.data(Qt.ItemDataRole.ForegroundRole) is not None
    assert greeting.data(Qt.ItemDataRole.ForegroundRole) is None
    spec = window.document.spec("flaky")
    assert spec is not None
    spec.reader = "def read(uri, params):\n    return 'fine'\n"
    window.document.update_resource("flaky", spec)
    with qtbot.waitSignal(tests.run_finished, timeout=RUN_MS):
        assert tests.run_all()
    statuses = {row.name: row.status for row in tests.model.rows()}
    assert statuses["sample: flaky://one"] == PASSED
    assert flaky.data(TESTS_FAILING_ROLE) is False
