"""The facade's engine half, built on first use: the server, its live data and the controller's hooks on them."""

from __future__ import annotations

import logging
from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING

from resources_qt.collection import Resources
from resources_qt.live.events import LiveListener
from resources_qt.project import Project
from resources_qt.server.events import Observer
from resources_qt.snippets import SnippetPool

if TYPE_CHECKING:  # the window's first paint must not wait for the SDK's server stack these import
    from resources_qt.bus.relay import Bus
    from resources_qt.live.runtime import LiveData
    from resources_qt.server.engine import ResourceServer

__all__ = ["EngineParts", "build_engine", "import_engine"]

logger = logging.getLogger(__name__)


# What building a server imports: the SDK's server stack (about half a second), uvicorn, starlette.
_ENGINE_MODULES = ("resources_qt.server.factory", "resources_qt.live.runtime")


class EngineParts:
    """A built `ResourceServer`, the `LiveData` driving it, and the unsubscribe calls of the hooks on them."""

    __slots__ = ("_unhook", "live", "server")

    def __init__(self, server: ResourceServer, live: LiveData, unhook: list[Callable[[], None]]) -> None:
        self.server = server
        self.live = live
        self._unhook = unhook

    def unhook(self) -> None:
        """Stop delivering server and live events to the controller (idempotent)."""
        unhook, self._unhook = self._unhook, []
        for call in unhook:
            call()


def import_engine() -> None:
    """Load what `build_engine` needs without building anything: the slow part, safe on any thread."""
    for name in _ENGINE_MODULES:
        import_module(name)


def build_engine(
    project: Project,
    resources: Resources,
    pool: SnippetPool,
    *,
    bus: Bus | None,
    on_server_event: Observer,
    on_live_event: LiveListener,
) -> EngineParts:
    """A server (not started) for `resources` as `project` configures it, with its live data and hooks.

    `project.resources` are the specs served (the live data watches those); `resources` is the
    collection already holding them, which the server takes over as it is.
    """
    from resources_qt.live.runtime import LiveData
    from resources_qt.server.factory import build_server

    server = build_server(project, resources)
    if bus is not None:
        server.set_bus(bus)
    # Watchers run while serving; instances are listed on every resources/list.
    live = LiveData(server, project, pool)
    hooks = [server.add_observer(on_server_event), live.add_listener(on_live_event)]
    logger.debug("Engine built for %d resources", len(project.resources))
    return EngineParts(server, live, hooks)

