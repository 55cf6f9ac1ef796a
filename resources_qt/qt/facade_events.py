"""The facade's own events through its pump, and which signal each engine or facade event becomes."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from resources_qt.live.events import DataChanged, InstancesFailed, InstancesListed
from resources_qt.server.events import (
    BusStateChanged,
    NotificationSent,
    ServerFailed,
    ServerStarted,
    ServerStopped,
    SessionClosed,
    SessionOpened,
    SubscriptionAdded,
    SubscriptionRemoved,
    TransportStopped,
)
from resources_qt.server.reading import PreviewOutcome

if TYPE_CHECKING:
    from resources_qt.qt.controller import ServerController

__all__ = ["CompletionsDone", "PreviewDone", "TransportFailed", "event_emitters"]


class PreviewDone:
    """A finished preview, carried through the pump."""

    __slots__ = ("outcome",)

    def __init__(self, outcome: PreviewOutcome) -> None:
        self.outcome = outcome


class TransportFailed:
    """A transport that did not start while another one serves."""

    __slots__ = ("message", "transport")

    def __init__(self, transport: str, message: str) -> None:
        self.transport = transport
        self.message = message


class CompletionsDone:
    """A completion request's answer, carried through the pump."""

    __slots__ = ("request_id", "values")

    def __init__(self, request_id: str, values: list[str]) -> None:
        self.request_id = request_id
        self.values = values


def event_emitters(controller: ServerController) -> dict[type, Callable[[Any], None]]:
    """Which signal each engine event becomes: one entry per event type, looked up by its type."""
    return {
        SessionOpened: lambda e: controller.session_opened.emit(e.info),
        SessionClosed: lambda e: controller.session_closed.emit(e.session_id),
        SubscriptionAdded: lambda e: controller.subscription_added.emit(e.session_id, e.uri),
        SubscriptionRemoved: lambda e: controller.subscription_removed.emit(e.session_id, e.uri),
        NotificationSent: lambda e: controller.notification_sent.emit(e.method, e.uri, e.recipients),
        ServerStarted: lambda e: controller.server_started.emit(e.url),
        ServerStopped: lambda e: controller.server_stopped.emit(),
        ServerFailed: lambda e: controller.server_failed.emit(e.message),
        TransportStopped: lambda e: controller.transport_stopped.emit(e.transport, e.message),
        TransportFailed: lambda e: controller.transport_stopped.emit(e.transport, e.message),
        PreviewDone: lambda e: controller.preview_finished.emit(e.outcome),
        CompletionsDone: lambda e: controller.completions_ready.emit(e.request_id, e.values),
        DataChanged: lambda e: controller.data_changed.emit(e.resource, e.time, list(e.uris), list(e.paths)),
        InstancesFailed: lambda e: controller.instances_failed.emit(e.resource, e.message),
        InstancesListed: lambda e: controller.instances_listed.emit(e.resource, e.count),
        BusStateChanged: lambda e: controller.bus_state_changed.emit(e.connected, e.url),
    }
