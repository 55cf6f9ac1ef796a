"""An in-process ResourceServer over real HTTP on 127.0.0.1, with plain Python readers (no snippets)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from resources_qt.collection import Resources


def text_reader(uri: str, params: Any) -> str:
    return f"content of {uri}"


def direct_collection(count: int, prefix: str = "docs://library/doc") -> Resources:
    resources = Resources()
    for i in range(count):
        resources.register_direct_resource(f"doc{i:06d}", f"{prefix}{i:06d}", f"Document {i}", "text/plain",
                                           text_reader)
    return resources


@contextmanager
def serving(resources: Resources, *, subscriptions: bool = False, page_size: int = 100) -> Iterator[Any]:
    """A started ResourceServer on a free port; yields it and stops it afterwards."""
    from resources_qt.server import ResourceServer

    server = ResourceServer(resources, name="bench", version="1", page_size=page_size)
    server.enable_resource_subscriptions = subscriptions
    server.enable_resource_notifications = subscriptions
    server.start_http("127.0.0.1", 0)
    try:
        yield server
    finally:
        started = time.perf_counter()
        server.close()
        if time.perf_counter() - started > 5:
            print("warning: the server took over 5 s to stop")
