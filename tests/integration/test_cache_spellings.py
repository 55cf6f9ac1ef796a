"""The read cache drops every spelling of a resource together and bounds what it keeps in UTF-8 bytes (issue 21)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from engine_support import MODES
from mcp import Client

from resources_qt import CacheHint, Resource, Resources
from resources_qt.notifications import Updated
from resources_qt.server import ResourceServer
from resources_qt.server.read_cache import MAX_ENTRY_BYTES

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

HOUR = CacheHint(3_600_000, "public")
"""Within a test only an invalidation can make the cache let go of an answer."""


class Versioned:
    """A reader answering `value` (set by the test) and the values it was read with."""

    def __init__(self) -> None:
        self.value = "v1"
        self.calls = 0

    def __call__(self, uri: str, params: dict[str, str] | None = None) -> str:
        self.calls += 1
        return f"{self.value}:{(params or {}).get('id', '')}"


@pytest.fixture
def served() -> Iterator[ResourceServer]:
    server = ResourceServer(Resources(), name="spellings", version="1")
    server.enable_resource_subscriptions = True
    server.start_http(port=0)
    yield server
    server.close()


def _url(server: ResourceServer) -> str:
    assert server.url is not None
    return server.url


async def _text(client: Client, uri: str) -> str:
    text: str = (await client.read_resource(uri, cache_mode="bypass")).contents[0].text  # type: ignore[union-attr]
    return text


SPELLINGS = [
    # (declared as a template?, declaration, spellings the client sends, the one `updated` names)
    pytest.param(True, "test://item/{id}", ["test://item/1", "test://item/%31"], "test://item/1", id="percent-plain"),
    pytest.param(True, "test://item/{id}", ["test://item/1", "test://item/%31"], "test://item/%31",
                 id="percent-encoded"),
    pytest.param(False, "test://caf%C3%A9", ["test://caf%C3%A9", "test://café"], "test://caf%C3%A9",
                 id="iri-encoded"),
    pytest.param(False, "test://caf%C3%A9", ["test://caf%C3%A9", "test://café"], "test://café", id="iri-unicode"),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("template", "declared", "spellings", "updated"), SPELLINGS)
async def test_an_update_drops_every_spelling_of_the_resource(
    served: ResourceServer, mode: str, template: bool, declared: str, spellings: list[str], updated: str
) -> None:
    reader = Versioned()
    served.resources.add_resource(Resource(
        name="item", uri="" if template else declared, uri_template=declared if template else "",
        mime_type="text/plain", reader=reader, cache=HOUR,
    ))
    expected = "1" if template else ""
    async with Client(_url(served), mode=mode) as client:
        assert [await _text(client, uri) for uri in spellings] == [f"v1:{expected}"] * len(spellings)
        calls = reader.calls
        assert [await _text(client, uri) for uri in spellings] == [f"v1:{expected}"] * len(spellings)
        assert reader.calls == calls  # each spelling was kept
        reader.value = "v2"
        await served.notify(Updated(updated))
        assert [await _text(client, uri) for uri in spellings] == [f"v2:{expected}"] * len(spellings)
    assert len(served.read_cache) == len(spellings)


async def test_an_update_leaves_the_other_values_of_a_template_alone(served: ResourceServer) -> None:
    reader = Versioned()
    served.resources.add_resource(Resource(name="item", uri_template="test://item/{id}", mime_type="text/plain",
                                           reader=reader, cache=HOUR))
    async with Client(_url(served), mode="2026-07-28") as client:
        assert [await _text(client, uri) for uri in ("test://item/%31", "test://item/2")] == ["v1:1", "v1:2"]
        reader.value = "v2"
        await served.notify(Updated("test://item/1"))
        assert [await _text(client, uri) for uri in ("test://item/%31", "test://item/2")] == ["v2:1", "v1:2"]


EMOJI = "\N{GRINNING FACE}"


@pytest.mark.parametrize("mode", MODES)
async def test_an_emoji_answer_counts_its_utf8_bytes(served: ResourceServer, mode: str) -> None:
    # 300,000 characters, 1.2 MB of UTF-8: under the 1 MiB entry bound in characters, over it in bytes.
    big = Versioned()
    big.value = EMOJI * 300_000
    small = Versioned()
    small.value = EMOJI * 100_000
    served.resources.add_resource(Resource(name="big", uri="emoji://big", mime_type="text/plain", reader=big,
                                           cache=HOUR))
    served.resources.add_resource(Resource(name="small", uri="emoji://small", mime_type="text/plain", reader=small,
                                           cache=HOUR))
    cache = served.read_cache
    async with Client(_url(served), mode=mode) as client:
        for _ in range(2):
            assert len(await _text(client, "emoji://big")) == 300_001
            assert len(await _text(client, "emoji://small")) == 100_001
    assert big.calls == 2  # never kept: 1,200,001 bytes > MAX_ENTRY_BYTES
    assert small.calls == 1
    assert len(cache) == 1
    assert cache.size_bytes == len("emoji://small") + len((small.value + ":").encode()) <= MAX_ENTRY_BYTES
