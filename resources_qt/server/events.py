"""Pure event records the engine hands its observers (delivered on the server thread)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

__all__ = [
    "BusStateChanged",
    "NotificationSent",
    "Observer",
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

Direction = Literal["in", "out"]


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One connected session: a handshake-era session or a 2026-07-28 listen stream."""

    id: str
    transport: str
    client_name: str
    client_version: str
    protocol_version: str
    connected_at: datetime
    subscriptions: frozenset[str] = frozenset()
    kind: Literal["session", "listen"] = "session"
    subject: str = ""
    """Who its bearer token speaks for (`sub`), with `[server.auth]`; never the token."""
    client_id: str = ""
    """The OAuth client the token was issued to (`client_id` / `azp`)."""


@dataclass(frozen=True, slots=True)
class ServerStarted:
    """The server listens: `url` is the HTTP endpoint, or "stdio"."""

    url: str
    transport: Literal["http", "stdio"]


@dataclass(frozen=True, slots=True)
class ServerStopped:
    """The server thread ended normally."""


@dataclass(frozen=True, slots=True)
class TransportStopped:
    """One transport ended while others keep serving (the last one ending is ServerStopped / ServerFailed).

    `message` says why when it failed ("" when asked to stop, or its client left);
    `remaining` names the transports still served.
    """

    transport: Literal["http", "stdio"]
    message: str = ""
    remaining: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ServerFailed:
    """The server thread failed; `message` says why in one line."""

    message: str


@dataclass(frozen=True, slots=True)
class SessionOpened:
    info: SessionInfo


@dataclass(frozen=True, slots=True)
class SessionClosed:
    session_id: str


@dataclass(frozen=True, slots=True)
class SubscriptionAdded:
    session_id: str
    uri: str


@dataclass(frozen=True, slots=True)
class SubscriptionRemoved:
    session_id: str
    uri: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Traffic:
    """One JSON-RPC message in or out; `session_id` is None for sessionless 2026-07-28 requests."""

    time: datetime
    session_id: str | None
    direction: Direction
    method: str
    message: Mapping[str, Any] = field(default_factory=dict)
    subject: str = ""
    """Who the request's bearer token speaks for, with `[server.auth]` ("" otherwise); never the token."""
    client_id: str = ""


TrafficEntry = Traffic
"""The name the Qt facade's `traffic_logged` batches use."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NotificationSent:
    """A change notification went out to `recipients` subscribers (`uri` empty for list_changed)."""

    method: str
    uri: str
    recipients: int


@dataclass(frozen=True, slots=True)
class BusStateChanged:
    """The notification bus connected (or was lost); `url` has any password redacted."""

    connected: bool
    url: str
    channel: str


ServerEvent = (
    BusStateChanged
    | ServerStarted
    | ServerStopped
    | ServerFailed
    | TransportStopped
    | SessionOpened
    | SessionClosed
    | SubscriptionAdded
    | SubscriptionRemoved
    | Traffic
    | NotificationSent
)

Observer = Callable[[ServerEvent], None]
