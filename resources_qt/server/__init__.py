"""The MCP server engine: serves a Resources collection over stdio and Streamable HTTP."""

from resources_qt.server.engine import ResourceServer
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
)
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
]
