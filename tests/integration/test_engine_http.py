"""End to end over real Streamable HTTP with the SDK client, in both protocol eras."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from engine_support import MODES, PNG, blob_bytes, connect, settle_legacy, wait_for
from mcp.shared.exceptions import MCPError

from resources_qt import Resource
from resources_qt.notifications import ListChanged, Updated
from resources_qt.server import ResourceServer, SessionClosed, SessionOpened, SubscriptionAdded, Traffic
from resources_qt.server.reload import ChangeSummary, announce_changes

# resources/subscribe is deprecated at 2026-07-28; legacy sessions use it on purpose.
pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]


async def _all_pages(fetch: Any) -> tuple[list[Any], int]:
    items: list[Any] = []
    cursor: str | None = None
    pages = 0
    while True:
        result = await fetch(cursor)
        pages += 1
        items.extend(result.resources if hasattr(result, "resources") else result.resource_templates)
        cursor = result.next_cursor
        if cursor is None:
            return items, pages


@pytest.mark.parametrize("mode", MODES)
async def test_lists_split_direct_and_templates_with_pagination(live_server: ResourceServer, mode: str) -> None:
    async with connect(live_server.url, mode) as client:
        direct, pages = await _all_pages(lambda c: client.list_resources(cursor=c, cache_mode="bypass"))
        templates, _ = await _all_pages(lambda c: client.list_resource_templates(cursor=c, cache_mode="bypass"))
    assert [r.uri for r in direct] == [
        "config://app/settings", "images://logo.png", "tickets://0/attachment", "fail://raise",
        "fail://none", "fail://no-reader", "cache://hinted",
    ]
    assert pages == 3  # page_size=3
    assert [t.uri_template for t in templates] == ["tickets://{id}/attachment", "weather://{country}/{city}"]
    logo = direct[1]
    assert (logo.name, logo.title, logo.description, logo.mime_type) == ("logo", "Logo", "The logo", "image/png")


@pytest.mark.parametrize("mode", MODES)
async def test_bad_cursor_is_invalid_params(live_server: ResourceServer, mode: str) -> None:
    async with connect(live_server.url, mode) as client:
        with pytest.raises(MCPError) as info:
            await client.list_resources(cursor="not-ours", cache_mode="bypass")
    assert info.value.code == -32602


@pytest.mark.parametrize("mode", MODES)
async def test_reads_text_binary_and_template_instances(live_server: ResourceServer, mode: str) -> None:
    async with connect(live_server.url, mode) as client:
        text = await client.read_resource("config://app/settings", cache_mode="bypass")
        binary = await client.read_resource("images://logo.png", cache_mode="bypass")
        instance = await client.read_resource("tickets://42/attachment", cache_mode="bypass")
        special = await client.read_resource("tickets://0/attachment", cache_mode="bypass")
    (content,) = text.contents
    assert (content.uri, content.mime_type, content.text) == ("config://app/settings", "application/json",
                                                               '{"theme": "dark"}')
    (blob,) = binary.contents
    assert isinstance(blob, types.BlobResourceContents) and blob_bytes(blob) == PNG
    assert blob.mime_type == "image/png"
    (ticket,) = instance.contents
    assert ticket.uri == "tickets://42/attachment"  # the concrete URI is echoed
    assert ticket.text == "ticket 42 at tickets://42/attachment"
    assert special.contents[0].text == "special"  # direct wins over the template


@pytest.mark.parametrize(
    ("uri", "code", "fragment"),
    [
        ("fail://no-reader", -32603, "no reader"),
        ("fail://raise", -32000, "No report stored for fail://raise"),
        ("fail://none", -32000, "returned None for URI: fail://none"),
    ],
)
@pytest.mark.parametrize("mode", MODES)
async def test_reader_errors_carry_the_seed_codes(
    live_server: ResourceServer, mode: str, uri: str, code: int, fragment: str
) -> None:
    async with connect(live_server.url, mode) as client:
        with pytest.raises(MCPError) as info:
            await client.read_resource(uri, cache_mode="bypass")
    assert info.value.code == code
    assert fragment in info.value.message


@pytest.mark.parametrize(("mode", "code"), [("legacy", -32002), ("2026-07-28", -32602)])
async def test_unknown_uri_code_depends_on_the_era(live_server: ResourceServer, mode: str, code: int) -> None:
    async with connect(live_server.url, mode) as client:
        with pytest.raises(MCPError) as info:
            await client.read_resource("nothing://here", cache_mode="bypass")
    assert info.value.code == code
    assert info.value.data == {"uri": "nothing://here"}


async def test_cache_hints_on_the_modern_era_only(live_server: ResourceServer) -> None:
    wire: list[Traffic] = []
    unsubscribe = live_server.add_observer(
        lambda e: wire.append(e) if isinstance(e, Traffic) and e.direction == "out" else None
    )
    try:
        async with connect(live_server.url, "2026-07-28") as client:
            hinted = await client.read_resource("cache://hinted", cache_mode="bypass")
            plain = await client.read_resource("config://app/settings", cache_mode="bypass")
        async with connect(live_server.url, "legacy") as legacy:
            await legacy.read_resource("cache://hinted", cache_mode="bypass")
    finally:
        unsubscribe()
    assert (hinted.ttl_ms, hinted.cache_scope) == (60_000, "public")
    assert plain.ttl_ms == 0
    reads = [e.message["result"] for e in wire if e.method == "resources/read"]
    assert reads[0]["ttlMs"] == 60_000 and reads[0]["cacheScope"] == "public"
    assert "ttlMs" not in reads[-1] and "cacheScope" not in reads[-1]  # not part of the handshake-era wire


@pytest.mark.parametrize("mode", MODES)
async def test_completions_static_and_callable(live_server: ResourceServer, mode: str) -> None:
    ref = types.ResourceTemplateReference(uri="weather://{country}/{city}")
    async with connect(live_server.url, mode) as client:
        countries = await client.complete(ref, {"name": "country", "value": "b"})
        cities = await client.complete(ref, {"name": "city", "value": "Br"}, {"country": "Belgium"})
        with pytest.raises(MCPError) as info:
            await client.complete(types.ResourceTemplateReference(uri="x://{y}"), {"name": "y", "value": ""})
    assert countries.completion.values == ["Belgium", "Brazil"]
    assert cities.completion.values == ["Brussels", "Bruges"]
    assert info.value.code == -32602


async def test_legacy_subscribe_update_unsubscribe_and_per_session(live_server: ResourceServer) -> None:
    inbox_a: list[Any] = []
    inbox_b: list[Any] = []

    async def into(box: list[Any]) -> Any:
        async def handler(message: Any) -> None:
            if isinstance(message, types.ResourceUpdatedNotification):
                box.append(message.params.uri)
        return handler

    async with connect(live_server.url, "legacy", message_handler=await into(inbox_a)) as a, \
            connect(live_server.url, "legacy", message_handler=await into(inbox_b)) as b:
        await settle_legacy(a, live_server)
        await settle_legacy(b, live_server)
        await a.subscribe_resource("tickets://7/attachment")
        await b.subscribe_resource("tickets://7/attachment")
        await b.subscribe_resource("config://app/settings")
        sessions = {s.id: s for s in live_server.sessions() if s.subscriptions}
        assert len(sessions) == 2
        b_id = next(i for i, s in sessions.items() if "config://app/settings" in s.subscriptions)
        assert sessions[b_id].client_name and sessions[b_id].protocol_version == "2025-11-25"

        await live_server.notify(Updated("tickets://7/attachment"))
        await wait_for(lambda: inbox_a and inbox_b)
        await live_server.notify(Updated("config://app/settings", session_id=b_id))
        a_id = next(i for i in sessions if i != b_id)
        # Not subscribed: nothing goes out.
        await live_server.notify(Updated("config://app/settings", session_id=a_id))
        await wait_for(lambda: len(inbox_b) == 2)
        await a.unsubscribe_resource("tickets://7/attachment")
        await live_server.notify(Updated("tickets://7/attachment"))
        # A marker both still receive: whatever was sent before it has arrived by then.
        await a.subscribe_resource("tickets://marker/attachment")
        await b.subscribe_resource("tickets://marker/attachment")
        await live_server.notify(Updated("tickets://marker/attachment"))
        await wait_for(lambda: "tickets://marker/attachment" in inbox_a and "tickets://marker/attachment" in inbox_b)
    assert inbox_a == ["tickets://7/attachment", "tickets://marker/attachment"]
    assert inbox_b == ["tickets://7/attachment", "config://app/settings", "tickets://7/attachment",
                       "tickets://marker/attachment"]


async def test_modern_listen_receives_updates_and_list_changes(live_server: ResourceServer) -> None:
    async with connect(live_server.url, "2026-07-28") as client:
        async with client.listen(resources_list_changed=True, resource_subscriptions=["tickets://9/attachment"]) as sub:
            (info,) = [s for s in live_server.sessions() if s.kind == "listen"]
            assert info.subscriptions == {"tickets://9/attachment"} and info.protocol_version == "2026-07-28"
            await live_server.notify(Updated("tickets://8/attachment"))  # not subscribed
            await live_server.notify(Updated("tickets://9/attachment", session_id=info.id))
            live_server.resources.register_direct_resource("temp", "temp://x", "", "text/plain", lambda u: "")
            events = []
            async for event in sub:
                events.append(event)
                if len(events) == 2:
                    break
            live_server.resources.remove("temp")
        await wait_for(lambda: not [s for s in live_server.sessions() if s.kind == "listen"])
    assert [type(e).__name__ for e in events] == ["ResourceUpdated", "ResourcesListChanged"]
    assert events[0].uri == "tickets://9/attachment"


async def test_legacy_list_changed_on_add_and_remove_and_in_place_edit(live_server: ResourceServer) -> None:
    changes: list[str] = []

    async def handler(message: Any) -> None:
        if isinstance(message, types.ResourceListChangedNotification):
            changes.append("changed")
        elif isinstance(message, types.ResourceUpdatedNotification):
            changes.append(message.params.uri)

    async with connect(live_server.url, "legacy", message_handler=handler) as client:
        await settle_legacy(client, live_server)
        live_server.resources.add_resource(Resource(name="added", uri="added://1", reader=lambda uri: "a"))
        await wait_for(lambda: len(changes) == 1)
        listed = await client.list_resources(cursor=None)
        assert listed.resources  # the session keeps working
        live_server.resources.remove("added")
        await wait_for(lambda: len(changes) == 2)
        live_server.resources.get("settings").title = "Renamed"  # in place: no notification by itself
        # A marker sent afterwards: anything the edit sent would have arrived before it.
        await client.subscribe_resource("tickets://marker/attachment")
        await live_server.notify(Updated("tickets://marker/attachment"))
        await wait_for(lambda: "tickets://marker/attachment" in changes)
        assert changes == ["changed", "changed", "tickets://marker/attachment"]
        await live_server.notify(ListChanged())
        await wait_for(lambda: len(changes) == 4)
        assert changes[-1] == "changed"


@pytest.mark.parametrize("mode", MODES)
async def test_sessions_are_cleaned_up_on_disconnect(live_server: ResourceServer, mode: str) -> None:
    # The server is shared: a session of an earlier test may still be closing, so
    # only the sessions this test opens are looked at.
    earlier = {s.id for s in live_server.sessions()}
    seen: list[Any] = []
    unsubscribe = live_server.add_observer(seen.append)
    try:
        async with connect(live_server.url, mode) as client:
            if mode == "legacy":
                await client.subscribe_resource("config://app/settings")
                await wait_for(lambda: any(isinstance(e, SubscriptionAdded) for e in seen))
                ours = {s.id for s in live_server.sessions()} - earlier
            else:
                async with client.listen(resource_subscriptions=["config://app/settings"]):
                    ours = {s.id for s in live_server.sessions()} - earlier
        assert len(ours) == 1
        await wait_for(lambda: not ours & {s.id for s in live_server.sessions()})
        await wait_for(lambda: any(isinstance(e, SessionClosed) and e.session_id in ours for e in seen))
    finally:
        unsubscribe()
    opened = [e.info.id for e in seen if isinstance(e, SessionOpened) and e.info.id in ours]
    closed = [e.session_id for e in seen if isinstance(e, SessionClosed) and e.session_id in ours]
    assert opened == closed == sorted(ours)


async def test_capabilities_follow_the_switches_in_both_eras(live_server: ResourceServer) -> None:
    async with connect(live_server.url, "legacy") as legacy, connect(live_server.url, "auto") as modern:
        assert modern.protocol_version == "2026-07-28"
        for client in (legacy, modern):
            caps = client.server_capabilities
            assert caps.resources is not None and caps.resources.subscribe and caps.resources.list_changed
            assert caps.completions is not None
        assert legacy.server_info is not None and legacy.server_info.version == "1.2.3"
        assert legacy.instructions == "Test server"


async def test_a_blank_subscription_is_refused_and_edits_still_reach_the_others(
    live_server: ResourceServer,
) -> None:
    updates: list[str] = []

    async def handler(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(message.params.uri)

    async with connect(live_server.url, "legacy", message_handler=handler) as client, \
            connect(live_server.url, "2026-07-28") as modern:
        await settle_legacy(client, live_server)
        with pytest.raises(MCPError) as info:
            await client.subscribe_resource(" ")
        assert (info.value.code, info.value.error.data) == (-32602, {"uri": " "})
        with pytest.raises(MCPError) as listen_info:
            async with modern.listen(resource_subscriptions=["\t"]):
                pass
        assert (listen_info.value.code, listen_info.value.error.data) == (-32602, {"uri": "\t"})
        await client.subscribe_resource("config://app/settings")
        assert " " not in live_server.subscribed_uris()
        summary = ChangeSummary(changed=["settings"])
        await announce_changes(live_server, summary)
        await wait_for(lambda: updates == ["config://app/settings"])
