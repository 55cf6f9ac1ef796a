"""Live data over real stdio: a spawned server lists instances and tells subscribers of watched files."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from engine_support import MODES, connect, wait_for
from helpers.live_project import write_notes_project
from mcp import StdioServerParameters

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

ROOT = Path(__file__).resolve().parents[2]


def _params(project: Path) -> StdioServerParameters:
    env = {"PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    child = str(Path(__file__).with_name("live_stdio_child.py"))
    return StdioServerParameters(command=sys.executable, args=[child, str(project)], env=env, cwd=ROOT)


@contextlib.asynccontextmanager
async def _rewriting(path: Path) -> AsyncIterator[None]:
    """`path` written with new content every half second while the block runs: under CI load the server's
    watch may arm after a single write (a test that wrote once hung until its timeout), and live data
    announces only changed content."""

    async def rewrite() -> None:
        for n in itertools.count():
            path.write_text(f"# A again {n}\n")
            await asyncio.sleep(0.5)

    task = asyncio.create_task(rewrite())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_lists_instances_and_announces_an_edited_file(tmp_path: Path, mode: str) -> None:
    project = write_notes_project(tmp_path)
    updated: list[str] = []
    list_changed: list[int] = []

    async def handler(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(message.params.uri)
        elif isinstance(message, types.ResourceListChangedNotification):
            list_changed.append(1)

    async with connect(_params(project), mode, message_handler=handler) as client:
        listed = await client.list_resources(cursor=None, cache_mode="bypass")
        assert {r.uri for r in listed.resources} == {"notes-index://all", "notes://a.md", "notes://b.md"}
        read = await client.read_resource("notes://b.md", cache_mode="bypass")
        assert read.contents[0].text == "# B\n"
        if mode == "legacy":
            await client.subscribe_resource("notes://a.md")
            async with _rewriting(tmp_path / "notes" / "a.md"):
                await wait_for(lambda: bool(updated))
            assert set(updated) == {"notes://a.md"}
            (tmp_path / "notes" / "c.md").write_text("# C\n")
            await wait_for(lambda: bool(list_changed))
        else:
            async with client.listen(resources_list_changed=True, resource_subscriptions=["notes://a.md"]) as sub, \
                    _rewriting(tmp_path / "notes" / "a.md"):  # fmt: skip
                event = await anext(aiter(sub))
                assert type(event).__name__ == "ResourceUpdated" and event.uri == "notes://a.md"
                (tmp_path / "notes" / "c.md").write_text("# C\n")
                kinds = []
                async for event in sub:
                    kinds.append(type(event).__name__)
                    if "ResourcesListChanged" in kinds:
                        break
        listed = await client.list_resources(cursor=None, cache_mode="bypass")
    assert "notes://c.md" in {r.uri for r in listed.resources}
