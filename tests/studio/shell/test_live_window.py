"""Live data in the window: an edited watched file marks its resource in the catalogue with the change time."""

from __future__ import annotations

import shutil
from pathlib import Path

from studio.catalogue.catalogue_model import LAST_CHANGE_ROLE, WATCH_ROLE

WAIT_MS = 15_000
ROOT = Path(__file__).resolve().parents[3]


def _row_data(window, name: str, role: int):
    model = window.catalogue.template_model
    for row in range(model.rowCount()):
        index = model.index(row, 0)
        if index.data() == name:
            return index.data(role)
    raise AssertionError(f"{name!r} is not in the templates list")


def test_an_edited_watched_file_marks_its_template_with_the_change_time(make_window, qtbot, tmp_path: Path):
    shutil.copy(ROOT / "examples" / "notes.toml", tmp_path / "notes.toml")
    shutil.copytree(ROOT / "examples" / "notes", tmp_path / "notes")
    window = make_window()
    assert window.open_project(tmp_path / "notes.toml")
    assert _row_data(window, "note", WATCH_ROLE)
    with qtbot.waitSignal(window.controller.server_started, timeout=WAIT_MS):
        window.start_http(port=0)

    def edited() -> bool:
        (tmp_path / "notes" / "groceries.md").write_text("- bread\n- tea\n", encoding="utf-8")
        return bool(_row_data(window, "note", LAST_CHANGE_ROLE))

    qtbot.waitUntil(edited, timeout=WAIT_MS)
