"""Nothing the user wrote is lost: invalid resources save, reopen and recover as written."""

from __future__ import annotations

from PySide6.QtWidgets import QLineEdit

from resources_qt.project import ProjectError, load_project
from studio.document.recovery import RecoveryStore
from studio.shell.main_window import UnsavedChoice


def test_an_invalid_resource_saves_and_reopens_marked(make_window, project_file, tmp_path):
    window = make_window()
    window.open_project(project_file)
    spec = window.document.spec("readme")
    spec.uri = ""
    window.document.update_resource("readme", spec)
    assert window.document.errors("readme")
    target = tmp_path / "wip.toml"
    assert window.save_as(target)
    assert "readme" in window.statusBar().currentMessage()
    try:
        load_project(target)
    except ProjectError as exc:
        assert "readme" in exc.message
    else:
        raise AssertionError("serve must still refuse the file")

    again = make_window()
    assert again.open_project(target)
    assert again.errors == []
    assert again.document.spec("readme").uri == ""
    assert again.document.errors("readme")


def test_invalid_unsaved_work_is_recovered(make_window, project_file, tmp_path):
    crashed = make_window()
    crashed.open_project(project_file)
    spec = crashed.document.spec("readme")
    spec.uri, spec.uri_template = "", "docs://{unclosed"
    spec.title = "kept"
    crashed.document.update_resource("readme", spec)
    assert crashed.document.errors("readme")
    path, text, unsaved = crashed.files.snapshot()
    assert path == project_file and unsaved
    RecoveryStore(tmp_path / "recovery").write(path, text)

    restored = make_window(ask_restore=lambda candidate: True)
    assert restored.open_project(project_file)
    assert restored.errors == []
    assert restored.document.spec("readme").title == "kept"
    assert restored.document.spec("readme").uri_template == "docs://{unclosed"
    assert restored.document.errors("readme")


def test_typing_just_before_closing_still_asks_to_save(make_window, project_file, qtbot):
    asked: list[str] = []

    def ask(label: str) -> UnsavedChoice:
        asked.append(label)
        return UnsavedChoice.CANCEL

    window = make_window(ask_unsaved=ask)
    window.open_project(project_file)
    window.show()
    window.catalogue.select("readme")
    title = window.findChild(QLineEdit, "titleEdit") or window.findChild(QLineEdit, "nameEdit")
    assert title is not None
    qtbot.keyClicks(title, "x")
    assert not window.close()
    assert asked == ["desk.toml"]
