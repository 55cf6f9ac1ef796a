"""Import into project: the remote entry joins the project read from a declared upstream, and `serve` proxies it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import mcp_types as types
from helpers.remote_servers import script_command, serve_http
from mcp import Client

from resources_qt.project import load_project

WAIT_MS = 30_000
GREETING = "remote://greeting"
USERS = "remote://users/{name}"


def test_import_into_project_then_serve_reads_through_the_upstream(qtbot, make_window, tmp_path: Path) -> None:
    window = make_window()
    window.new_project()
    window.connect_remote(script_command("sdk"))
    page = window.remote.page
    qtbot.waitUntil(lambda: page.catalogue.model().rowCount() == 3, timeout=WAIT_MS)

    assert window.import_remote(GREETING) == "greeting"
    assert window.import_remote(USERS) == "user"
    project = window.document.project
    assert [(u.name, u.command) for u in project.upstreams] == [("remote-sdk", script_command("sdk"))]
    greeting, user = window.document.spec("greeting"), window.document.spec("user")
    assert greeting is not None and user is not None
    assert (greeting.upstream, greeting.title, greeting.reader) == ("remote-sdk", "The greeting", "")
    assert (user.uri_template, user.upstream) == (USERS, "remote-sdk")
    assert window.import_remote("remote://not-listed") is None
    assert "not in the server's catalogue" in page.status_label.text()

    # One undo step takes the import back, upstream and all (the second import kept the first's upstream).
    window.document.undo_stack.undo()
    assert window.document.spec("user") is None and len(window.document.project.upstreams) == 1
    window.document.undo_stack.redo()

    path = tmp_path / "imported.toml"
    assert window.save_as(path)
    saved = load_project(path)
    assert saved.upstreams == project.upstreams and saved.find("greeting") == greeting

    async def read_through(url: str) -> tuple[str, str]:
        async with Client(url, mode="2026-07-28", read_timeout_seconds=30, cache=None) as client:
            direct = await client.read_resource(GREETING, cache_mode="bypass")
            templated = await client.read_resource("remote://users/bob", cache_mode="bypass")
        first, second = direct.contents[0], templated.contents[0]
        assert isinstance(first, types.TextResourceContents) and isinstance(second, types.TextResourceContents)
        return first.text, second.text

    with serve_http(path) as served:
        assert asyncio.run(read_through(served.url)) == ("hello from the SDK server", "user bob")


def test_an_imported_resource_reads_through_its_upstream_in_the_window(qtbot, make_window) -> None:
    """The window's own preview and server proxy an import at once, without a save or a restart."""
    window = make_window()
    window.new_project()
    window.connect_remote(script_command("sdk"))
    page = window.remote.page
    qtbot.waitUntil(lambda: page.catalogue.model().rowCount() == 3, timeout=WAIT_MS)
    assert window.import_remote(GREETING) == "greeting"
    assert window.import_remote(USERS) == "user"
    outcomes = []
    window.controller.preview_finished.connect(outcomes.append)
    for uri, expected in ((GREETING, "hello from the SDK server"), ("remote://users/bob", "user bob")):
        outcomes.clear()
        window.controller.preview(uri)
        qtbot.waitUntil(lambda: bool(outcomes), timeout=WAIT_MS)
        assert outcomes[0].error_message is None, outcomes[0].error_message
        assert outcomes[0].contents[0].text == expected
