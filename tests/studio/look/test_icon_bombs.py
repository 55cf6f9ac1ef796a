"""Issue 10 point 13 in the window: a project with icon bombs opens, the window keeps responding, memory stays small."""

from __future__ import annotations

import base64
import resource
from pathlib import Path

from PySide6.QtCore import QElapsedTimer, QTimer

from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project
from resources_qt.resource import Icon

BOMB_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000" viewBox="0 0 10 10">'
    '<rect width="10" height="10" fill="red"/></svg>'
)
READER = "def read(uri, params):\n    return 'x'\n"


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bomb_project(folder: Path) -> Path:
    (folder / "bomb.svg").write_text(BOMB_SVG, encoding="utf-8")
    inline_bomb = "data:image/svg+xml;base64," + base64.b64encode(BOMB_SVG.encode()).decode()
    resources = [
        ResourceSpec(name="svg_file", uri="bomb://svg", mime_type="text/plain", icons=[Icon("bomb.svg")],
                     reader=READER),
        ResourceSpec(name="svg_inline", uri="bomb://inline", mime_type="text/plain", icons=[Icon(inline_bomb)],
                     reader=READER),
        ResourceSpec(name="huge_data", uri="bomb://huge", mime_type="text/plain", reader=READER),
        ResourceSpec(name="outside", uri="bomb://outside", mime_type="text/plain", icons=[Icon("/etc/hostname")],
                     reader=READER),
    ]  # fmt: skip
    return save_project(Project(server=ServerSettings(name="Bombs"), resources=resources), folder / "bombs.toml")


def test_a_project_of_icon_bombs_opens_without_stalling_or_allocating(make_window, qtbot, tmp_path: Path):
    path = bomb_project(tmp_path)
    window = make_window()
    window.show()
    before = peak_rss_mb()
    # A heartbeat on the GUI loop: it only ticks while the window is processing events.
    beats: list[int] = []
    clock = QElapsedTimer()
    clock.start()
    heartbeat = QTimer(window)
    heartbeat.setInterval(10)
    heartbeat.timeout.connect(lambda: beats.append(clock.elapsed()))
    heartbeat.start()
    assert window.open_project(path, ask_to_save=False), window.errors
    # A 40 MB data: URI is over the project file size limit, so it arrives as a paste would: an edit.
    spec = window.document.spec("huge_data")
    spec.icons = [Icon("data:image/png;base64," + "A" * (40 * 1024 * 1024), "image/png")]
    window.document.update_resource("huge_data", spec)
    table = window.editor.form.icons_table
    for name, expected in (
        ("svg_file", "100000x100000"),
        ("svg_inline", "100000x100000"),
        ("huge_data", "over the 1.0 MB limit"),
        ("outside", "outside the project folder"),
    ):
        window.catalogue.select(name)
        qtbot.waitUntil(lambda expected=expected: expected in table.thumbnail_problem(0), timeout=20_000)
    ticks = len(beats)
    qtbot.waitUntil(lambda: len(beats) > ticks + 3, timeout=5_000)
    heartbeat.stop()
    # Nothing near the 40 GB of a 100000x100000 image, nor a decoded 40 MB icon per view.
    assert peak_rss_mb() - before < 600
    # What the user wrote is kept whole, though the cell shows it shortened.
    assert len(window.document.peek("huge_data").icons[0].src) > 40 * 1024 * 1024
    window.catalogue.select("huge_data")
    assert len(table.table.item(0, 1).text()) < 3000 and len(table.icons()[0].src) > 40 * 1024 * 1024
