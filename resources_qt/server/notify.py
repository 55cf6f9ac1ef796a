"""Delivering change notifications to subscribers, with per-session failure isolation."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from resources_qt.notifications import LIST_CHANGED, UPDATED, Notification, Updated
from resources_qt.server.events import NotificationSent, ServerEvent, Traffic
from resources_qt.server.outbox import SEND_QUEUE, Outbox
from resources_qt.server.sessions import Session, SessionRegistry

__all__ = ["LIST_CHANGED", "UPDATED", "EngineDelivery", "NotificationListener", "Notifier"]

logger = logging.getLogger(__name__)

NotificationListener = Callable[[str, str], None]
"""`callback(method, uri)`; uri is "" for list_changed."""


class Notifier:
    """Sends list_changed / updated to the registry's sessions (on the server loop) without waiting on any.

    Each session's notifications go to its own bounded outbox, drained by a
    task of its own (resources_qt.server.outbox): one client that stops
    reading cannot hold up the others, the sender, or the bus. A session
    whose outbox is full is dropped through `drop_session` (the engine closes
    its stream), as is one whose send fails; the others still get theirs.
    """

    def __init__(
        self,
        *,
        registry: SessionRegistry,
        emit: Callable[[ServerEvent], None],
        observing: Callable[[], bool],
        drop_session: Callable[[str], None],
        queue_size: Callable[[], int] = lambda: SEND_QUEUE,
        visible: Callable[[str, frozenset[str]], bool] | None = None,
    ) -> None:
        self._registry = registry
        # Whether a subscriber seeing by a view (its token's scopes) may see `uri`: others are not told.
        self._visible = visible
        self._emit = emit
        self._observing = observing
        self._drop_session = drop_session
        self._queue_size = queue_size
        self._listeners: list[NotificationListener] = []

    def add_listener(self, callback: NotificationListener) -> Callable[[], None]:
        """Call `callback(method, uri)` before each notification goes out (uri "" for list_changed).

        Called even when nobody is subscribed: a notification says content
        changed (the read cache drops what it kept), whoever hears it.
        """
        self._listeners = [*self._listeners, callback]

        def unsubscribe() -> None:
            self._listeners = [c for c in self._listeners if c is not callback]

        return unsubscribe

    def heard(self, method: str, uri: str) -> None:
        """Tell the listeners `method` happened for `uri` ("" for list_changed) without sending anything.

        For a change this server must know of though nobody here is to be told
        (another replica's notification, with this one's switch off).
        """
        for callback in self._listeners:
            try:
                callback(method, uri)
            except Exception:
                logger.exception("Notification listener %r failed on %s", callback, method)

    async def send(self, notification: Notification) -> int:
        """Queue `notification` for its audience; returns how many sessions it was queued for.

        list_changed goes to every listener; updated to every subscriber of exactly its URI (only its
        `session_id`, when it names one).
        """
        self.heard(notification.method, notification.uri)
        if isinstance(notification, Updated):
            targets = self._registry.subscribers(notification.uri)
            if notification.session_id is not None:
                targets = [s for s in targets if s.id == notification.session_id]
            if self._visible is not None and any(s.view is not None for s in targets):
                targets = self._seeing(notification.uri, targets)
        else:
            targets = self._registry.list_listeners()
        queued = sum(1 for session in targets if self._queue(session, notification))
        self._emit(NotificationSent(method=notification.method, uri=notification.uri, recipients=queued))
        await asyncio.sleep(0)  # a burst of notifications lets the senders drain between them
        return queued

    def _seeing(self, uri: str, targets: list[Session]) -> list[Session]:
        assert self._visible is not None
        verdicts: dict[frozenset[str], bool] = {}
        seeing = []
        for session in targets:
            view = session.view
            if view is not None and view not in verdicts:
                verdicts[view] = self._visible(uri, view)
            if view is None or verdicts[view]:
                seeing.append(session)
        return seeing

    def _queue(self, session: Session, notification: Notification) -> bool:
        outbox = session.outbox
        if outbox is None:
            outbox = session.outbox = Outbox(
                size=self._queue_size(),
                send=functools.partial(self._send, session),
                sent=functools.partial(self._sent, session),
                failed=functools.partial(self._failed, session),
            )
        if outbox.closed:
            return False  # on its way out already
        if outbox.put(notification):
            return True
        logger.warning(
            "Session %s is not reading its notifications: %d are waiting (the limit); dropping the session",
            session.id,
            outbox.size,
        )
        self._drop_session(session.id)
        return False

    @staticmethod
    async def _send(session: Session, notification: Notification) -> None:
        await session.send(notification)

    def _sent(self, session: Session, notification: Notification) -> None:
        if self._observing():
            method = notification.method
            message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
            if notification.uri:
                message["params"] = {"uri": notification.uri}
            self._emit(
                Traffic(time=datetime.now(UTC), session_id=session.id, direction="out", method=method, message=message)
            )

    def _failed(self, session: Session, error: Exception) -> None:
        # One broken subscriber must not stop the others or the server.
        logger.error("Sending to session %s failed; dropping the session", session.id, exc_info=error)
        self._drop_session(session.id)


class EngineDelivery:
    """The relay's local side: a server's notifier, gated by its switches for events from other replicas."""

    def __init__(
        self,
        *,
        notifier: Notifier,
        registry: SessionRegistry,
        notifications: Callable[[], bool],
        subscriptions: Callable[[], bool],
        wrap: Callable[[Notification, Callable[[Notification], Awaitable[int]]], Awaitable[int]] | None = None,
    ) -> None:
        self._notifier = notifier
        # `wrap(notification, send)` sends through `send` with the metrics and traces around it.
        self._wrap = wrap
        self._registry = registry
        self._notifications = notifications
        self._subscriptions = subscriptions

    async def deliver(self, notification: Notification) -> int:
        if self._wrap is not None:
            return await self._wrap(notification, self._notifier.send)
        return await self._notifier.send(notification)

    def changed(self, notification: Notification) -> None:
        # Locally an updated / list_changed drops cached answers even when nobody
        # is told (switches off); one from another replica must do the same.
        self._notifier.heard(notification.method, notification.uri)

    def holds_session(self, session_id: str) -> bool:
        return self._registry.get(session_id) is not None

    def accepts(self, notification: Notification) -> bool:
        return self._notifications() if notification.capability == "notifications" else self._subscriptions()
