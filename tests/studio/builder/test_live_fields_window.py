"""The builder's Live data group in the window: refused values stay out of the summary, errors beside their field,
the last change of the watched data shown in the group."""

from __future__ import annotations

import itertools
import re
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QLabel

from resources_qt.project import ProjectError, loads_project
from studio.builder.live_fields import change_text
from studio.look.elided_label import ElidedLabel

WAIT_MS = 15_000
ROOT = Path(__file__).resolve().parents[3]

PROJECT = """format = 1

[[resources]]
name = "report"
uri = "reports://weekly.csv"
mime_type = "text/csv"
description = "Tickets closed this week"
samples = ["reports://weekly.csv"]
watch = { files = ["data/*.csv"], interval = 10 }
reader = '''
def read(uri, params):
    return "week,closed\\\\n"
'''
"""


def _loader_message(watch: str) -> str:
    try:
        loads_project(f'format = 1\n\n[[resources]]\nname = "r"\nuri = "a://b"\nwatch = {watch}\nreader = "x"\n')
    except ProjectError as exc:
        return str(exc)
    raise AssertionError(f"the loader took watch = {watch}")


def _open(make_window, qtbot, path: Path, name: str):
    window = make_window()
    assert window.open_project(path)
    window.resize(1100, 430)  # a short window: the builder's form scrolls
    window.show()
    qtbot.waitExposed(window)
    window.catalogue.select(name)
    window.editor.set_builder_visible(True)
    qtbot.waitUntil(lambda: window.editor.form.resource_name == name, timeout=WAIT_MS)
    return window


def _in_view(scroll, widget) -> bool:
    viewport = scroll.viewport()
    top_left = widget.mapTo(viewport, QPoint(0, 0))
    return widget.isVisible() and viewport.rect().contains(QRect(top_left, widget.size()))


def test_a_refused_interval_is_said_beside_its_field_in_view_and_never_in_the_summary(
    make_window, qtbot, tmp_path: Path
) -> None:
    path = tmp_path / "reports.toml"
    path.write_text(PROJECT, encoding="utf-8")
    window = _open(make_window, qtbot, path, "report")
    form, scroll = window.editor.form, window.editor.form_scroll
    live = form.live
    assert live.summary.text() == "data/*.csv, every 10 s"
    live.toggle.click()
    edit = live.interval_edit
    scroll.ensureWidgetVisible(edit)
    qtbot.mouseClick(edit, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(edit.hasFocus, timeout=WAIT_MS)
    edit.selectAll()
    qtbot.keyClicks(edit, "0.05")
    qtbot.keyClick(edit, Qt.Key.Key_Return)  # the interval is taken (or refused) now
    expected = "watch.interval must be between 0.1 and 86400 s, not 0.05"
    assert expected in _loader_message("{ interval = 0.05 }")
    error = form.findChild(QLabel, "watchIntervalError")
    assert error is live.interval_error
    assert error.text() == expected
    qtbot.waitUntil(lambda: _in_view(scroll, error) and _in_view(scroll, edit), timeout=WAIT_MS)
    assert not _in_view(scroll, form.error_label)  # the form's banner is scrolled away up there
    assert window.document.peek("report").watch.interval == 10.0
    edit.selectAll()
    qtbot.keyClicks(edit, "2.5")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert not error.isVisible() and live.summary.text() == "data/*.csv, every 2.5 s"
    assert window.document.peek("report").watch.interval == 2.5


def test_the_folded_summary_says_what_is_in_effect_never_a_refused_value(make_window, qtbot, tmp_path: Path) -> None:
    path = tmp_path / "reports.toml"
    path.write_text(PROJECT, encoding="utf-8")
    window = _open(make_window, qtbot, path, "report")
    live = window.editor.form.live
    live.toggle.click()
    edit = live.interval_edit
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, "0.05")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert window.editor.form.errors == ["watch.interval must be between 0.1 and 86400 s, not 0.05"]
    live.toggle.click()
    assert not live.expanded
    # The file keeps "every 10 s": that is what is watched, and what the folded group says.
    assert window.document.peek("report").watch.interval == 10.0
    assert live.summary.text() == "data/*.csv, every 10 s (interval refused)"
    assert "0.05" not in live.summary.toolTip()


def test_a_refused_pattern_is_said_under_the_files_box_and_the_summary_keeps_the_taken_ones(
    make_window, qtbot, tmp_path: Path
) -> None:
    path = tmp_path / "reports.toml"
    path.write_text(PROJECT, encoding="utf-8")
    window = _open(make_window, qtbot, path, "report")
    live = window.editor.form.live
    live.set_expanded(True)
    live.files_edit.setFocus()
    live.files_edit.selectAll()
    live.files_edit.insertPlainText("data/*.csv\n../secrets/*")
    window.editor.form.commit()
    message = live.files_error.text()
    assert message and message in _loader_message('{ files = ["../secrets/*"] }')
    assert live.files_error.isVisible() and not live.interval_error.isVisible()
    assert live.summary.text() == "data/*.csv, every 10 s (files refused)"


def test_the_last_change_of_watched_data_is_shown_in_the_group(make_window, qtbot, tmp_path: Path) -> None:
    shutil.copy(ROOT / "examples" / "notes.toml", tmp_path / "notes.toml")
    shutil.copytree(ROOT / "examples" / "notes", tmp_path / "notes")
    window = _open(make_window, qtbot, tmp_path / "notes.toml", "note")
    live = window.editor.form.live
    changed = window.editor.form.findChild(QLabel, "liveDataChanged")
    assert changed is live.changed_label and not changed.isVisible()
    assert not live.expanded  # folded: the header still says it
    with qtbot.waitSignal(window.controller.server_started, timeout=WAIT_MS):
        window.start_http(port=0)
    assert window.controller.wait_watching(10)

    def edited() -> bool:
        (tmp_path / "notes" / "groceries.md").write_text("- bread\n- tea\n", encoding="utf-8")
        return changed.isVisible()

    qtbot.waitUntil(edited, timeout=WAIT_MS)
    # No client subscribed: the line names the file, and no URI was sent `updated`.
    assert re.fullmatch(r"changed \d\d:\d\d:\d\d: notes/groceries\.md", changed.text()), changed.text()
    assert "No subscribed URI's content changed" in changed.toolTip()
    # Another resource's group shows its own (none), and the note's comes back with it.
    window.catalogue.select("note_index")
    qtbot.waitUntil(lambda: window.editor.form.resource_name == "note_index", timeout=WAIT_MS)
    assert not changed.isVisible()
    window.catalogue.select("note")
    qtbot.waitUntil(changed.isVisible, timeout=WAIT_MS)


TICKETS = """format = 1

[server]
name = "Tickets"
notifications = true
subscriptions = true

[[resources]]
name = "ticket"
uri_template = "tickets://{id}"
mime_type = "application/json"
samples = ["tickets://3"]
watch = { files = ["tickets/*.json"] }
reader = '''
def read(uri, params):
    return (PROJECT_DIR / "tickets" / f"{params['id']}.json").read_text()
'''
"""


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # the legacy era subscribes
def test_a_watched_file_change_names_the_file_and_the_uri_it_updated(
    make_window, connect, qtbot, tmp_path: Path
) -> None:
    (tmp_path / "tickets").mkdir()
    ticket = tmp_path / "tickets" / "3.json"
    ticket.write_text('{"id": 3, "status": "open"}', encoding="utf-8")
    path = tmp_path / "tickets.toml"
    path.write_text(TICKETS, encoding="utf-8")
    window = _open(make_window, qtbot, path, "ticket")
    changed = window.editor.form.live.changed_label
    with qtbot.waitSignal(window.controller.server_started, timeout=WAIT_MS):
        window.start_http(port=0)
    assert window.controller.wait_watching(10)
    client = connect(window.controller.url)
    subscribed = client.submit(lambda c: c.subscribe_resource("tickets://3"))
    qtbot.waitUntil(subscribed.done, timeout=WAIT_MS)
    subscribed.result()
    versions = itertools.count(1)
    wanted = "tickets/3.json (tickets://3 updated)"

    def edited() -> bool:
        # New content each time: only changed content is announced, so a rewrite after a missed one must differ.
        ticket.write_text(f'{{"id": 3, "status": "closed", "version": {next(versions)}}}', encoding="utf-8")
        return changed.isVisible() and changed.text().endswith(wanted)

    qtbot.waitUntil(edited, timeout=WAIT_MS)
    assert re.fullmatch(r"changed \d\d:\d\d:\d\d: " + re.escape(wanted), changed.text()), changed.text()
    # In the builder itself, on a line of its own (folded or not): the file is in what is drawn, not only in a
    # tooltip; the builder's 340 px may cut the rest of the line, which the tooltip then holds whole.
    assert isinstance(changed, ElidedLabel) and not window.editor.form.live.expanded
    assert "tickets/3.json" in changed.shown_text()
    assert changed.width() <= window.editor.form.width()
    tip = changed.toolTip()
    assert tip.startswith(changed.text()) and "tickets/3.json" in tip and "tickets://3" in tip


def test_a_long_change_line_is_cut_to_fit_with_the_whole_line_in_its_tooltip(
    make_window, qtbot, tmp_path: Path
) -> None:
    path = tmp_path / "reports.toml"
    path.write_text(PROJECT, encoding="utf-8")
    window = _open(make_window, qtbot, path, "report")
    live = window.editor.form.live
    paths = [f"data/{'quarterly-' * 8}{n}.csv" for n in range(30)]
    live.note_data_changed("report", 1_700_000_000.0, ["reports://weekly.csv"], paths)
    changed = live.changed_label
    qtbot.waitUntil(changed.isVisible, timeout=WAIT_MS)
    line = change_text(1_700_000_000.0, ["reports://weekly.csv"], paths)
    assert changed.text() == line and line.endswith(f"{paths[0]} +29 more (reports://weekly.csv updated)")
    assert changed.width() <= window.editor.form.width()  # never widens the builder: the text is cut
    assert changed.is_elided() and changed.shown_text().endswith("…")
    tip = changed.toolTip()
    assert tip.startswith(line) and paths[19] in tip and "… and 10 more" in tip and paths[20] not in tip


def test_a_poll_says_poll_where_a_watched_change_names_its_files() -> None:
    when = 1_700_000_000.0
    assert change_text(when, ["reports://weekly.csv"], []).endswith(": poll (reports://weekly.csv updated)")
    assert change_text(when, [], ["data/a.csv", "data/b.csv"]).endswith(": data/a.csv +1 more")
    assert change_text(when, ["a://1", "a://2", "a://3"], ["x"]).endswith(": x (a://1 +2 more updated)")
