"""The session registry: handshake-era sessions and 2026-07-28 listen streams, with their subscriptions."""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from mcp.server.subscriptions import InMemorySubscriptionBus, ResourcesListChanged, ResourceUpdated

from resources_qt.notifications import Notification, Updated
from resources_qt.server.events import SessionInfo
from resources_qt.server.outbox import Outbox

if TYPE_CHECKING:
    from resources_qt.server.auth.visibility import Caller

__all__ = ["LegacySession", "ListenSession", "Session", "SessionRegistry"]

logger = logging.getLogger(__name__)


class Session(ABC):
    """A subscriber the engine can notify; subclasses know how to reach their client."""

    kind: Literal["session", "listen"] = "session"

    def __init__(
        self,
        *,
        session_id: str,
        transport: str,
        client_name: str,
        client_version: str,
        protocol_version: str,
        subscriptions: Iterable[str] = (),
        wants_list_changed: bool = True,
        view: frozenset[str] | None = None,
        subject: str = "",
        client_id: str = "",
    ) -> None:
        self.id = session_id
        self.transport = transport
        self.client_name = client_name
        self.client_version = client_version
        self.protocol_version = protocol_version
        self.connected_at = datetime.now(UTC)
        self.subscriptions: set[str] = set(subscriptions)
        self.wants_list_changed = wants_list_changed
        self.view = view
        """The scopes its caller sees by (`resources_qt.server.auth.View`; None: everything)."""
        self.subject = subject
        self.client_id = client_id
        self.outbox: Outbox | None = None
        """Its notifications waiting to go out (resources_qt.server.notify makes it on the first one)."""

    def info(self) -> SessionInfo:
        return SessionInfo(
            id=self.id,
            transport=self.transport,
            client_name=self.client_name,
            client_version=self.client_version,
            protocol_version=self.protocol_version,
            connected_at=self.connected_at,
            subscriptions=frozenset(self.subscriptions),
            kind=self.kind,
            subject=self.subject,
            client_id=self.client_id,
        )

    @abstractmethod
    async def send(self, notification: Notification) -> None:
        """Deliver `notification` to this session's client."""

    def close(self) -> None:  # noqa: B027 - optional: only listen streams have something to end
        """Ask the transport side to end this subscriber (server stop)."""

    def end(self) -> None:
        """End this subscriber now, its stream closed: its client is not reading what it is sent."""
        self.close()

    def stop_sending(self) -> None:
        """Drop what is waiting to be sent and send nothing more (the session has left the registry)."""
        if self.outbox is not None:
            self.outbox.close()


class LegacySession(Session):
    """A handshake-era session; notifications ride its standalone channel (GET stream or stdio)."""

    kind: Literal["session", "listen"] = "session"

    def __init__(self, *, connection: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # mcp.server.connection.Connection; its notify helpers are best-effort and never raise.
        self.connection = connection
        self.ender: Callable[[], None] | None = None
        """Closes the session's streams and ends it (set by the engine for HTTP sessions)."""

    @classmethod
    def opened_by(
        cls,
        connection: Any,
        *,
        session_id: str,
        transport: str,
        params: Mapping[str, Any],
        result: object,
        caller: Caller,
    ) -> LegacySession:
        """The session an accepted `initialize` (its `params` and `result`) opened for `caller`."""
        info: Mapping[str, Any] = params.get("clientInfo") or {}
        version = result.get("protocolVersion", "") if isinstance(result, Mapping) else ""
        return cls(
            connection=connection,
            session_id=session_id,
            transport=transport,
            client_name=str(info.get("name", "")),
            client_version=str(info.get("version", "")),
            protocol_version=str(version or params.get("protocolVersion", "")),
            view=caller.view,
            subject=caller.subject,
            client_id=caller.client_id,
        )

    async def send(self, notification: Notification) -> None:
        # The SDK's connection has one helper per method: the one place a kind picks its wire call.
        if isinstance(notification, Updated):
            await self.connection.send_resource_updated(notification.uri)
        else:
            await self.connection.send_resource_list_changed()

    def end(self) -> None:
        # Over stdio the one session is the process's client: it leaves the registry, the wire stays.
        if self.ender is not None:
            self.ender()


class ListenSession(Session):
    """A 2026-07-28 `subscriptions/listen` stream, fed through its own SDK subscription bus."""

    kind: Literal["session", "listen"] = "listen"

    def __init__(self, *, bus: InMemorySubscriptionBus, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bus = bus
        self.closer: Any = None

    async def send(self, notification: Notification) -> None:
        if isinstance(notification, Updated):
            await self.bus.publish(ResourceUpdated(notification.uri))
        else:
            await self.bus.publish(ResourcesListChanged())

    def close(self) -> None:
        if self.closer is not None:
            self.closer()


class SessionRegistry:
    """Thread-safe map of live sessions; the GUI reads snapshots while the server thread mutates."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[str, Session] = {}

    def add(self, session: Session) -> None:
        with self._lock:
            self._sessions[session.id] = session

    def remove(self, session_id: str) -> Session | None:
        with self._lock:
            return self._sessions.pop(session_id, None)

    def get(self, session_id: str) -> Session | None:
        with self._lock:
            return self._sessions.get(session_id)

    def subscribe(self, session_id: str, uri: str, *, limit: int | None = None) -> Literal["added", "known", "full"]:
        """Record a subscription: "added", "known" (unknown session or held already) or "full" (at `limit`)."""
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None or uri in session.subscriptions:
                return "known"
            if limit is not None and len(session.subscriptions) >= limit:
                return "full"
            session.subscriptions.add(uri)
            return "added"

    def unsubscribe(self, session_id: str, uri: str) -> bool:
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None or uri not in session.subscriptions:
                return False
            session.subscriptions.discard(uri)
            return True

    def subscribers(self, uri: str) -> list[Session]:
        with self._lock:
            return [s for s in self._sessions.values() if uri in s.subscriptions]

    def list_listeners(self) -> list[Session]:
        with self._lock:
            return [s for s in self._sessions.values() if s.wants_list_changed]

    def all(self) -> list[Session]:
        with self._lock:
            return list(self._sessions.values())

    def subscribed_uris(self) -> set[str]:
        with self._lock:
            return {uri for s in self._sessions.values() for uri in s.subscriptions}

    def infos(self) -> list[SessionInfo]:
        with self._lock:
            return [s.info() for s in self._sessions.values()]

    def clear(self) -> list[Session]:
        with self._lock:
            gone = list(self._sessions.values())
            self._sessions.clear()
            return gone

    def count(self, kind: str) -> int:
        with self._lock:
            return sum(1 for s in self._sessions.values() if s.kind == kind)

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)
