"""Protocol details a careful client checks: completion counts from a `complete` snippet, bounded error data."""

from __future__ import annotations

from collections.abc import Iterator

import mcp_types as types
import pytest
from engine_support import MODES, connect
from mcp.shared.exceptions import MCPError

from resources_qt.project import Project, ResourceSpec, ServerSettings
from resources_qt.server import ResourceServer
from resources_qt.server.factory import build_server, create_pool
from resources_qt.snippets import bind_project

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

MANY = "def complete(name, value, context):\n    return [f'{value}{i}' for i in range(150)]\n"


@pytest.fixture
def served() -> Iterator[ResourceServer]:
    spec = ResourceSpec(name="items", uri_template="items://{id}", reader="def read(uri, params):\n    return 'x'\n",
                        complete=MANY)
    project = Project(server=ServerSettings(name="polish", workers=1), resources=[spec])
    pool = create_pool(project)
    pool.start()
    server = build_server(project, bind_project(project, pool))
    server.start_http(port=0)
    assert pool.wait_ready(60)
    yield server
    server.close()
    pool.close()


@pytest.mark.parametrize("mode", MODES)
async def test_a_complete_snippet_reports_the_real_total_and_has_more(served: ResourceServer, mode: str) -> None:
    async with connect(served.url, mode) as client:
        ref = types.ResourceTemplateReference(uri="items://{id}")
        answer = await client.complete(ref, {"name": "id", "value": "v"})
    assert len(answer.completion.values) == 100
    assert answer.completion.values[:2] == ["v0", "v1"]
    assert answer.completion.total == 150
    assert answer.completion.has_more is True


@pytest.mark.parametrize("mode", MODES)
async def test_an_invalid_cursor_is_echoed_once_and_shortened(served: ResourceServer, mode: str) -> None:
    cursor = "A" * 1_000_000
    async with connect(served.url, mode) as client:
        with pytest.raises(MCPError) as info:
            await client.list_resources(cursor=cursor)
    assert info.value.code == -32602
    assert len(info.value.message) < 200
    assert info.value.data == {"cursorLength": 1_000_000}


@pytest.mark.parametrize("mode", MODES)
async def test_a_percent_encoded_address_is_read_in_either_form(mode: str) -> None:
    spec = ResourceSpec(name="u", uri="test://%C3%BCn%C3%AFcode", reader="def read(uri, params):\n    return 'u'\n")
    project = Project(server=ServerSettings(name="polish", workers=1), resources=[spec])
    pool = create_pool(project)
    pool.start()
    server = build_server(project, bind_project(project, pool))
    server.start_http(port=0)
    try:
        assert pool.wait_ready(60)
        async with connect(server.url, mode) as client:
            listed = await client.list_resources(cursor=None)
            encoded = await client.read_resource("test://%C3%BCn%C3%AFcode")
            unicode = await client.read_resource("test://ünïcode")
    finally:
        server.close()
        pool.close()
    assert [r.uri for r in listed.resources] == ["test://%C3%BCn%C3%AFcode"]
    assert encoded.contents[0].text == unicode.contents[0].text == "u"
