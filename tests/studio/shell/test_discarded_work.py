"""Work the user chose to discard (on open or new) is never offered back as a recovery."""

from __future__ import annotations

from dataclasses import replace

from studio.shell.main_window import UnsavedChoice


def _edit_and_autosave(window) -> None:
    spec = window.document.spec("readme")
    window.document.update_resource("readme", replace(spec, title="Changed, then thrown away"))
    assert window.document.is_dirty
    assert window.autosaver.save_now() is not None  # what a crash would leave behind


def test_discarding_on_open_removes_the_autosave(make_window, project_file, tmp_path):
    offered: list[object] = []
    window = make_window(ask_unsaved=lambda label: UnsavedChoice.DISCARD, ask_restore=offered.append)
    window.open_project(project_file)
    _edit_and_autosave(window)
    other = tmp_path / "other.toml"
    other.write_text(project_file.read_text(encoding="utf-8"), encoding="utf-8")
    assert window.open_project(other)
    assert not window.recovery.path_for(project_file).exists()
    assert window.open_project(project_file)
    assert offered == []  # nothing to restore: the user threw that work away


def test_discarding_on_new_removes_the_autosave(make_window, project_file):
    offered: list[object] = []
    window = make_window(ask_unsaved=lambda label: UnsavedChoice.DISCARD, ask_restore=offered.append)
    window.open_project(project_file)
    _edit_and_autosave(window)
    assert window.new_project()
    assert not window.recovery.path_for(project_file).exists()
    assert window.open_project(project_file)
    assert offered == []


def test_discarding_untitled_work_removes_its_autosave(make_window, project_file):
    offered: list[object] = []
    window = make_window(ask_unsaved=lambda label: UnsavedChoice.DISCARD, ask_restore=offered.append)
    assert window.new_project()
    window.commands.add_resource.trigger()
    assert window.document.is_dirty and window.autosaver.save_now() is not None
    assert window.open_project(project_file)
    assert not window.recovery.path_for(None).exists()
    window.open_initial(project_file)
    assert offered == []
