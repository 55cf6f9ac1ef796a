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


@contextlib.asynccontextmanager
async def _stage(what: str, seen: dict[str, list[Any]]) -> AsyncIterator[None]:
    """Fails in 40 s naming the step that did not finish and what had arrived, well before the test's timeout
    (a run under full-suite load once hung there without saying which wait never ended)."""
    try:
        async with asyncio.timeout(40):
            yield
    except TimeoutError:
        raise AssertionError(f"{what} did not happen within 40 s; received so far: {seen}") from None


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

    seen: dict[str, list[Any]] = {"updated": updated, "list_changed": list_changed}
    async with connect(_params(project), mode, message_handler=handler) as client:
        async with _stage("the first listing and read", seen):
            listed = await client.list_resources(cursor=None, cache_mode="bypass")
            assert {r.uri for r in listed.resources} == {"notes-index://all", "notes://a.md", "notes://b.md"}
            read = await client.read_resource("notes://b.md", cache_mode="bypass")
            assert read.contents[0].text == "# B\n"
        if mode == "legacy":
            async with _stage("notes://a.md's update after rewriting it", seen):
                await client.subscribe_resource("notes://a.md")
                async with _rewriting(tmp_path / "notes" / "a.md"):
                    await wait_for(lambda: bool(updated))
            assert set(updated) == {"notes://a.md"}
            (tmp_path / "notes" / "c.md").write_text("# C\n")
            async with _stage("list_changed after adding c.md", seen):
                await wait_for(lambda: bool(list_changed))
        else:
            kinds: list[str] = []
            seen["events"] = kinds
            async with client.listen(resources_list_changed=True, resource_subscriptions=["notes://a.md"]) as sub, \
                    _rewriting(tmp_path / "notes" / "a.md"):  # fmt: skip
                async with _stage("notes://a.md's update on the listen stream after rewriting it", seen):
                    event = await anext(aiter(sub))
                assert type(event).__name__ == "ResourceUpdated" and event.uri == "notes://a.md"
                (tmp_path / "notes" / "c.md").write_text("# C\n")
                async with _stage("ResourcesListChanged on the listen stream after adding c.md", seen):
                    async for event in sub:
                        kinds.append(type(event).__name__)
                        if "ResourcesListChanged" in kinds:
                            break
        async with _stage("the listing after the change", seen):
            listed = await client.list_resources(cursor=None, cache_mode="bypass")
    assert "notes://c.md" in {r.uri for r in listed.resources}
