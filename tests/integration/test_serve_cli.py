"""`resource-studio serve`: real processes, real stdio and HTTP, --watch reloads, one-line errors."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from engine_support import MODES, connect, wait_for
from mcp import StdioServerParameters

from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _project(greeting: str = "hello", extra: bool = False) -> Project:
    resources = [
        ResourceSpec(name="greeting", uri="demo://greeting", mime_type="text/plain",
                     reader=f"def read(uri, params):\n    return {greeting!r}\n"),
        ResourceSpec(name="item", uri_template="demo://items/{id}", mime_type="text/plain",
                     reader="def read(uri, params):\n    return 'item ' + params['id']\n"),
    ]
    if extra:
        resources.append(
            ResourceSpec(name="extra", uri="demo://extra", reader="def read(uri, params):\n    return 'x'\n")
        )
    return Project(server=ServerSettings(name="cli", version="3", notifications=True, subscriptions=True, workers=1),
                   resources=resources)


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "studio", "serve", *args], capture_output=True, text=True, check=False,
                          env=ENV, cwd=ROOT, timeout=60)


def test_missing_and_bad_projects_are_one_line_errors(tmp_path: Path) -> None:
    missing = _serve(str(tmp_path / "nope.toml"), "--stdio")
    bad_file = tmp_path / "bad.toml"
    bad_file.write_text("[server\nname = 1\n", encoding="utf-8")
    bad = _serve(str(bad_file), "--http", "0")
    for result in (missing, bad):
        assert result.returncode == 2 and result.stdout == ""
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("resource-studio serve: error: ")
    assert "no such project file" in missing.stderr
    assert "bad.toml:1" in bad.stderr


def test_busy_port_and_public_bind_without_token(tmp_path: Path) -> None:
    path = save_project(_project(), tmp_path / "p.toml")
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen(1)
        busy = _serve(str(path), "--http", f"127.0.0.1:{blocker.getsockname()[1]}")
    public = _serve(str(path), "--http", "0.0.0.0:0")
    usage = _serve(str(path), "--http", "host:notaport")
    assert busy.returncode == 2 and "already in use" in busy.stderr
    assert public.returncode == 2 and "without a token" in public.stderr
    assert usage.returncode == 2 and "[HOST:]PORT" in usage.stderr


def _stdio(path: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "studio", "serve", str(path), "--stdio", *extra],
                                 env={"PYTHONPATH": ENV["PYTHONPATH"]}, cwd=ROOT)


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_serves_the_project(tmp_path: Path, mode: str) -> None:
    path = save_project(_project(), tmp_path / "p.toml")
    async with connect(_stdio(path), mode) as client:
        listed = await client.list_resources(cursor=None, cache_mode="bypass")
        read = await client.read_resource("demo://items/9", cache_mode="bypass")
    assert [r.uri for r in listed.resources] == ["demo://greeting"]
    assert read.contents[0].text == "item 9"


async def test_watch_announces_changed_content_and_catalogue(tmp_path: Path) -> None:
    path = save_project(_project(), tmp_path / "p.toml")
    seen: list[Any] = []

    async def handler(message: Any) -> None:
        if isinstance(message, (types.ResourceUpdatedNotification, types.ResourceListChangedNotification)):
            seen.append(message)

    async with connect(_stdio(path, "--watch"), "legacy", message_handler=handler) as client:
        await client.subscribe_resource("demo://greeting")
        save_project(_project("bonjour"), path)
        await wait_for(lambda: any(isinstance(m, types.ResourceUpdatedNotification) for m in seen))
        assert (await client.read_resource("demo://greeting", cache_mode="bypass")).contents[0].text == "bonjour"
        save_project(_project("bonjour", extra=True), path)
        await wait_for(lambda: any(isinstance(m, types.ResourceListChangedNotification) for m in seen))
        listed = await client.list_resources(cursor=None, cache_mode="bypass")
    assert [r.uri for r in listed.resources] == ["demo://greeting", "demo://extra"]
    updated = [m.params.uri for m in seen if isinstance(m, types.ResourceUpdatedNotification)]
    assert updated == ["demo://greeting"]


async def test_http_serve_until_terminated(tmp_path: Path) -> None:
    path = save_project(_project(), tmp_path / "p.toml")
    command = [sys.executable, "-m", "studio", "serve", str(path), "--http", "127.0.0.1:0", "--token", "tok"]
    # It must outlive the client; only its first stderr line is read, before any client runs.
    process = subprocess.Popen(
        command, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=ENV, cwd=ROOT
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.search(r"(http://\S+/mcp)", line)
        assert found, line
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        async with (
            httpx2.AsyncClient(headers={"Authorization": "Bearer tok"}, timeout=10) as http,
            connect(streamable_http_client(found.group(1), http_client=http), "2026-07-28") as client,
        ):
            read = await client.read_resource("demo://greeting", cache_mode="bypass")
        assert read.contents[0].text == "hello"
    finally:
        process.terminate()
        code = process.wait(30)
    assert code == 0
    assert process.stdout is not None and process.stdout.read() == ""
    process.stdout.close()
    assert process.stderr is not None
    process.stderr.close()


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_the_first_signal_ends_serve_however_early_it_comes(tmp_path: Path, number: int) -> None:
    # Sent the moment the address is printed, while start-up still runs weakref callbacks and finalizers: a
    # KeyboardInterrupt raised there used to be swallowed ("Exception ignored in ...") and serve kept going.
    path = save_project(_project(), tmp_path / "p.toml")
    command = [sys.executable, "-m", "studio", "serve", str(path), "--http", "127.0.0.1:0", "--stdio"]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=ENV, cwd=ROOT)  # fmt: skip
    assert process.stderr is not None and process.stdin is not None and process.stdout is not None
    try:
        assert "Serving" in process.stderr.readline()
        process.send_signal(number)
        code = process.wait(20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            stream.close()
    assert code == 0


async def test_watch_reaches_modern_listen_streams_over_stdio(tmp_path: Path) -> None:
    path = save_project(_project(), tmp_path / "p.toml")
    async with (
        connect(_stdio(path, "--watch"), "2026-07-28") as client,
        client.listen(resources_list_changed=True, resource_subscriptions=["demo://greeting"]) as sub,
    ):
        save_project(_project("hallo"), path)
        events = []
        async for event in sub:
            events.append(event)
            if len(events) == 1:
                save_project(_project("hallo", extra=True), path)
            else:
                break
    assert [type(e).__name__ for e in events] == ["ResourceUpdated", "ResourcesListChanged"]
    assert events[0].uri == "demo://greeting"


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_serve_keeps_what_snippets_print_in_a_file(tmp_path: Path, mode: str) -> None:
    chatty = ResourceSpec(name="chatty", uri="demo://chatty", mime_type="text/plain",
                          reader="import sys\ndef read(uri, params):\n    print('one')\n"
                                 "    print('\\x1b[2Jtwo', file=sys.stderr)\n    return 'said'\n")
    path = save_project(Project(server=ServerSettings(name="cli", workers=1), resources=[chatty]), tmp_path / "p.toml")
    log = tmp_path / "snippets.log"
    async with connect(_stdio(path, "--snippet-output", str(log)), mode) as client:
        read = await client.read_resource("demo://chatty", cache_mode="bypass")
    assert read.contents[0].text == "said"
    lines = log.read_text(encoding="utf-8").splitlines()
    assert lines == ["[chatty demo://chatty] stdout: one", "[chatty demo://chatty] stderr: \\x1b[2Jtwo"]


def test_snippet_output_to_an_unwritable_file_is_a_one_line_error(tmp_path: Path) -> None:
    path = save_project(_project(), tmp_path / "p.toml")
    done = _serve(str(path), "--stdio", "--snippet-output", str(tmp_path / "missing" / "dir" / "log"))
    assert done.returncode == 2 and "--snippet-output" in done.stderr and "Traceback" not in done.stderr


async def test_serve_runs_live_data_instances_listed_and_watched_files_announced(tmp_path: Path) -> None:
    examples = ROOT / "examples"
    shutil.copy(examples / "notes.toml", tmp_path / "notes.toml")
    shutil.copytree(examples / "notes", tmp_path / "notes")
    seen: list[str] = []

    async def handler(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            seen.append(str(message.params.uri))

    async with connect(_stdio(tmp_path / "notes.toml"), "legacy", message_handler=handler) as client:
        listed = await client.list_resources(cursor=None, cache_mode="bypass")
        uris = [str(r.uri) for r in listed.resources]
        assert "notes://welcome.md" in uris and "notes://projects/resource-studio.md" in uris
        await client.subscribe_resource("notes://welcome.md")

        edits = iter(range(1_000_000))

        def edit() -> bool:
            # New content each time: live data announces a change only where the content changed.
            (tmp_path / "notes" / "welcome.md").write_text(f"# Welcome, edited {next(edits)}\n", encoding="utf-8")
            return "notes://welcome.md" in seen

        await wait_for(edit)  # the watcher may still be starting: the edit is repeated until it is heard
        read = await client.read_resource("notes://welcome.md", cache_mode="bypass")
    assert "edited" in read.contents[0].text
