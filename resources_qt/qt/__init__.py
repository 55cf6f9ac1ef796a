"""The Qt facade over the engine: widgets talk to ServerController, never to the engine itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

from resources_qt.qt.compat import guard_none_refcount

guard_none_refcount()

if TYPE_CHECKING:
    from resources_qt.qt.controller import ServerController
    from resources_qt.server.events import SessionInfo, TrafficEntry
    from resources_qt.server.reading import PreviewOutcome

__all__ = ["GuiThreadCollector", "PreviewOutcome", "ServerController", "SessionInfo", "TrafficEntry"]


def __getattr__(name: str) -> object:
    # Lazy, so that importing resources_qt.qt.compat (the studio does, first
    # thing) does not pull in the engine.
    if name == "GuiThreadCollector":
        from resources_qt.qt.gc_guard import GuiThreadCollector

        return GuiThreadCollector
    if name == "ServerController":
        from resources_qt.qt.controller import ServerController

        return ServerController
    if name in ("SessionInfo", "TrafficEntry"):
        from resources_qt.server import events

        return getattr(events, name)
    if name == "PreviewOutcome":
        from resources_qt.server.reading import PreviewOutcome

        return PreviewOutcome
    raise AttributeError(f"module 'resources_qt.qt' has no attribute {name!r}")
