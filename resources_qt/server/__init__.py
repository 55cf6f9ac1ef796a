"""The MCP server engine: serves a Resources collection over stdio and Streamable HTTP."""

from importlib import import_module
from typing import TYPE_CHECKING

from resources_qt.server.events import (
    NotificationSent,
    Observer,
    ServerEvent,
    ServerFailed,
    ServerStarted,
    ServerStopped,
    SessionClosed,
    SessionInfo,
    SessionOpened,
    SubscriptionAdded,
    SubscriptionRemoved,
    Traffic,
    TrafficEntry,
    TransportStopped,
)

if TYPE_CHECKING:
    from resources_qt.server.engine import ResourceServer
    from resources_qt.server.reading import PreviewOutcome

__all__ = [
    "NotificationSent",
    "Observer",
    "PreviewOutcome",
    "ResourceServer",
    "ServerEvent",
    "ServerFailed",
    "ServerStarted",
    "ServerStopped",
    "SessionClosed",
    "SessionInfo",
    "SessionOpened",
    "SubscriptionAdded",
    "SubscriptionRemoved",
    "Traffic",
    "TrafficEntry",
    "TransportStopped",
]

# The engine and the preview types load on first use: the window imports the event types while it
# starts, and the SDK's server stack (about half a second) only when something serves or reads.
_LAZY = {"ResourceServer": "resources_qt.server.engine", "PreviewOutcome": "resources_qt.server.reading"}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'resources_qt.server' has no attribute {name!r}")
