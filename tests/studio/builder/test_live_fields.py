"""The builder's "Live data" group: watch files and interval, the loader's messages, nothing typed lost, saved."""

from __future__ import annotations

from PySide6.QtCore import Qt

from resources_qt.project import ProjectError, load_project, loads_project
from resources_qt.project.model import WatchSpec
from studio.builder.live_fields import interval_text
from studio.builder.resource_form import ResourceForm


def make(qtbot, document, name: str) -> ResourceForm:
    form = ResourceForm(document)
    qtbot.addWidget(form)
    form.set_resource(name)
    return form


def type_files(qtbot, form: ResourceForm, text: str) -> None:
    edit = form.live.files_edit
    edit.selectAll()
    edit.insertPlainText(text)
    form.commit()


def type_interval(qtbot, form: ResourceForm, text: str) -> None:
    edit = form.live.interval_edit
    edit.selectAll()
    if text:
        qtbot.keyClicks(edit, text)
    else:
        qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    edit.editingFinished.emit()


def loader_message(toml_watch: str) -> str:
    """What the project loader says about a `watch` value (the form must say the same)."""
    text = f'format = 1\n\n[[resources]]\nname = "r"\nuri = "a://b"\nwatch = {toml_watch}\nreader = "x"\n'
    try:
        loads_project(text)
    except ProjectError as exc:
        return str(exc)
    raise AssertionError(f"the loader took watch = {toml_watch}")


def test_the_group_is_folded_with_a_summary_and_unfolds(qtbot, document):
    form = make(qtbot, document, "readme")
    live = form.live
    assert not live.expanded and not live.files_edit.isVisibleTo(form)
    assert live.summary.text() == "not watched"
    live.toggle.click()
    assert live.expanded
    assert live.interval_edit.placeholderText() == "none"
    assert form.findChild(type(live.summary), "watchIntervalUnit").text() == "seconds"


def test_files_and_interval_reach_the_document_as_one_undo_step_and_save_as_watch(qtbot, document, tmp_path):
    form = make(qtbot, document, "notes")
    form.live.set_expanded(True)
    type_files(qtbot, form, "data/*.csv\n\n  notes/**/*.md  \n")
    type_interval(qtbot, form, "2.5")
    assert document.peek("notes").watch == WatchSpec(files=["data/*.csv", "notes/**/*.md"], interval=2.5)
    assert form.errors == [] and document.is_dirty
    assert form.live.summary.text() == "2 patterns, every 2.5 s"
    target = tmp_path / "live.toml"
    document.save(target)
    assert 'watch = { files = ["data/*.csv", "notes/**/*.md"], interval = 2.5 }' in target.read_text("utf-8")
    assert load_project(target).find("notes").watch == WatchSpec(files=["data/*.csv", "notes/**/*.md"], interval=2.5)
    type_interval(qtbot, form, "")
    type_files(qtbot, form, "")
    assert document.peek("notes").watch is None  # empty fields: no watch table at all
    while document.undo_stack.canUndo():
        document.undo_stack.undo()
    assert document.peek("notes").watch is None and form.live.interval_edit.text() == ""


def test_a_bad_interval_is_refused_in_the_loaders_words_and_stays_typed(qtbot, document):
    form = make(qtbot, document, "notes")
    type_interval(qtbot, form, "10")
    type_interval(qtbot, form, "0.05")
    expected = "watch.interval must be between 0.1 and 86400 s, not 0.05"
    assert expected in loader_message("{ interval = 0.05 }")
    assert form.errors == [expected]
    assert form.marked_fields() == [form.live.interval_edit] and form.live.expanded
    assert form.live.interval_edit.text() == "0.05"
    assert document.peek("notes").watch == WatchSpec(interval=10.0)  # the file stays loadable
    type_interval(qtbot, form, "ten")
    assert form.errors == ["watch.interval must be a number of seconds, not 'ten'"]
    type_interval(qtbot, form, "0.1")
    assert form.errors == [] and document.peek("notes").watch == WatchSpec(interval=0.1)


def test_a_pattern_leaving_the_project_is_refused_in_the_loaders_words(qtbot, document):
    form = make(qtbot, document, "readme")
    for pattern in ("../secrets/*", "/etc/passwd"):
        type_files(qtbot, form, f"data/*.csv\n{pattern}")
        message = form.errors[0]
        assert message in loader_message(f'{{ files = ["{pattern}"] }}')
        assert repr(pattern) in message and form.marked_fields() == [form.live.files_edit]
        assert form.live.files_edit.toPlainText() == f"data/*.csv\n{pattern}"
        assert document.peek("readme").watch is None
    type_files(qtbot, form, "data/*.csv")
    assert form.errors == [] and document.peek("readme").watch == WatchSpec(files=["data/*.csv"])


def test_refused_live_fields_survive_looking_at_another_resource(qtbot, document):
    form = make(qtbot, document, "readme")
    type_files(qtbot, form, "ok/*.txt\n../out")
    type_interval(qtbot, form, "0")
    form.set_resource("config")
    assert form.live.files_edit.toPlainText() == "" and form.errors == []
    form.set_resource("readme")
    assert form.live.files_edit.toPlainText() == "ok/*.txt\n../out"
    assert form.live.interval_edit.text() == "0"
    assert len(form.errors) == 2 and all(error.startswith("watch.") for error in form.errors)


def test_an_interval_is_shown_exactly_so_looking_never_rounds_it():
    assert interval_text(None) == "" and interval_text(30.0) == "30" and interval_text(0.1) == "0.1"
    assert float(interval_text(12.345678912)) == 12.345678912


def test_a_pattern_the_matcher_cannot_take_is_refused_in_the_builder_as_at_load(qtbot, document):
    # The builder once took `[z-a]` and saved a file that no longer loaded.
    form = make(qtbot, document, "readme")
    type_files(qtbot, form, "data/[z-a].csv")
    message = form.errors[0]
    assert "runs backwards" in message and message in loader_message('{ files = ["data/[z-a].csv"] }')
    assert form.live.files_edit.toPlainText() == "data/[z-a].csv" and document.peek("readme").watch is None
