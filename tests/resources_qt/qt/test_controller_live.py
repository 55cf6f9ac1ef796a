"""The facade serves live data: instances in the listing, watched files reaching clients and the GUI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from helpers.live_project import write_notes_project
from mcp import Client
from test_controller import WAIT, ClientThread

from resources_qt.project import load_project
from resources_qt.qt import ServerController
from resources_qt.snippets import create_pool

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

BROKEN = '''
[[resources]]
name = "broken"
uri_template = "broken://{id}"
instances = "def instances():\\n    raise LookupError('no such table')\\n"
reader = "def read(uri, params):\\n    return 'x'\\n"
'''


def test_the_window_lists_instances_and_announces_watched_changes(qtbot: Any, tmp_path: Path) -> None:
    project = load_project(write_notes_project(tmp_path, extra=BROKEN))
    controller = ServerController(project=project)
    try:
        assert controller.watching() == {"note": "files", "index": "files"}
        with qtbot.waitSignal(controller.server_started, timeout=WAIT):
            controller.start_http("127.0.0.1", 0, "")

        async def script(client: Client) -> list[str]:
            await client.subscribe_resource("notes://a.md")
            listed = await client.list_resources(cursor=None, cache_mode="bypass")
            return [r.uri for r in listed.resources]

        with qtbot.waitSignal(controller.instances_failed, timeout=WAIT) as failed:
            client = ClientThread(controller.server, script)
            assert client.ready.wait(30), client.error
        assert client.error is None
        assert client.result == ["notes-index://all", "notes://a.md", "notes://b.md"]
        assert failed.args[0] == "broken" and "no such table" in failed.args[1]
        assert "no such table" in controller.instance_failures()["broken"]
        assert controller.wait_watching(10)  # the watcher is up before the write

        with qtbot.waitSignal(controller.data_changed, timeout=WAIT) as changed:
            (tmp_path / "notes" / "a.md").write_text("# A, edited\n")
        assert changed.args[0] == "note" and changed.args[2] == ["notes://a.md"]
        assert changed.args[3] == ["notes/a.md"]  # the changed file, relative to the project folder
        qtbot.waitUntil(
            lambda: any(isinstance(n, types.ResourceUpdatedNotification) for n in client.notifications),
            timeout=WAIT,
        )
        client.close()
        updated = [n.params.uri for n in client.notifications if isinstance(n, types.ResourceUpdatedNotification)]
        assert updated == ["notes://a.md"]
    finally:
        controller.shutdown()


def test_saving_the_project_elsewhere_moves_the_snippets_folder(qtbot: Any, tmp_path: Path) -> None:
    project = load_project(write_notes_project(tmp_path / "first"))
    pool = create_pool(project)
    controller = ServerController(project=project, pool=pool)
    try:
        assert pool.project_dir == str((tmp_path / "first").resolve())
        moved = project.copy()
        (tmp_path / "second").mkdir()
        moved.path = tmp_path / "second" / "notes.toml"
        controller.apply_project(moved)
        assert pool.project_dir == str((tmp_path / "second").resolve())
    finally:
        controller.shutdown()
