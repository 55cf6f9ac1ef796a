"""`serve`: an instances answer past the byte or item cap never reaches the server; the log names the cap."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from engine_support import connect, wait_for

from resources_qt.live.instances import MAX_INSTANCES, MAX_INSTANCES_BYTES

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}

ITEMS, ITEM_BYTES = 10_000, 20_000
"""The red team's answer: 10,000 instances of 20 KB each (200 MB of JSON; it took the server to 814 MB)."""

PLAIN = '''format = 1

[server]
name = "caps"
workers = 1

[[resources]]
name = "victim"
uri = "plain://victim"
reader = "def read(uri, params):\\n    return 'victim'\\n"
'''

CAPPED = f'''
[[resources]]
name = "big"
uri_template = "big://{{id}}"
instances = """
def instances():
    blob = "x" * {ITEM_BYTES}
    return [{{"id": str(i), "description": blob}} for i in range({ITEMS})]
"""
reader = "def read(uri, params):\\n    return 'x'\\n"

[[resources]]
name = "many"
uri_template = "many://{{id}}"
instances = "def instances():\\n    return [str(i) for i in range({MAX_INSTANCES + 1})]\\n"
reader = "def read(uri, params):\\n    return 'x'\\n"
'''


def _peak_kb(pid: int) -> int:
    """The process's peak resident memory (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


async def test_answers_past_the_caps_are_refused_before_the_server_holds_them(tmp_path: Path) -> None:
    path = tmp_path / "caps.toml"
    path.write_text(PLAIN)
    log = tmp_path / "serve.log"
    with log.open("w") as sink:
        process = subprocess.Popen([sys.executable, "-m", "studio", "serve", str(path), "--http", "127.0.0.1:0",
                                    "--watch"], stdout=subprocess.DEVNULL, stderr=sink, env=ENV, cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while not (found := re.search(r"(http://\S+/mcp)", log.read_text())):
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            await asyncio.sleep(0.05)
        async with connect(found.group(1), "legacy") as client:
            assert [str(r.uri) for r in (await client.list_resources()).resources] == ["plain://victim"]
            before = _peak_kb(process.pid)
            path.write_text(PLAIN + CAPPED)

            async def reloaded() -> bool:
                templates = await client.list_resource_templates()
                return len(templates.resource_templates) == 2

            deadline = time.monotonic() + 30
            while not await reloaded():
                assert time.monotonic() < deadline, log.read_text()
                await asyncio.sleep(0.05)
            listed = await client.list_resources()
        growth_kb = _peak_kb(process.pid) - before
        await wait_for(lambda: "Instances of many" in log.read_text() and "Instances of big" in log.read_text())
    finally:
        process.terminate()
        process.wait(30)
    text = log.read_text()
    assert [str(r.uri) for r in listed.resources] == ["plain://victim"]  # the rest of the listing is intact
    assert f"at most {MAX_INSTANCES:,} are listed (the instances item cap)" in text
    big = re.search(r"Instances of big: instances\(\) returned ([\d,]+) bytes of JSON; at most ([\d,]+) \(8 MiB\) "
                    r"are listed \(the instances size cap\)", text)
    assert big, text
    assert int(big.group(1).replace(",", "")) > ITEMS * ITEM_BYTES and big.group(2) == f"{MAX_INSTANCES_BYTES:,}"
    # The server never held the answer: its peak grew by far less than the answer's 200 MB.
    assert growth_kb * 1024 < ITEMS * ITEM_BYTES / 4, growth_kb
