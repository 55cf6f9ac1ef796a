"""An SDK client over `serve --stdio` keeps working while snippets print to every stream they can reach."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import textwrap
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

ROOT = Path(__file__).resolve().parents[3]

CHATTY = textwrap.dedent(
    """\
    import ctypes, os, sys
    def read(uri, params):
        print('{"jsonrpc": "2.0", "id": 1, "result": {}}')
        print('noise on stderr', file=sys.stderr)
        os.write(1, b'raw bytes on fd 1\\n' * 200)
        ctypes.CDLL(None).printf(b'printf from C\\n')
        return 'still clean ' + params['n']
    """
)


def test_sdk_client_over_stdio_with_a_chatty_snippet(tmp_path: Path) -> None:
    project = Project(
        server=ServerSettings(name="chatty", workers=2, reader_timeout=10),
        resources=[ResourceSpec(name="chatty", uri_template="chatty://{n}", mime_type="text/plain", reader=CHATTY)],
    )
    path = save_project(project, tmp_path / "chatty.toml")
    record = tmp_path / "stdout.bin"
    tee = Path(__file__).with_name("stdio_tee.py")
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(tee), str(record), sys.executable, "-m", "studio", "serve", str(path), "--stdio"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=str(ROOT),
    )

    async def session() -> list[str]:
        async with Client(params, mode="legacy", read_timeout_seconds=30) as client:
            texts = []
            for n in range(5):
                result = await client.read_resource(f"chatty://{n}")
                texts.extend(getattr(content, "text", "") for content in result.contents)
            templates = await client.list_resource_templates()
            assert [t.name for t in templates.resource_templates] == ["chatty"]
            return texts

    assert asyncio.run(session()) == [f"still clean {n}" for n in range(5)]
    # The SDK client skips lines it cannot parse, so look at the raw bytes too:
    # every line the server wrote is one of its own JSON-RPC messages.
    lines = record.read_bytes().splitlines()
    assert len(lines) >= 7
    for line in lines:
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0"
        assert "result" in message or "method" in message or "error" in message
    assert b"raw bytes on fd 1" not in record.read_bytes()
