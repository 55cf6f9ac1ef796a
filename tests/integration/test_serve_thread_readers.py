"""`serve --readers thread`: the snippet contract, reload, output, deadlines and busy (async overlap: both modes)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from engine_support import MODES, connect, wait_for
from mcp import StdioServerParameters
from mcp.shared.exceptions import MCPError

from resources_qt.project import Project, ResourceSpec, ServerSettings, load_project, save_project

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
NOTICE = "readers run in threads of the server process: no memory or crash containment"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _spec(name: str, reader: str, **extra: Any) -> ResourceSpec:
    if "uri_template" not in extra:
        extra["uri"] = f"demo://{name}"
    return ResourceSpec(name=name, mime_type="text/plain", reader=reader, **extra)


def _project(greeting: str = "hello", **settings: Any) -> Project:
    resources = [
        _spec("greeting", f"import sys\ndef read(uri, params):\n    print('said ' + {greeting!r})\n"
                          f"    print('to stderr', file=sys.stderr)\n    return {greeting!r}\n"),
        _spec("item", "def read(uri, params):\n    return PREFIX + params['id']\n",
              uri_template="demo://items/{id}",
              complete="def complete(name, value, context):\n"
                       "    return [v for v in ('apple', 'apricot', 'banana') if v.startswith(value)]\n"),
        _spec("later", "import asyncio\nasync def read(uri, params):\n    await asyncio.sleep(0.01)\n"
                       "    return text({'uri': current_uri(), 'where': str(PROJECT_DIR)})\n",
              ),
        _spec("missing", "def read(uri, params):\n    raise NotFound('no such greeting')\n"),
        _spec("hang", "import time\ndef read(uri, params):\n    time.sleep(30)\n    return 'late'\n"),
        _spec("slow", "import time\ndef read(uri, params):\n    time.sleep(1.5)\n    return 'slow ' + params['n']\n",
              uri_template="demo://slow/{n}"),
    ]
    server = ServerSettings(**{"name": "threads", "workers": 1, "readers": "thread", **settings})
    return Project(server=server, resources=resources, prelude="PREFIX = 'item '\n")


def _stdio(path: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "studio", "serve", str(path), "--stdio", *extra],
                                 env={"PYTHONPATH": ENV["PYTHONPATH"]}, cwd=ROOT)


def test_the_readers_setting_round_trips_and_rejects_other_modes(tmp_path: Path) -> None:
    path = save_project(_project(), tmp_path / "p.toml")
    assert 'readers = "thread"' in path.read_text(encoding="utf-8")
    assert load_project(path).server.readers == "thread"
    path.write_text(path.read_text(encoding="utf-8").replace('"thread"', '"fiber"'), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "studio", "serve", str(path), "--stdio"], capture_output=True,
                          text=True, check=False, env=ENV, cwd=ROOT, timeout=60)
    assert done.returncode == 2 and "readers must be" in done.stderr


@pytest.mark.parametrize("mode", MODES)
async def test_thread_readers_keep_the_snippet_contract(tmp_path: Path, mode: str) -> None:
    path = save_project(_project(), tmp_path / "p.toml")
    log = tmp_path / "snippets.log"
    ref = types.ResourceTemplateReference(uri="demo://items/{id}")
    async with connect(_stdio(path, "--snippet-output", str(log)), mode) as client:
        greeting = await client.read_resource("demo://greeting", cache_mode="bypass")
        item = await client.read_resource("demo://items/7", cache_mode="bypass")
        later = await client.read_resource("demo://later", cache_mode="bypass")
        completed = await client.complete(ref, {"name": "id", "value": "ap"})
        with pytest.raises(MCPError) as missing:
            await client.read_resource("demo://missing", cache_mode="bypass")
    assert greeting.contents[0].text == "hello"
    assert item.contents[0].text == "item 7"  # the prelude's name
    assert later.contents[0].text is not None
    assert '"uri": "demo://later"' in later.contents[0].text and str(tmp_path) in later.contents[0].text
    assert completed.completion.values == ["apple", "apricot"]
    assert missing.value.code == (-32602 if mode == "2026-07-28" else -32002)
    assert missing.value.message == "no such greeting"
    lines = log.read_text(encoding="utf-8").splitlines()
    assert lines == ["[greeting demo://greeting] stdout: said hello", "[greeting demo://greeting] stderr: to stderr"]


async def test_an_edited_snippet_takes_effect_on_the_next_read(tmp_path: Path) -> None:
    path = save_project(_project(subscriptions=True), tmp_path / "p.toml")
    seen: list[Any] = []

    async def handler(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            seen.append(message)

    async with connect(_stdio(path, "--watch"), "legacy", message_handler=handler) as client:
        assert (await client.read_resource("demo://greeting", cache_mode="bypass")).contents[0].text == "hello"
        await client.subscribe_resource("demo://greeting")
        save_project(_project("bonjour", subscriptions=True), path)
        await wait_for(lambda: bool(seen))  # the reload is announced once the new source is bound
        edited = await client.read_resource("demo://greeting", cache_mode="bypass")
    assert edited.contents[0].text == "bonjour"


async def test_a_timeout_is_answered_at_the_deadline_and_the_hung_thread_counted(tmp_path: Path) -> None:
    path = save_project(_project(reader_timeout=1.0), tmp_path / "p.toml")
    async with connect(_stdio(path, "--readers", "thread"), "legacy") as client:
        started = time.monotonic()
        with pytest.raises(MCPError) as hung:
            await client.read_resource("demo://hang", cache_mode="bypass")
        waited = time.monotonic() - started
        # The one thread is still asleep in the hung snippet: its replacement answers.
        after = await client.read_resource("demo://greeting", cache_mode="bypass")
    assert hung.value.code == -32000
    assert "timed out after 1 s" in hung.value.message and "1 such thread still running" in hung.value.message
    assert waited < 15  # the snippet sleeps 30 s: the answer came at the deadline, not when it returned
    assert after.contents[0].text == "hello"


async def test_the_bounded_thread_pool_answers_busy_past_its_queue(tmp_path: Path) -> None:
    path = save_project(_project(max_queued_reads=1, reader_timeout=20.0), tmp_path / "p.toml")
    outcomes: dict[str, Any] = {}

    async with connect(_stdio(path), "2026-07-28") as client:

        async def read(n: str) -> None:
            try:
                outcomes[n] = (await client.read_resource(f"demo://slow/{n}", cache_mode="bypass")).contents[0].text
            except MCPError as exc:
                outcomes[n] = exc

        async with anyio.create_task_group() as group:
            for n in ("1", "2", "3"):
                group.start_soon(read, n)
    refused = [o for o in outcomes.values() if isinstance(o, MCPError)]
    answered = sorted(o for o in outcomes.values() if isinstance(o, str))
    assert len(refused) == 1 and refused[0].code == -32000 and "busy" in refused[0].message
    assert len(answered) == 2 and all(text.startswith("slow ") for text in answered)


async def test_http_thread_mode_says_so_and_prints_stay_off_stdout(tmp_path: Path) -> None:
    path = save_project(_project(readers="process"), tmp_path / "p.toml")
    command = [sys.executable, "-m", "studio", "serve", str(path), "--http", "127.0.0.1:0", "--readers", "thread"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=ENV, cwd=ROOT)
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        found = re.search(r"(http://\S+/mcp)", first)
        assert found, first
        notice = process.stderr.readline()
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        for mode in MODES:
            async with (
                httpx2.AsyncClient(timeout=10) as http,
                connect(streamable_http_client(found.group(1), http_client=http), mode) as client,
            ):
                read = await client.read_resource("demo://greeting", cache_mode="bypass")
            assert read.contents[0].text == "hello"
    finally:
        process.terminate()
        code = process.wait(30)
    assert code == 0
    assert NOTICE in notice
    assert process.stdout is not None and process.stdout.read() == ""  # what the snippet printed went elsewhere
    process.stdout.close()
    assert process.stderr is not None
    rest = process.stderr.read()
    process.stderr.close()
    assert rest.count("stdout: said hello") == 2 and rest.count("stderr: to stderr") == 2


@pytest.mark.parametrize("readers", ["thread", "process"])
async def test_async_readers_overlap_past_the_one_worker_and_are_cancelled_at_their_deadline(
    tmp_path: Path, readers: str
) -> None:
    meet = (
        "import asyncio\nSTATE = {}\n\nasync def read(uri, params):\n"
        "    arrived = STATE.setdefault('arrived', asyncio.Event())\n"
        "    STATE['count'] = STATE.get('count', 0) + 1\n"
        "    if STATE['count'] == 6:\n        arrived.set()\n"
        "    await asyncio.wait_for(arrived.wait(), 5)\n    return 'met ' + params['n']\n"
    )
    stuck = "import asyncio\n\nasync def read(uri, params):\n    await asyncio.sleep(30)\n    return 'late'\n"
    project = _project(reader_timeout=2.0, readers=readers)
    project.resources += [_spec("meet", meet, uri_template="demo://meet/{n}"), _spec("stuck", stuck)]
    path = save_project(project, tmp_path / "p.toml")
    texts: list[str] = []
    async with connect(_stdio(path), "2026-07-28") as client:

        async def read(n: int) -> None:
            answer = await client.read_resource(f"demo://meet/{n}", cache_mode="bypass")
            texts.append(answer.contents[0].text)

        # One reader thread or one-call worker ("workers": 1): six reads are answered only if all six wait
        # at once (on the async lane, or on a shared worker: one process, so they see one STATE).
        async with anyio.create_task_group() as group:
            for n in range(6):
                group.start_soon(read, n)
        started = time.monotonic()
        with pytest.raises(MCPError) as late:
            await client.read_resource("demo://stuck", cache_mode="bypass")
        waited = time.monotonic() - started
        after = await client.read_resource("demo://greeting", cache_mode="bypass")
    assert sorted(texts) == [f"met {n}" for n in range(6)]
    assert late.value.code == -32000 and "timed out after 2 s and was cancelled" in late.value.message
    assert waited < 20  # answered at the deadline, not when the 30 s sleep would have ended
    assert after.contents[0].text == "hello"  # the one thread (or one-call worker) was never held
