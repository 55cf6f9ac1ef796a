"""NotificationRelay: the one seam between a server's notifications, its own subscribers and the bus."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Protocol

from resources_qt.bus.events import BusEvent, Envelope, ListChanged, Updated
from resources_qt.notifications import Notification

__all__ = ["Bus", "LocalDelivery", "NotificationRelay"]

logger = logging.getLogger(__name__)


class LocalDelivery(Protocol):
    """What a server does with a notification for its own subscribers."""

    async def deliver(self, notification: Notification) -> int:
        """Send `notification` to this server's own audience for it; returns how many got it."""
        ...

    def changed(self, notification: Notification) -> None:
        """Another replica's `notification` is not delivered here: still let this server know what changed."""
        ...

    def holds_session(self, session_id: str) -> bool:
        """True when the session lives on this server."""
        ...

    def accepts(self, notification: Notification) -> bool:
        """False when this server's switches turn such notifications off (checked for remote events)."""
        ...


class Bus(Protocol):
    """A replica's endpoint on a shared channel (RedisBus is the one shipped)."""

    origin: str
    channel: str
    url: str

    @property
    def connected(self) -> bool: ...

    def add_state_listener(self, listener: Callable[[bool], None]) -> Callable[[], None]: ...

    def post(self, event: BusEvent, *, session_id: str | None = None, key: str | None = None) -> bool: ...

    def add_listener(self, listener: Callable[[Envelope], Awaitable[None]]) -> Callable[[], None]: ...

    async def start(self) -> None: ...

    async def close(self) -> None: ...


class NotificationRelay:
    """Every notification a server sends passes here exactly once.

    With a bus it is posted with this replica's origin (queued, never
    awaited: Redis being slow or away must not hold up the sender), and
    delivered to this server's own subscribers at once. Events from other replicas are
    delivered to the local subscribers; the bus already drops this
    replica's own echoes, which were delivered when sent. A per-session
    event for a session that lives here is not posted at all: no other
    replica holds it.

    A notification sent with a `key` (a change several replicas can raise on
    their own, such as each reloading one shared project file) is delivered
    at most once per key here, whether it came from this replica or another;
    keys are remembered for `key_ttl` seconds, at most `max_keys` of them.
    A keyed event from another replica is held up to `hold` seconds first:
    if this replica raises the same change meanwhile (its own reload), it is
    delivered then, once the new content is here to be read; otherwise when
    the hold ends. At most `max_keys` events are held.
    """

    def __init__(
        self,
        local: LocalDelivery,
        bus: Bus | None = None,
        *,
        key_ttl: float = 120.0,
        max_keys: int = 4096,
        hold: float = 3.0,
    ) -> None:
        if not (key_ttl > 0 and max_keys > 0 and hold >= 0):
            raise ValueError("key_ttl and max_keys must be positive, hold not negative")
        self.local = local
        self.bus = bus
        self.key_ttl = key_ttl
        self.max_keys = max_keys
        self.hold = hold
        self._seen: OrderedDict[str, float] = OrderedDict()
        self._held: dict[str, asyncio.TimerHandle] = {}
        self._deliveries: set[asyncio.Task[None]] = set()
        self._unlisten: Callable[[], None] | None = None

    async def start(self) -> None:
        """Start the bus (if any) on the running loop; returns at once, whether Redis is up or not."""
        if self.bus is None or self._unlisten is not None:
            return
        self._unlisten = self.bus.add_listener(self._on_remote)
        await self.bus.start()

    async def close(self) -> None:
        for handle in self._held.values():
            handle.cancel()
        self._held.clear()
        for task in list(self._deliveries):
            task.cancel()
        if self.bus is None:
            return
        if self._unlisten is not None:
            self._unlisten()
            self._unlisten = None
        await self.bus.close()

    async def send(self, notification: Notification, *, key: str | None = None) -> int:
        """Deliver `notification` here and post it to the other replicas (a session held here is not posted)."""
        held = self._release(key)
        if not self._first_time(key):
            return 0
        session_id = notification.session_id if isinstance(notification, Updated) else None
        # Posted first (it only queues), so the other replicas fan out while this one does.
        if self.bus is not None and not held and (session_id is None or not self.local.holds_session(session_id)):
            # On the wire the event names no session: the envelope carries it.
            event = Updated(notification.uri) if isinstance(notification, Updated) else ListChanged()
            self.bus.post(event, session_id=session_id, key=key)
        return await self.local.deliver(notification)

    def _release(self, key: str | None) -> bool:
        # This replica raised a change another one already announced: deliver it
        # now (the caller does), and leave the publishing to the first replica.
        handle = self._held.pop(key, None) if key is not None else None
        if handle is None:
            return False
        handle.cancel()
        return True

    async def _on_remote(self, envelope: Envelope) -> None:
        event = envelope.event
        # Not delivered here, but the content changed all the same: locally an
        # updated / list_changed drops cached answers whoever is told (issue 14).
        if not self.local.accepts(event):
            self.local.changed(event)
            return
        if (
            isinstance(event, Updated)
            and envelope.session_id is not None
            and not self.local.holds_session(envelope.session_id)
        ):
            self.local.changed(event)
            return  # the session lives on another replica (or nowhere)
        key = envelope.key
        if key is not None:
            if key in self._held or self._seen_recently(key):
                return
            if self.hold > 0 and len(self._held) < self.max_keys:
                loop = asyncio.get_running_loop()
                self._held[key] = loop.call_later(self.hold, self._end_hold, envelope)
                return
        await self._deliver_remote(envelope)

    def _end_hold(self, envelope: Envelope) -> None:
        assert envelope.key is not None
        if self._held.pop(envelope.key, None) is None:
            return
        task = asyncio.get_running_loop().create_task(self._deliver_remote(envelope))
        self._deliveries.add(task)
        task.add_done_callback(self._deliveries.discard)

    async def _deliver_remote(self, envelope: Envelope) -> None:
        if not self._first_time(envelope.key):
            return
        event = envelope.event
        try:
            await self.local.deliver(_notification(envelope))
        except Exception:  # a held delivery runs in its own task: nothing above it would log this
            logger.exception("Delivering %s from replica %s failed", type(event).__name__, envelope.origin)
            return
        logger.debug("Delivered %s from replica %s", type(event).__name__, envelope.origin)

    def _seen_recently(self, key: str) -> bool:
        at = self._seen.get(key)
        return at is not None and time.monotonic() - at <= self.key_ttl

    def _first_time(self, key: str | None) -> bool:
        """True (and remembered) unless `key` was delivered here within key_ttl; True for no key."""
        if key is None:
            return True
        now = time.monotonic()
        while self._seen:
            oldest, at = next(iter(self._seen.items()))
            if now - at <= self.key_ttl and len(self._seen) < self.max_keys:
                break
            del self._seen[oldest]
        if key in self._seen:
            return False
        self._seen[key] = now
        return True


def _notification(envelope: Envelope) -> Notification:
    """The notification an envelope carries (an `Updated` for one session names it, as the envelope does)."""
    event = envelope.event
    if isinstance(event, Updated) and envelope.session_id is not None:
        return Updated(event.uri, session_id=envelope.session_id)
    return event
