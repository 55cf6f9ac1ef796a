"""A reader that raises NotFound answers the era's not-found error with its own message, like an unmatched URI."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from engine_support import MODES, connect
from mcp.shared.exceptions import MCPError

from resources_qt import NotFound, Resource, Resources
from resources_qt.project import Project, ResourceSpec, ServerSettings
from resources_qt.server import ResourceServer
from resources_qt.server.factory import build_server, create_pool
from resources_qt.server.reading import preview_read
from resources_qt.snippets import bind_project

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

TICKETS = (
    "TICKETS = {'1': 'open'}\n"
    "def read(uri, params):\n"
    "    if params['id'] not in TICKETS:\n"
    "        raise NotFound(f\"no ticket {params['id']}\")\n"
    "    return TICKETS[params['id']]\n"
)
ASYNC_BARE = "async def read(uri, params):\n    raise NotFound()\n"
KEY_ERROR = "def read(uri, params):\n    return {}[params['id']]\n"


@pytest.fixture
def served() -> Iterator[ResourceServer]:
    specs = [
        ResourceSpec(name="ticket", uri_template="tickets://{id}", reader=TICKETS),
        ResourceSpec(name="bare", uri_template="bare://{id}", reader=ASYNC_BARE),
        ResourceSpec(name="keyerror", uri_template="keys://{id}", reader=KEY_ERROR),
    ]
    project = Project(server=ServerSettings(name="not-found", workers=1, memory_limit_mb=256), resources=specs)
    pool = create_pool(project)
    server = build_server(project, bind_project(project, pool))
    server.start_http(port=0)
    try:
        yield server
    finally:
        server.close()
        pool.close()


@pytest.mark.parametrize("mode", MODES)
async def test_a_snippets_not_found_is_the_eras_not_found_error_with_its_message(
    served: ResourceServer, mode: str
) -> None:
    not_found = -32602 if mode == "2026-07-28" else -32002
    async with connect(served.url, mode) as client:
        assert (await client.read_resource("tickets://1", cache_mode="bypass")).contents[0].text == "open"
        with pytest.raises(MCPError) as missing:
            await client.read_resource("tickets://9", cache_mode="bypass")
        with pytest.raises(MCPError) as bare:
            await client.read_resource("bare://3", cache_mode="bypass")
        with pytest.raises(MCPError) as unmatched:
            await client.read_resource("nothing://9", cache_mode="bypass")
        with pytest.raises(MCPError) as other:
            await client.read_resource("keys://9", cache_mode="bypass")
    assert (missing.value.code, missing.value.message, missing.value.data) == (
        not_found, "no ticket 9", {"uri": "tickets://9"}
    )
    assert (bare.value.code, bare.value.message) == (not_found, "Resource not found: bare://3")
    assert unmatched.value.code == not_found
    assert other.value.code == -32000  # any other exception is still the reader failing


async def test_a_plain_python_reader_raising_not_found_and_the_preview_agree() -> None:
    def read(uri: str) -> str:
        raise NotFound("archived")

    resources = Resources()
    resources.add_resource(Resource(name="old", uri="docs://old", mime_type="text/plain", reader=read))
    server = ResourceServer(resources, name="lib", version="1")
    server.start_http(port=0)
    try:
        for mode in MODES:
            async with connect(server.url, mode) as client:
                with pytest.raises(MCPError) as caught:
                    await client.read_resource("docs://old", cache_mode="bypass")
            assert caught.value.code == (-32602 if mode == "2026-07-28" else -32002)
            assert caught.value.message == "archived" and caught.value.data == {"uri": "docs://old"}
    finally:
        server.close()
    outcome = await preview_read(resources, "docs://old")
    assert (outcome.error_code, outcome.error_message) == (-32002, "archived")
    modern = await preview_read(resources, "docs://old", protocol_version="2026-07-28")
    assert modern.error_code == -32602
