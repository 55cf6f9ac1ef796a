"""End to end over real stdio: the SDK client spawns a headless server process, in both eras."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from engine_support import MODES, PNG, blob_bytes, connect
from mcp import StdioServerParameters
from mcp.shared.exceptions import MCPError

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

ROOT = Path(__file__).resolve().parents[2]


def _params(*extra: str) -> StdioServerParameters:
    env = {"PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return StdioServerParameters(
        command=sys.executable, args=[str(Path(__file__).with_name("stdio_child.py")), *extra], env=env, cwd=ROOT
    )


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_lists_reads_and_errors(mode: str) -> None:
    async with connect(_params(), mode) as client:
        first = await client.list_resources(cursor=None, cache_mode="bypass")
        second = await client.list_resources(cursor=first.next_cursor, cache_mode="bypass")
        templates = await client.list_resource_templates(cursor=None, cache_mode="bypass")
        text = await client.read_resource("tickets://5/attachment", cache_mode="bypass")
        binary = await client.read_resource("images://logo.png", cache_mode="bypass")
        with pytest.raises(MCPError) as missing:
            await client.read_resource("nothing://here", cache_mode="bypass")
        with pytest.raises(MCPError) as failing:
            await client.read_resource("fail://raise", cache_mode="bypass")
    assert len(first.resources) == 4 and len(second.resources) == 3 and second.next_cursor is None
    assert {t.name for t in templates.resource_templates} == {"ticket", "city"}
    assert text.contents[0].text == "ticket 5 at tickets://5/attachment"
    assert blob_bytes(binary.contents[0]) == PNG
    assert missing.value.code == (-32002 if mode == "legacy" else -32602)
    assert missing.value.data == {"uri": "nothing://here"}
    assert failing.value.code == -32000


async def test_stdio_legacy_subscription_and_modern_listen() -> None:
    async with connect(_params("--notify"), "legacy") as client:
        caps = client.server_capabilities.resources
        assert caps is not None and caps.subscribe and caps.list_changed
        await client.subscribe_resource("config://app/settings")
        await client.unsubscribe_resource("config://app/settings")
    async with (
        connect(_params("--notify"), "2026-07-28") as modern,
        modern.listen(resources_list_changed=True, resource_subscriptions=["config://app/settings"]) as sub,
    ):
        assert sub.honored.resources_list_changed and sub.honored.resource_subscriptions == ["config://app/settings"]


def test_stdio_stops_and_restarts_while_the_client_keeps_stdin_open(tmp_path: Path) -> None:
    out, err = tmp_path / "out", tmp_path / "err"
    with out.open("wb") as out_file, err.open("wb") as err_file:
        child = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("stdio_restart_child.py"))],
            stdin=subprocess.PIPE, stdout=out_file, stderr=err_file, cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")},
        )
        try:
            # stdin stays open and silent: only stop() can end the transport's reader.
            child.wait(timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
            assert child.stdin is not None
            child.stdin.close()
    assert child.returncode == 0, err.read_text()
    assert out.read_text().split() == ["stopped", "1", "stopped", "2"]
