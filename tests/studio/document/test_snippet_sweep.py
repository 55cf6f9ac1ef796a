"""SnippetSweep: every resource's snippets checked a slice per event-loop turn; the status count follows it."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from resources_qt.project import Project, ResourceSpec
from studio.document.document import ProjectDocument
from studio.document.snippet_sweep import SnippetSweep
from studio.serving.server_sync import ServerSync

GOOD = "def read(uri, params):\n    return 'ok'\n"
BROKEN = "def read(uri, params)\n    return 'no colon'\n"


def _document(count: int, *, broken: set[int]) -> ProjectDocument:
    specs = [ResourceSpec(name=f"r{i}", uri=f"sweep://r{i}", reader=BROKEN if i in broken else GOOD)
             for i in range(count)]  # fmt: skip
    return ProjectDocument(Project(resources=specs))


def test_the_sweep_checks_a_slice_per_turn_until_the_cache_holds_every_resource(qtbot):
    document = _document(6, broken={1, 4})
    sync = ServerSync(document, None)
    sweep = SnippetSweep(document, slice_ms=0)  # the smallest slice: one resource per turn
    turns: list[int] = []
    sweep.swept.connect(lambda: turns.append(len([n for n in document.names()
                                                  if document.checked_snippet_errors(n) is not None])))
    assert sync.unserved_and_failing() == ([], [])  # nothing compiled yet
    assert all(document.checked_snippet_errors(name) is None for name in document.names())
    assert sweep.start() and sweep.running
    QCoreApplication.processEvents()  # one turn of the event loop: one slice
    checked = [name for name in document.names() if document.checked_snippet_errors(name) is not None]
    assert 1 <= len(checked) < 6, "the first slice checked everything at once"
    with qtbot.waitSignal(sweep.swept, timeout=5000):
        pass
    assert turns == [6] and not sweep.running
    assert sync.unserved_and_failing() == ([], ["r1", "r4"])
    assert sync.failing() == ["r1", "r4"]
    assert document.checked_snippet_errors("r1") == document.snippet_errors("r1") != []
    assert not sweep.start()  # all checked: nothing to do, no second `swept`


def test_an_edit_during_the_sweep_is_checked_and_a_removed_resource_is_skipped(qtbot):
    document = _document(5, broken=set())
    sweep = SnippetSweep(document, slice_ms=0)
    assert sweep.start()
    document.update_resource("r3", ResourceSpec(name="r3", uri="sweep://r3", reader=BROKEN))
    document.remove_resource("r4")
    with qtbot.waitSignal(sweep.swept, timeout=5000):
        pass
    assert document.checked_snippet_errors("r3")  # checked as it is now: broken
    assert document.checked_snippet_errors("r4") is None
    assert ServerSync(document, None).unserved_and_failing() == ([], ["r3"])


def test_the_window_counts_failing_snippets_once_the_sweep_is_through(make_window, qtbot, tmp_path):
    document = _document(40, broken={7, 30})
    path = tmp_path / "sweep.toml"
    document.save(path)
    window = make_window()
    assert window.open_project(path, ask_to_save=False)
    qtbot.waitUntil(lambda: window.errors_label.text() == "2 with snippet errors (failing)", timeout=15_000)
    assert not window.snippet_sweep.running
