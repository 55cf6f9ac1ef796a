"""Text no JSON can carry (a lone surrogate) is a clean read error; text XML cannot carry stays out of JUnit files."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_support import MODES
from mcp import Client
from mcp.shared.exceptions import MCPError

from resources_qt import Resource, ResourceContent
from resources_qt.errors import OPERATION_FAILED
from resources_qt.project import Project, ResourceSpec, ServerSettings
from resources_qt.server import ResourceServer
from resources_qt.snippets import SnippetPool, bind_project
from resources_qt.testing.cli import test_main

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

LONE = "a\ud800b"
SNIPPET = "def read(uri, params):\n    return 'a\\ud800b'\n"
JSON_SNIPPET = "def read(uri, params):\n    return {'name': 'x\\udfffy'}\n"
WHY = "not valid Unicode (a lone surrogate U+D800 at index 1)"


@pytest.fixture(scope="module")
def served() -> Iterator[ResourceServer]:
    pool = SnippetPool(workers=1, timeout=5.0, memory_limit_mb=256)
    assert pool.wait_ready(60)
    project = Project(server=ServerSettings(name="unicode"), resources=[
        ResourceSpec(name="snippet", uri="lone://snippet", mime_type="text/plain", reader=SNIPPET),
        ResourceSpec(name="json", uri="lone://json", mime_type="application/json", reader=JSON_SNIPPET),
    ])
    resources = bind_project(project, pool, apply_settings=False)
    resources.add_resource(Resource(name="callable", uri="lone://callable", mime_type="text/plain",
                                    reader=lambda uri: LONE))
    resources.add_resource(Resource(name="content", uri="lone://content", mime_type="text/plain",
                                    reader=lambda uri: [ResourceContent(uri, "text/plain", text=LONE)]))
    server = ResourceServer(resources, name="unicode", version="1")
    server.start_http(port=0)
    yield server
    server.close()
    pool.close()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("uri", ["lone://snippet", "lone://callable", "lone://content"])
async def test_a_lone_surrogate_is_a_read_error_naming_it(served: ResourceServer, mode: str, uri: str) -> None:
    assert served.url is not None
    async with Client(served.url, mode=mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource(uri, cache_mode="bypass")
        # The session goes on: the next read is answered.
        with pytest.raises(MCPError):
            await client.read_resource("lone://json", cache_mode="bypass")
    assert raised.value.code == OPERATION_FAILED
    assert WHY in raised.value.message and uri in raised.value.message


async def test_a_lone_surrogate_inside_json_data_is_found_in_the_dumped_text(served: ResourceServer) -> None:
    assert served.url is not None
    async with Client(served.url, mode="2026-07-28") as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource("lone://json", cache_mode="bypass")
    assert raised.value.code == OPERATION_FAILED
    assert "a lone surrogate U+DFFF at index" in raised.value.message


PROJECT = """format = 1

[server]
name = "Unicode"
workers = 1
reader_timeout = 5.0

[[resources]]
name = "lone"
uri = "text://lone"
mime_type = "text/plain"
reader = '''
def read(uri, params):
    return "a\\ud800b"
'''

[[resources]]
name = "nonchar"
uri = "text://nonchar"
mime_type = "text/plain"
reader = '''
def read(uri, params):
    return "x\\uffffy\\x01z"
'''

[[tests]]
name = "quotes a noncharacter"
uri = "text://nonchar"
expect = { contains = "absent" }
"""


def test_the_cli_reports_the_surrogate_and_writes_parseable_junit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "unicode.toml"
    project.write_text(PROJECT)
    junit = tmp_path / "junit.xml"
    assert test_main([str(project), "--junit", str(junit), "--era", "both"]) == 1
    out = capsys.readouterr().out
    assert out.count(WHY) == 2  # the sample fails in each era with the reason
    root = ET.parse(junit).getroot()  # U+FFFF and U+0001 in a quoted text used to make it unparseable
    cases = {case.get("name"): case for case in root.iter("testcase")}
    failure = cases["quotes a noncharacter [legacy]"].find("failure")
    assert failure is not None and failure.text is not None
    assert "+x\\uffffy\\x01z" in failure.text  # written as visible escapes
    lone = cases["sample: text://lone [2026-07-28]"].find("failure")
    assert lone is not None and WHY in (lone.get("message") or "")
