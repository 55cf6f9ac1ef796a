"""Issue 10, points 1-5, 8 end to end: snippet attacks through a real server, real workers, a real SDK client."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_support import connect
from mcp.shared.exceptions import MCPError

from resources_qt.project import Project, ResourceSpec, ServerSettings
from resources_qt.server import ResourceServer
from resources_qt.server.factory import build_server, create_pool
from resources_qt.server.logtext import EscapingFormatter, escape_controls
from resources_qt.snippets import SnippetPool, bind_project

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

SNEAKY = "class Sneaky(str):\n    pass\n\ndef read(uri, params):\n    return Sneaky('sneaky')\n"
FAST = "def read(uri, params):\n    return 'fast'\n"
SLOW = "import time\ndef read(uri, params):\n    time.sleep(3)\n    return 'slow'\n"
PATCHER = "import json\ndef read(uri, params):\n    json.dumps = lambda *a, **k: '\"HIJACKED\"'\n    return 'patched'\n"
DATA = "def read(uri, params):\n    return {'answer': 42}\n"


def _bomb(marker: Path) -> str:
    return (
        "import os\nclass Bomb(str):\n    def __reduce__(self):\n"
        f"        return (os.system, ('touch {marker}',))\n"
        "def read(uri, params):\n    return Bomb('boom')\n"
    )


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[ResourceServer, SnippetPool, Path]]:
    marker = tmp_path / "pwned"
    specs = [
        ResourceSpec(name="sneaky", uri="attack://sneaky", reader=SNEAKY),
        ResourceSpec(name="bomb", uri="attack://bomb", reader=_bomb(marker)),
        ResourceSpec(name="fast", uri="attack://fast", reader=FAST),
        ResourceSpec(name="slow", uri_template="attack://slow/{n}", reader=SLOW),
        ResourceSpec(name="patcher", uri="attack://patcher", reader=PATCHER),
        ResourceSpec(name="data", uri="attack://data", mime_type="application/json", reader=DATA),
    ]
    settings = ServerSettings(name="attacks", workers=2, reader_timeout=5.0, memory_limit_mb=256)
    project = Project(server=settings, resources=specs)
    pool = create_pool(project)
    pool.start()
    server = build_server(project, bind_project(project, pool))
    server.start_http(port=0)
    assert pool.wait_ready(60)
    yield server, pool, marker
    server.close()
    pool.close()


async def test_a_str_subclass_and_a_reduce_bomb_are_answered_as_plain_text(
    served: tuple[ResourceServer, SnippetPool, Path],
) -> None:
    server, _, marker = served
    async with connect(server.url, "legacy") as client:
        sneaky = await asyncio.wait_for(client.read_resource("attack://sneaky"), 30)
        bomb = await asyncio.wait_for(client.read_resource("attack://bomb"), 30)
        fast = await client.read_resource("attack://fast")
    assert [c.text for c in (*sneaky.contents, *bomb.contents, *fast.contents)] == [  # type: ignore[union-attr]
        "sneaky",
        "boom",
        "fast",
    ]
    assert not marker.exists()


async def test_a_fast_read_among_32_slow_ones_is_answered_first(
    served: tuple[ResourceServer, SnippetPool, Path],
) -> None:
    server, pool, _ = served
    async with connect(server.url, "2026-07-28") as client:
        slow = [asyncio.create_task(client.read_resource(f"attack://slow/{i}")) for i in range(32)]
        deadline = time.monotonic() + 30
        while pool.queued() < 32 - pool.resource_concurrency:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.01)
        fast = await client.read_resource("attack://fast")
        assert fast.contents[0].text == "fast"  # type: ignore[union-attr]
        assert not any(task.done() for task in slow)
        outcomes = await asyncio.gather(*slow, return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            assert isinstance(outcome, MCPError) and outcome.code == -32000
            assert "timed out" in outcome.message
        else:
            assert outcome.contents[0].text == "slow"  # type: ignore[union-attr]


async def test_a_patched_json_does_not_change_another_resources_answer(
    served: tuple[ResourceServer, SnippetPool, Path],
) -> None:
    server, _, _ = served
    async with connect(server.url, "legacy") as client:
        for _ in range(8):
            assert (await client.read_resource("attack://patcher")).contents[0].text == "patched"  # type: ignore[union-attr]
            data = await client.read_resource("attack://data")
            assert data.contents[0].text == '{\n  "answer": 42\n}'  # type: ignore[union-attr]


def test_log_lines_escape_what_a_client_sent() -> None:
    record = logging.LogRecord(
        "mcp", logging.INFO, __file__, 1, "Rejected session ID: %s", ("x\nERROR forged line\x1b[2J",), None
    )
    line = EscapingFormatter("%(levelname)s %(name)s: %(message)s").format(record)
    assert "\n" not in line and "\x1b" not in line
    assert line == "INFO mcp: Rejected session ID: x\\x0aERROR forged line\\x1b[2J"
    assert escape_controls("plain é text") == "plain é text"


async def test_mask_errors_gives_clients_a_generic_message(tmp_path: Path) -> None:
    failing = "def read(uri, params):\n    raise RuntimeError('secret path /home/me/db')\n"
    settings = ServerSettings(name="masked", workers=1, mask_errors=True)
    project = Project(server=settings, resources=[ResourceSpec(name="f", uri="attack://f", reader=failing)])
    pool = create_pool(project)
    server = build_server(project, bind_project(project, pool))
    server.start_http(port=0)
    try:
        async with connect(server.url, "legacy") as client:
            with pytest.raises(MCPError) as caught:
                await client.read_resource("attack://f")
        assert caught.value.code == -32000
        assert "secret" not in caught.value.message and caught.value.message == "The resource reader failed"
        preview = await asyncio.wrap_future(server.submit(server.read_for_preview("attack://f")))  # type: ignore[arg-type]
        assert preview.error_message is not None and "secret path" in preview.error_message
    finally:
        server.close()
        pool.close()
