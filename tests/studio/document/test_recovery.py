"""Recovery files: written only for unsaved changes, offered only when newer and different."""

import os
import time

from studio.document.recovery import Autosaver, RecoveryStore
from studio.preferences.settings import StudioSettings


def test_recovery_file_is_offered_when_newer_and_different(tmp_path):
    project = tmp_path / "p.toml"
    project.write_text("format = 1\n")
    store = RecoveryStore(tmp_path / "recovery")
    assert store.pending(project) is None
    store.write(project, "format = 1\nprelude = 'x = 1'\n")
    found = store.pending(project)
    assert found is not None and found.text == "format = 1\nprelude = 'x = 1'\n"
    assert found.project_path == project
    store.discard(project)
    assert store.pending(project) is None


def test_recovery_file_is_ignored_when_same_content_or_older(tmp_path):
    project = tmp_path / "p.toml"
    project.write_text("format = 1\n")
    store = RecoveryStore(tmp_path / "recovery")
    store.write(project, "format = 1\n")
    assert store.pending(project) is None
    path = store.write(project, "format = 1\n# changed\n")
    old = time.time() - 100
    os.utime(path, (old, old))
    assert store.pending(project) is None


def test_each_project_path_has_its_own_recovery_file(tmp_path):
    store = RecoveryStore(tmp_path)
    assert store.path_for(tmp_path / "a.toml") != store.path_for(tmp_path / "b.toml")
    assert store.path_for(None).name == "untitled.toml"
    store.write(None, "format = 1\n")
    assert store.pending(None).project_path is None


def test_autosaver_writes_only_dirty_changed_snapshots(qtbot, tmp_path):
    store = RecoveryStore(tmp_path)
    state = {"text": "format = 1\n", "dirty": False}
    saver = Autosaver(store, lambda: (None, state["text"], state["dirty"]), interval_s=0.05)
    assert saver.save_now() is None
    state["dirty"] = True
    assert saver.save_now() == store.path_for(None)
    assert saver.save_now() is None  # unchanged since the last autosave
    state["text"] += "# more\n"
    saver.start()
    with qtbot.waitSignal(saver.autosaved, timeout=2000):
        pass
    saver.stop()
    assert store.path_for(None).read_text().endswith("# more\n")


def test_settings_live_in_the_given_file(tmp_path):
    settings = StudioSettings(tmp_path / "s.ini")
    settings.add_recent_file(tmp_path / "a.toml")
    settings.add_recent_file(tmp_path / "b.toml")
    settings.add_recent_file(tmp_path / "a.toml")
    settings.set_last_project(tmp_path / "b.toml")
    settings.save_http_endpoint("127.0.0.1", 9999)
    settings.sync()
    again = StudioSettings(tmp_path / "s.ini")
    assert again.recent_files() == [str(tmp_path / "a.toml"), str(tmp_path / "b.toml")]
    assert again.last_project() == str(tmp_path / "b.toml")
    assert again.http_port() == 9999
    assert (tmp_path / "s.ini").exists()


def test_recovery_files_are_private_and_leave_no_temporaries(tmp_path):
    store = RecoveryStore(tmp_path / "recovery")
    target = store.write(tmp_path / "p.toml", "format = 1\n")
    store.write(tmp_path / "p.toml", "format = 1\n# again\n")
    assert os.stat(target).st_mode & 0o777 == 0o600
    assert sorted(p.name for p in (tmp_path / "recovery").iterdir()) == [target.name]
