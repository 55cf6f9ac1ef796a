"""Where a notification came from (button, edit, watch, poll, bus, cli), and its count and span when it goes out."""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from resources_qt.bus.events import Envelope
from resources_qt.notifications import Notification, Updated
from resources_qt.server.metrics_labels import NotificationOrigin

if TYPE_CHECKING:
    from resources_qt.server.engine import ResourceServer

__all__ = ["ORIGIN", "caller_origin", "kind_of", "send_instrumented", "tag_remote_origin"]

ORIGIN: contextvars.ContextVar[NotificationOrigin | None] = contextvars.ContextVar(
    "resource_studio_notification_origin", default=None
)
"""The origin of the notification being delivered in this task: set by the engine around a local send and by
`tag_remote_origin` for one from the bus."""

_NOTIFY_COMMAND = "notify-"
"""How the origins of `resource-studio notify`'s messages start (resources_qt.bus.publish)."""


def caller_origin(given: NotificationOrigin | None = None) -> NotificationOrigin:
    """The origin of a notification raised here: `given` (the live data says "watch" or "poll", the window's
    button "button"), else "edit" (the window's edits, `--watch` reloads, code)."""
    return given if given is not None else "edit"


async def tag_remote_origin(envelope: Envelope) -> None:
    """A bus listener registered before the relay's: marks what the relay delivers next in this task as
    coming from another replica ("bus") or from `resource-studio notify` ("cli")."""
    ORIGIN.set("cli" if envelope.origin.startswith(_NOTIFY_COMMAND) else "bus")


def kind_of(notification: Notification) -> str:
    return "updated" if isinstance(notification, Updated) else "list_changed"


async def send_instrumented(
    engine: ResourceServer, notification: Notification, send: Callable[[Notification], Awaitable[int]]
) -> int:
    """`send(notification)`, counted in `engine.metrics` and traced by `engine.tracing` when they are on."""
    metrics, tracing = engine.metrics, engine.tracing
    if metrics is None and tracing is None:
        return await send(notification)
    origin = ORIGIN.get() or "bus"
    kind = kind_of(notification)
    if tracing is None:
        recipients = await send(notification)
    else:
        with tracing.notification_span(kind=kind, uri=notification.uri, origin=origin) as span:
            recipients = await send(notification)
            span.set_attribute("resource_studio.notification.recipients", recipients)
    if metrics is not None:
        metrics.notification_sent(kind, origin)
    return recipients
