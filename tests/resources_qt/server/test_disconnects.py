"""A client that hangs up before its POST body arrives is logged as INFO, not as a server error with a traceback."""

from __future__ import annotations

import logging
import socket
import sys
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from helpers.waiting import eventually

from resources_qt.collection import Resources
from resources_qt.server import ResourceServer
from resources_qt.server.disconnects import SDK_HTTP_LOGGER, ClientDisconnectFilter


def _reader(uri: str, params: Any) -> str:
    return "hello"


@pytest.fixture
def server() -> Iterator[ResourceServer]:
    resources = Resources()
    resources.register_direct_resource("doc", "docs://doc", "", "text/plain", _reader)
    engine = ResourceServer(resources, name="hangups", version="1")
    engine.start_http("127.0.0.1", 0)
    try:
        yield engine
    finally:
        engine.close()


def _post_half_a_body(url: str) -> None:
    """Announce a 4 KB JSON body, send a few bytes of it, and close the socket."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    head = (
        f"POST {parts.path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        "Content-Length: 4096\r\n\r\n"
    )
    with socket.create_connection((host, port), timeout=5) as sock:
        sock.sendall(head.encode() + b'{"jsonrpc": "2.0", ')


def test_a_hang_up_mid_body_is_info_not_error(server: ResourceServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=SDK_HTTP_LOGGER)
    assert server.url is not None
    _post_half_a_body(server.url)

    def demoted() -> list[logging.LogRecord]:
        return [r for r in caplog.records if r.name == SDK_HTTP_LOGGER and "disconnected" in r.getMessage()]

    # If this wait fails the SDK no longer logs a hang-up this way: check that the filter still has work to do.
    eventually(lambda: bool(demoted()), 10.0, what="the demoted hang-up record")
    record = demoted()[0]
    assert record.levelno == logging.INFO
    assert record.exc_info is None
    assert "Error handling POST request" in record.getMessage()
    # The autouse fixture fails the test if any ERROR record was left.


def test_other_sdk_errors_pass_untouched() -> None:
    try:
        raise ValueError("a real bug")
    except ValueError:
        info = sys.exc_info()
    record = logging.LogRecord(SDK_HTTP_LOGGER, logging.ERROR, __file__, 1, "Error handling POST request", (), info)
    assert ClientDisconnectFilter().filter(record)
    assert record.levelno == logging.ERROR
    assert record.exc_info is not None
