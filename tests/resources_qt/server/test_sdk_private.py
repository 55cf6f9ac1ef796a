"""Each private SDK access of resources_qt.server.sdk_private still exists in the installed SDK."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from resources_qt.server.sdk_private import http_transports, live_session_manager, request_connection


def test_the_session_manager_is_none_before_the_app_and_the_manager_after() -> None:
    server: Server[object] = Server("private-check")
    assert live_session_manager(server) is None
    server.streamable_http_app()
    manager = live_session_manager(server)
    assert isinstance(manager, StreamableHTTPSessionManager)
    assert manager is server.session_manager  # the public property names the same object


def test_the_manager_keeps_its_transports_in_a_dict_by_session_id() -> None:
    server: Server[object] = Server("private-check")
    server.streamable_http_app()
    manager = server.session_manager
    assert http_transports(manager) == {}
    assert isinstance(http_transports(manager), dict)


def test_a_request_reaches_its_connection_through_the_server_session() -> None:
    # The attribute is set in ServerSession.__init__; reading the class source keeps this test free of a live
    # session while still failing the day the SDK renames it.
    import inspect

    assert "self._connection" in inspect.getsource(ServerSession.__init__)
    marker = object()
    assert request_connection(SimpleNamespace(session=SimpleNamespace(_connection=marker))) is marker
    assert request_connection(SimpleNamespace(session=None)) is None
    with pytest.raises(AttributeError):
        request_connection(SimpleNamespace(session=SimpleNamespace()))
