"""Client mode: the studio as an MCP client of any server (Qt-free; the facade is resources_qt.qt.remote)."""

from resources_qt.client.errors import RemoteError
from resources_qt.client.events import (
    CatalogueListed,
    NotificationReceived,
    ReadFinished,
    RemoteClosed,
    RemoteConnected,
    RemoteEvent,
    RemoteFailed,
    RemoteRead,
    RemoteResource,
    ServerSummary,
    SubscriptionChanged,
    TrafficSeen,
)
from resources_qt.client.remote import RemoteClient
from resources_qt.client.target import ERAS, Target, parse_target

__all__ = [
    "ERAS",
    "CatalogueListed",
    "NotificationReceived",
    "ReadFinished",
    "RemoteClient",
    "RemoteClosed",
    "RemoteConnected",
    "RemoteError",
    "RemoteEvent",
    "RemoteFailed",
    "RemoteRead",
    "RemoteResource",
    "ServerSummary",
    "SubscriptionChanged",
    "Target",
    "TrafficSeen",
    "parse_target",
]
