"""ProjectDocument: undoable edits, merged typing, dirty state, signals, saving and errors."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtGui import QUndoCommand

from resources_qt.project import ProjectError, ServerSettings, load_project
from resources_qt.templates import compile_template
from studio.document.document import ProjectDocument, default_sample, suffixed_uri


def record(document: ProjectDocument) -> list[tuple]:
    events: list[tuple] = []
    document.project_reset.connect(lambda: events.append(("reset",)))
    document.resource_added.connect(lambda n: events.append(("added", n)))
    document.resource_removed.connect(lambda n: events.append(("removed", n)))
    document.resource_changed.connect(lambda a, b: events.append(("changed", a, b)))
    document.prelude_changed.connect(lambda: events.append(("prelude",)))
    document.settings_changed.connect(lambda: events.append(("settings",)))
    document.dirty_changed.connect(lambda d: events.append(("dirty", d)))
    document.path_changed.connect(lambda p: events.append(("path", p)))
    document.errors_changed.connect(lambda names: events.append(("errors", names)))
    return events


def test_add_resource_makes_a_valid_unique_starter_and_undo_removes_it(document):
    events = record(document)
    first = document.add_resource(template=False)
    second = document.add_resource(template=True)
    assert first != second and first.startswith("resource_")
    assert document.errors(first) == [] and document.errors(second) == []
    assert document.spec(second).is_template and document.spec(second).samples
    assert events[:3] == [("added", first), ("errors", [first]), ("dirty", True)]
    document.undo_stack.undo()
    document.undo_stack.undo()
    assert first not in document.names() and second not in document.names()
    assert events[-1] == ("dirty", False)


def test_update_merges_rapid_edits_into_one_undo_step(document):
    spec = document.spec("config")
    for title in ("C", "Co", "Con", "Config"):
        document.update_resource("config", replace(spec, title=title))
    assert document.peek("config").title == "Config"
    assert document.undo_stack.count() == 1
    document.undo_stack.undo()
    assert document.peek("config").title == ""
    document.undo_stack.redo()
    assert document.peek("config").title == "Config"


def test_rename_emits_old_and_new_name_and_undo_restores(document):
    events = record(document)
    document.update_resource("config", replace(document.spec("config"), name="settings"))
    assert ("changed", "config", "settings") in events
    assert document.peek("config") is None and document.peek("settings") is not None
    assert document.names().index("settings") == 1  # keeps its place
    document.undo_stack.undo()
    assert events[-3:] == [("changed", "settings", "config"), ("errors", ["config"]), ("dirty", False)]


def test_rename_to_a_taken_or_empty_name_is_refused(document):
    with pytest.raises(ValueError, match="already named 'readme'"):
        document.update_resource("config", replace(document.spec("config"), name="readme"))
    with pytest.raises(ValueError, match="must not be empty"):
        document.update_resource("config", replace(document.spec("config"), name=""))
    assert document.undo_stack.count() == 0


def test_spec_is_a_copy(document):
    spec = document.spec("notes")
    spec.samples.append("notes://x/1")
    spec.completions["folder"].append("zzz")
    assert document.peek("notes").samples == ["notes://work/42", "notes://home/7"]
    assert "zzz" not in document.peek("notes").completions["folder"]


def test_duplicate_and_remove_keep_position_through_undo(document):
    dup = document.duplicate_resource("readme")
    assert dup == "readme_copy"
    assert document.names() == ["readme", "readme_copy", "config", "notes"]
    assert document.peek(dup).uri != document.peek("readme").uri
    assert document.errors(dup) == []
    tdup = document.duplicate_resource("notes")
    assert document.peek(tdup).uri_template != document.peek("notes").uri_template
    assert document.errors(tdup) == []
    document.remove_resource("config")
    assert "config" not in document.names()
    document.undo_stack.undo()
    assert document.names() == ["readme", "readme_copy", "config", "notes", tdup]


def test_errors_report_validation_duplicates_and_snippet_line(document):
    events = record(document)
    spec = document.spec("config")
    document.update_resource("config", replace(spec, uri="docs://readme"))
    assert ("errors", ["config", "readme"]) in events  # readme gained a duplicate-address error
    assert any("also declared by 'readme'" in e for e in document.errors("config"))
    assert any("also declared by 'config'" in e for e in document.errors("readme"))
    document.update_resource("config", replace(spec, reader="def read(uri, params)\n    return 1\n"))
    assert document.form_errors("config") == []
    assert document.snippet_errors("config")[0].startswith("Reader snippet, line 1:")
    assert document.errors("readme") == []
    document.update_resource("config", replace(spec, uri="", uri_template="x://{a"))
    assert "Invalid URI template" in document.form_errors("config")[0]


def test_dirty_state_follows_undo_and_save(document, tmp_path: Path):
    events = record(document)
    assert not document.is_dirty
    document.set_prelude("import json\n")
    assert document.is_dirty
    target = tmp_path / "p.toml"
    document.save(target)
    assert not document.is_dirty and document.path == target
    assert ("path", str(target)) in events
    assert load_project(target).prelude == "import json\n"
    document.set_server_settings(ServerSettings(name="Other"))
    assert document.is_dirty and ("settings",) in events
    document.undo_stack.undo()
    assert not document.is_dirty and document.project.server.name == "Widget tests"


def test_set_project_dirty_flag_and_reset_signal(document, project):
    events = record(document)
    document.set_project(project.copy(), None, dirty=True)
    assert events[0] == ("reset",) and document.is_dirty
    document.new_project()
    assert document.names() == [] and not document.is_dirty and document.path is None


def test_load_failure_keeps_the_current_project(document, tmp_path: Path):
    bad = tmp_path / "bad.toml"
    bad.write_text("format = 1\n[[resources]]\nname = 3\n", encoding="utf-8")
    with pytest.raises(ProjectError):
        document.load(bad)
    assert "readme" in document.names()
    good = tmp_path / "good.toml"
    document.save(good)
    document.update_resource("readme", replace(document.spec("readme"), title="changed"))
    document.load(good)
    assert document.peek("readme").title == "Read me" and not document.is_dirty
    assert document.undo_stack.count() == 0


def test_invalid_specs_are_kept_and_saved(document, tmp_path: Path):
    extra = document.add_resource(template=False)
    document.update_resource(extra, replace(document.spec(extra), uri=""))
    assert document.form_errors(extra) == [f"Resource {extra!r} needs a URI or a URI template"]
    assert not document.is_valid(extra) and document.is_valid("readme")
    assert document.invalid_names() == [extra]
    target = document.save(tmp_path / "p.toml")
    # The work is on disk; the strict loader then names the resource to fix.
    with pytest.raises(ProjectError, match=extra):
        load_project(target)


def test_a_snippet_without_read_is_an_error(document):
    spec = document.spec("config")
    document.update_resource("config", replace(spec, reader="def reader(uri, params):\n    return 1\n"))
    assert document.snippet_errors("config") == [
        "Reader snippet, line 1: The snippet defines no read() function"
    ]
    document.update_resource("config", replace(spec, reader=""))
    assert document.snippet_errors("config") == ["The resource has no reader snippet"]


def test_incremental_duplicate_tracking_matches_a_fresh_document(document):
    rng = random.Random(7)
    addresses = ["docs://a", "docs://b", "docs://readme", "docs://config"]
    seen_duplicates = False
    for step in range(200):
        names = document.names()
        action = rng.choice(["edit", "edit", "add", "remove", "undo", "redo", "rename"])
        if action == "add" or not names:
            document.add_resource(template=False)
        elif action == "remove":
            document.remove_resource(rng.choice(names))
        elif action == "undo":
            document.undo_stack.undo()
        elif action == "redo":
            document.undo_stack.redo()
        elif action == "rename":
            name = rng.choice(names)
            new = f"n{step}"
            document.update_resource(name, replace(document.spec(name), name=new))
        else:
            name = rng.choice(names)
            spec = document.spec(name)
            if spec.is_template:
                continue
            document.update_resource(name, replace(spec, uri=rng.choice(addresses)))
        fresh = ProjectDocument(document.project.copy())
        errors = {n: sorted(document.errors(n)) for n in document.names()}
        assert errors == {n: sorted(fresh.errors(n)) for n in fresh.names()}, f"step {step}: {action}"
        seen_duplicates = seen_duplicates or any(errors.values())
    assert seen_duplicates  # the walk did exercise duplicate addresses


def test_typing_and_deleting_again_leaves_no_undo_step(document):
    spec = document.spec("config")
    document.update_resource("config", replace(spec, title="x"))
    document.update_resource("config", replace(spec, title=""))
    assert document.undo_stack.count() == 0
    assert not document.is_dirty


def test_retyping_the_saved_text_clears_dirty_even_as_a_new_edit(document, tmp_path: Path):
    document.save(tmp_path / "p.toml")
    events = record(document)
    spec = document.spec("readme")
    saved_reader = spec.reader
    document.update_resource("readme", replace(spec, reader=saved_reader + "# more\n"))
    assert document.is_dirty and events[-1] == ("dirty", True)
    # The editor's own undo pushes a new edit back to the saved text: not an undo-stack undo.
    document.undo_stack.push(QUndoCommand("unrelated marker"))  # ends merging into the last step
    document.update_resource("readme", replace(document.spec("readme"), reader=saved_reader))
    assert document.undo_stack.count() >= 2 and not document.undo_stack.isClean()
    assert not document.is_dirty and events[-1] == ("dirty", False)


def test_dirty_covers_prelude_settings_order_and_renames(document, tmp_path: Path):
    document.save(tmp_path / "p.toml")
    document.set_prelude("X = 1\n")
    assert document.is_dirty
    document.set_prelude("")
    assert not document.is_dirty
    document.set_server_settings(replace(document.project.server, workers=3))
    assert document.is_dirty
    document.set_server_settings(replace(document.project.server, workers="auto"))
    assert not document.is_dirty
    document.update_resource("config", replace(document.spec("config"), name="settings"))
    assert document.is_dirty
    document.update_resource("settings", replace(document.spec("settings"), name="config"))
    assert not document.is_dirty
    spec = document.spec("readme")
    document.remove_resource("readme")
    assert document.is_dirty
    document.undo_stack.undo()
    assert not document.is_dirty and document.spec("readme") == spec


def test_typing_into_one_setting_merges_into_one_undo_step(document):
    for name in ("S", "Su", "Sup"):
        document.set_server_settings(replace(document.project.server, name=name))
    document.set_server_settings(replace(document.project.server, workers=4))
    assert document.undo_stack.count() == 2
    document.undo_stack.undo()
    assert document.project.server.workers == "auto" and document.project.server.name == "Sup"
    document.undo_stack.undo()
    assert document.project.server.name == "Widget tests"


def test_new_project_serves_with_notifications_and_subscriptions(document):
    document.new_project()
    assert document.project.server.notifications and document.project.server.subscriptions
    assert not document.is_dirty


def test_generated_defaults_read_well(document):
    name = document.add_resource(template=True)
    spec = document.spec(name)
    assert spec.samples == [spec.uri_template.replace("{id}", "id-1")]
    assert default_sample(compile_template("weather://{city}/{day}")) == "weather://city-1/day-1"
    assert suffixed_uri("kb://docs/index.md", "-copy") == "kb://docs/index-copy.md"
    assert suffixed_uri("kb://docs/index.md?lang=en", "-copy") == "kb://docs/index-copy.md?lang=en"
    assert suffixed_uri("docs://readme", "-copy") == "docs://readme-copy"
    assert suffixed_uri("docs://v1.2", "-copy") == "docs://v1.2-copy"
    readme = document.spec("readme")
    document.update_resource("readme", replace(readme, uri="kb://index.md"))
    first = document.duplicate_resource("readme")
    second = document.duplicate_resource("readme")
    assert document.peek(first).uri == "kb://index-copy.md"
    assert document.peek(second).uri == "kb://index-copy-2.md"


def test_a_long_snippet_is_checked_outside_the_gui_thread_and_its_error_arrives_later(qtbot):
    from resources_qt.project import Project, ResourceSpec
    from studio.document.snippet_checks import BACKGROUND_CHECK_LINES

    body = "".join(f"    x{i} = {i}\n" for i in range(BACKGROUND_CHECK_LINES + 50))
    broken = "def read(uri, params):\n" + body + "    return x0 +\n"
    document = ProjectDocument(Project(resources=[ResourceSpec(name="long", uri="a://long", reader=broken)]))
    with qtbot.waitSignal(document.errors_changed, timeout=30_000) as blocker:
        assert document.snippet_errors("long") == []  # pending: the window never waits for the compile
    assert blocker.args == [["long"]]
    (message,) = document.snippet_errors("long")
    assert message.startswith(f"Reader snippet, line {BACKGROUND_CHECK_LINES + 52}")


def test_a_long_snippets_late_answer_checks_only_the_resources_that_have_it_again(qtbot):
    import sys

    from resources_qt.project import Project, ResourceSpec
    from studio.document.snippet_checks import BACKGROUND_CHECK_LINES, CACHE_SIZE

    body = "".join(f"    x{i} = {i}\n" for i in range(BACKGROUND_CHECK_LINES + 50))
    broken = "def read(uri, params):\n" + body + "    return x0 +\n"
    # More short snippets than the check cache holds: checking them again would compile each one.
    others = [ResourceSpec(name=f"r{i}", uri=f"a://r{i}", reader=f"def read(uri, params):\n    return {i}\n")
              for i in range(CACHE_SIZE + 50)]  # fmt: skip
    document = ProjectDocument(Project(resources=[ResourceSpec(name="long", uri="a://long", reader=broken), *others]))
    compiled: list[int] = []

    def count_compiles(_frame: object, event: str, arg: object) -> None:
        if event == "c_call" and arg is compile:
            compiled.append(1)

    try:
        with qtbot.waitSignal(document.errors_changed, timeout=30_000) as blocker:
            assert document.snippet_errors("long") == []  # pending
            for spec in others:
                assert document.snippet_errors(spec.name) == []
            sys.setprofile(count_compiles)  # from here on: the answer arriving, and what it checks again
    finally:
        sys.setprofile(None)
    assert blocker.args == [["long"]]
    assert len(compiled) <= 2, f"{len(compiled)} compiles when one long snippet's answer arrived"
    assert document.snippet_errors("long") and document.checked_snippet_errors("r0") == []


def test_tests_are_undoable_edits_that_mark_the_project_modified(qtbot):
    from resources_qt.errors import ValidationError
    from resources_qt.project import Project
    from resources_qt.testing.spec import parse_tests

    document = ProjectDocument(Project())
    (spec,) = parse_tests([{"name": "home", "uri": "a://home", "expect": {"contains": "hi"}}])
    with qtbot.waitSignal(document.tests_changed):
        document.add_test(spec)
    assert document.project.tests == [spec] and document.is_dirty
    with pytest.raises(ValidationError, match="home"):
        document.add_test(spec)
    document.undo_stack.undo()
    assert document.project.tests == [] and not document.is_dirty
    document.undo_stack.redo()
    document.remove_test("home")
    assert document.project.tests == [] and not document.is_dirty
    document.undo_stack.undo()
    assert document.project.tests == [spec]


HAND_WRITTEN = """\
# Support desk, written by hand.
format = 1

[server]
name = "Desk"   # what clients see

# The ticket, one per id.
[[resources]]
name = "ticket"
uri_template = "tickets://{id}"
title = "Ticket"   # shown in pickers
reader = '''
def read(uri, params):
    return params["id"]  # the id itself
'''
"""


def test_a_hand_written_project_keeps_its_comments_through_an_edit_and_save_in_the_studio(tmp_path: Path):
    path = tmp_path / "desk.toml"
    path.write_text(HAND_WRITTEN, encoding="utf-8")
    document = ProjectDocument()
    document.load(path)
    spec = document.spec("ticket")
    assert spec is not None
    document.update_resource("ticket", replace(spec, title="A ticket"))
    document.save()
    saved = path.read_text(encoding="utf-8")
    assert saved == HAND_WRITTEN.replace('title = "Ticket"', 'title = "A ticket"')
    assert load_project(path).resources[0].title == "A ticket"


def test_undo_commands_do_not_keep_their_document_alive(project):
    """The commands hold the document weakly: no cycle document -> stack -> command -> document to collect."""
    import gc
    import weakref

    document = ProjectDocument()
    document.set_project(project)
    name = document.add_resource(template=False)
    document.update_resource(name, replace(document.spec(name), description="edited"))
    document.remove_resource(name)
    assert document.undo_stack.count() >= 3
    alive = weakref.ref(document)
    gc.disable()  # only reference counting may free it: a cycle would keep it until a collection
    try:
        del document
        assert alive() is None
    finally:
        gc.enable()
