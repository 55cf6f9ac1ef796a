"""Fixtures for the engine's end-to-end tests: one shared HTTP server per module, anyio on asyncio."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from engine_support import build_catalogue

from resources_qt.server import ResourceServer


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def live_server() -> Iterator[ResourceServer]:
    server = ResourceServer(build_catalogue(), name="e2e", version="1.2.3", page_size=3,
                            instructions="Test server")
    server.enable_resource_notifications = True
    server.enable_resource_subscriptions = True
    server.start_http(port=0)
    yield server
    server.close()
