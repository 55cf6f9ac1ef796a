"""Shared pieces of the engine's end-to-end tests: a catalogue with every reader outcome, and clients."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
from mcp import Client

from resources_qt import CacheHint, Resource, Resources
from resources_qt.server import ResourceServer
from resources_qt.server.sessions import LegacySession

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489")
MODES = ("legacy", "2026-07-28")
TIMEOUT = 15.0


def build_catalogue() -> Resources:
    """Text, binary, templates, every failing reader, completions and a cache hint."""
    resources = Resources()
    resources.register_direct_resource("settings", "config://app/settings", "Settings", "application/json",
                                       lambda uri: '{"theme": "dark"}')
    resources.add_resource(
        Resource(name="logo", uri="images://logo.png", mime_type="image/png", reader=lambda uri: PNG,
                 title="Logo", description="The logo")
    )
    resources.register_template_resource("ticket", "tickets://{id}/attachment", "A ticket", "text/plain",
                                         lambda uri, params: f"ticket {params['id']} at {uri}")
    # A direct resource wins over a template that would also match it.
    resources.register_direct_resource("ticket_special", "tickets://0/attachment", "Special", "text/plain",
                                       lambda uri: "special")
    resources.register_direct_resource("raises", "fail://raise", "Raises", "text/plain", _raise)
    resources.register_direct_resource("returns_none", "fail://none", "None", "text/plain", lambda uri: None)
    stored = resources.register_direct_resource("no_reader", "fail://no-reader", "No reader", "text/plain",
                                                lambda uri: "x")
    stored.reader = None  # only an in-place edit can leave a resource without a reader
    resources.add_resource(
        Resource(
            name="city",
            uri_template="weather://{country}/{city}",
            mime_type="application/json",
            reader=_weather,
            completions={"country": ["Belgium", "Brazil", "Canada"], "city": _complete_city},
        )
    )
    resources.add_resource(
        Resource(name="cached", uri="cache://hinted", mime_type="text/plain", reader=lambda uri: "cached",
                 cache=CacheHint(60_000, "public"))
    )
    return resources


def _raise(uri: str) -> str:
    raise FileNotFoundError(f"No report stored for {uri}")


async def _weather(uri: str, params: dict[str, Any]) -> str:
    await asyncio.sleep(0)
    return f'{{"city": "{params["city"]}"}}'


async def _complete_city(name: str, value: str, context: dict[str, str]) -> list[str]:
    cities = {"Belgium": ["Brussels", "Bruges", "Antwerp"], "Canada": ["Toronto", "Ottawa"]}
    return [c for c in cities.get(context.get("country", ""), []) if c.startswith(value)]


def blob_bytes(content: Any) -> bytes:
    return base64.b64decode(content.blob)


PRIME = "prime://"
"""Prefix of the notifications `settle_legacy` sends; the clients `connect` makes never pass them on."""


class _Primer:
    """Wraps a client's message handler: records priming notifications and swallows them."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.primed = asyncio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification) and message.params.uri.startswith(PRIME):
            self.primed.set()
            return
        if self.inner is not None:
            await self.inner(message)


_primers: dict[int, _Primer] = {}


@asynccontextmanager
async def connect(target: Any, mode: str, *, message_handler: Any = None, **kwargs: Any) -> AsyncIterator[Client]:
    primer = _Primer(message_handler)
    client = Client(target, mode=mode, read_timeout_seconds=TIMEOUT, message_handler=primer, **kwargs)
    _primers[id(client)] = primer
    try:
        async with client:
            yield client
    finally:
        del _primers[id(client)]


async def wait_for(predicate: Any, timeout: float = TIMEOUT) -> None:
    # Imported here: stdio_child.py imports this module in a process without tests/ on its path.
    from helpers.waiting import eventually_async

    await eventually_async(predicate, timeout)


async def settle_legacy(client: Client, server: ResourceServer) -> None:
    """Wait until a legacy HTTP client's standalone GET stream delivers notifications.

    The SDK client opens it in the background after the handshake, and
    server notifications sent before it exists are dropped by design
    (they are best-effort), so tests expecting one wait for it first: a
    priming notification goes to every handshake-era session until this
    client reports one (the others' `connect` wrappers swallow it too).
    """
    primer = _primers[id(client)]
    deadline = asyncio.get_running_loop().time() + TIMEOUT
    while not primer.primed.is_set():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("the client's notification stream never opened")
        future = server.submit(_prime_all(server))
        assert future is not None, "the server is not running"
        await asyncio.wrap_future(future)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(primer.primed.wait(), 0.05)


async def _prime_all(server: ResourceServer) -> None:
    # Straight through each session's SDK connection: works whatever the engine's switches say.
    for session in server.registry.all():
        if isinstance(session, LegacySession):
            await session.connection.send_resource_updated(f"{PRIME}{session.id}")
