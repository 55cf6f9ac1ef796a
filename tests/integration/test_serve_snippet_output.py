"""`serve --snippet-output FILE`: client-chosen URIs land escaped (a shell sourcing the file runs nothing), links
are refused, and the file is rotated at its cap."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest
from engine_support import connect
from mcp import StdioServerParameters

from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project
from resources_qt.server.output_writer import unescape_field

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}

# Each would run a command, or write a file, if a shell sourcing the output file took it as written.
HOSTILE = [
    "a$(touch pwned-1)b",
    "x`touch pwned-2`",
    "n\n$(touch pwned-3)",
    "r;touch pwned-4",
    "s>pwned-5",
    "t|touch pwned-6&touch pwned-7",
    "u\r\n\x1b[2J\\x41 ]not-the-end \"(q)'",
    "v%0a$(touch pwned-8)",
]
_LINE = re.compile(r"\[(\S+) (\S+)\] (stdout|stderr): (.*)")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _project(tmp_path: Path) -> Path:
    echo = ResourceSpec(name="echo", uri_template="demo://echo/{+id}", mime_type="text/plain",
                        reader="import sys\ndef read(uri, params):\n    print('uri=' + uri)\n"
                               "    print('id=' + params['id'], file=sys.stderr)\n    return 'ok'\n")
    settings = ServerSettings(name="output", version="1", workers=1)
    return save_project(Project(server=settings, resources=[echo]), tmp_path / "p.toml")


def _stdio(path: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "studio", "serve", str(path), "--stdio", *extra],
                                 env={"PYTHONPATH": ENV["PYTHONPATH"]}, cwd=ROOT)


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "studio", "serve", *args], capture_output=True, text=True,
                          check=False, env=ENV, cwd=ROOT, timeout=60)


async def test_uris_a_client_chose_are_escaped_and_a_shell_sourcing_the_file_runs_nothing(tmp_path: Path) -> None:
    project = _project(tmp_path)
    log = tmp_path / "snippets.log"
    uris = [f"demo://echo/{value}" for value in HOSTILE]
    async with connect(_stdio(project, "--snippet-output", str(log)), "2026-07-28") as client:
        for uri in uris:
            read = await client.read_resource(uri, cache_mode="bypass")
            assert read.contents[0].text == "ok"
    for shell in ("sh", "bash"):
        if shutil.which(shell):
            subprocess.run([shell, "-c", f". {log}"], cwd=tmp_path, capture_output=True, timeout=30, check=False)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("pwned")) == []
    text = log.read_text(encoding="utf-8")
    # One line per printed line, each of the documented form; unescaped, exactly what was printed.
    expected = []
    for uri in uris:
        value = unquote(uri.removeprefix("demo://echo/"))  # the template's value is percent-decoded
        expected += [("echo", uri, "stdout", line) for line in f"uri={uri}".splitlines()]
        expected += [("echo", uri, "stderr", line) for line in f"id={value}".splitlines()]
    parsed = []
    for line in text.splitlines():
        found = _LINE.fullmatch(line)
        assert found, line
        key, uri, stream, printed = found.groups()
        parsed.append((unescape_field(key), unescape_field(uri), stream, unescape_field(printed)))
    assert parsed == expected


@pytest.mark.parametrize("target", ["existing", "dangling"])
def test_a_symbolic_link_is_refused_naming_the_flag(tmp_path: Path, target: str) -> None:
    project = _project(tmp_path)
    pointed = tmp_path / "elsewhere" / ".bashrc"
    pointed.parent.mkdir()
    if target == "existing":
        pointed.write_text("untouched\n", encoding="utf-8")
    link = tmp_path / "snippets.log"
    link.symlink_to(pointed)
    done = _serve(str(project), "--http", "0", "--snippet-output", str(link))
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("resource-studio serve: error: --snippet-output: ") and "symbolic link" in lines[0]
    if target == "existing":
        assert pointed.read_text(encoding="utf-8") == "untouched\n"
    else:
        assert not pointed.exists()


def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    # Opening a FIFO for writing waits for a reader: serve must say no instead of hanging.
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    done = _serve(str(_project(tmp_path)), "--http", "0", "--snippet-output", str(fifo))
    assert done.returncode == 2 and "--snippet-output" in done.stderr and "regular file" in done.stderr
