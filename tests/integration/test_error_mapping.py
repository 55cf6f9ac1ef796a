"""Resource-layer errors reach clients as the MCPError they stand for, in both eras; the traffic log agrees."""

from __future__ import annotations

import pytest
from engine_support import MODES, connect
from mcp.shared.exceptions import MCPError

from resources_qt.server import ResourceServer, Traffic

pytestmark = pytest.mark.anyio

_READS = [
    ("fail://raise", -32000, "No report stored for fail://raise", None),
    ("fail://no-reader", -32603, "Resource 'no_reader' has no reader", {"uri": "fail://no-reader"}),
    ("", -32602, "URI must not be empty", None),
]


@pytest.mark.parametrize("mode", MODES)
async def test_reader_and_lookup_errors_arrive_with_their_code_message_and_data(
    live_server: ResourceServer, mode: str
) -> None:
    wire: list[Traffic] = []
    unsubscribe = live_server.add_observer(
        lambda e: wire.append(e) if isinstance(e, Traffic) and e.direction == "out" else None
    )
    seen: list[tuple[int, str, object]] = []
    try:
        async with connect(live_server.url, mode) as client:
            for uri, _code, _message, _data in [*_READS, ("nothing://here", 0, "", None)]:
                with pytest.raises(MCPError) as info:
                    await client.read_resource(uri, cache_mode="bypass")
                seen.append((info.value.code, info.value.message, info.value.data))
    finally:
        unsubscribe()
    not_found = -32602 if mode == "2026-07-28" else -32002
    for (code, message, data), (_uri, want_code, want_message, want_data) in zip(seen, _READS, strict=False):
        assert code == want_code and want_message in message
        if want_data is not None:
            assert data == want_data
    assert seen[-1] == (not_found, "Resource not found: nothing://here", {"uri": "nothing://here"})
    logged = [e.message["error"] for e in wire if e.method == "resources/read" and "error" in e.message]
    assert [(e["code"], e["message"], e.get("data")) for e in logged] == seen
