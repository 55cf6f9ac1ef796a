"""What a remote connection reports, as plain frozen values (the facade turns each into a signal)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from resources_qt.content import ResourceContent
from resources_qt.server.events import Traffic

__all__ = [
    "CatalogueListed",
    "NotificationReceived",
    "ReadFinished",
    "RemoteClosed",
    "RemoteConnected",
    "RemoteEvent",
    "RemoteFailed",
    "RemoteRead",
    "RemoteResource",
    "ServerSummary",
    "SubscriptionChanged",
    "TrafficSeen",
]


@dataclass(frozen=True)
class ServerSummary:
    """Who answered: its name, version and instructions, the negotiated era and what it offers."""

    target: str
    name: str
    version: str
    title: str
    instructions: str
    protocol_version: str
    modern: bool
    """True on 2026-07-28 (subscriptions/listen), False on the initialize handshake (resources/subscribe)."""
    capabilities: Mapping[str, Any]
    """The server's capabilities as the wire spells them (`{"resources": {"subscribe": true}, …}`)."""

    @property
    def can_subscribe(self) -> bool:
        resources = self.capabilities.get("resources")
        return isinstance(resources, Mapping) and bool(resources.get("subscribe"))

    @property
    def announces_list_changes(self) -> bool:
        resources = self.capabilities.get("resources")
        return isinstance(resources, Mapping) and bool(resources.get("listChanged"))

    @property
    def completes(self) -> bool:
        return self.capabilities.get("completions") is not None


@dataclass(frozen=True)
class RemoteResource:
    """One entry of the remote catalogue: a resource (`uri`) or a template (`uri_template`)."""

    name: str
    uri: str = ""
    uri_template: str = ""
    title: str = ""
    description: str = ""
    mime_type: str = ""
    size: int | None = None
    annotations: Mapping[str, Any] = field(default_factory=dict)
    """audience, priority, lastModified as the wire spells them."""
    icons: tuple[Mapping[str, Any], ...] = ()

    @property
    def is_template(self) -> bool:
        return bool(self.uri_template)

    @property
    def key(self) -> str:
        return self.uri_template or self.uri


@dataclass(frozen=True)
class RemoteRead:
    """One read of the remote server: its contents, or the exact error it answered, and how long it took."""

    uri: str
    contents: tuple[ResourceContent, ...] | None
    elapsed_ms: float
    error_code: int | None = None
    error_message: str = ""
    error_data: Any = None

    @property
    def ok(self) -> bool:
        return self.contents is not None


@dataclass(frozen=True)
class RemoteConnected:
    summary: ServerSummary


@dataclass(frozen=True)
class RemoteFailed:
    """The connection could not be made, or was lost: `message` is the one line to show."""

    message: str


@dataclass(frozen=True)
class RemoteClosed:
    """The connection is gone and everything it started has ended (its stdio child included)."""


@dataclass(frozen=True)
class CatalogueListed:
    resources: tuple[RemoteResource, ...]
    templates: tuple[RemoteResource, ...]
    pages: int
    """How many list pages it took (resources and templates together)."""
    truncated: bool = False
    """The listing went past MAX_PAGES pages or MAX_ENTRIES entries and was cut there."""


@dataclass(frozen=True)
class ReadFinished:
    read: RemoteRead


@dataclass(frozen=True)
class SubscriptionChanged:
    """`uri` is subscribed (or not any more); `error` says why a subscription was refused."""

    uri: str
    subscribed: bool
    error: str = ""


@dataclass(frozen=True)
class NotificationReceived:
    """A change notification from the server: list_changed (`uri` empty) or updated."""

    time: datetime
    method: str
    uri: str = ""


@dataclass(frozen=True)
class TrafficSeen:
    """One message to or from the server, for the traffic log (`session_id` is "remote")."""

    entry: Traffic


RemoteEvent = (
    RemoteConnected | RemoteFailed | RemoteClosed | CatalogueListed | ReadFinished | SubscriptionChanged
    | NotificationReceived | TrafficSeen
)  # fmt: skip
