"""The notification bus: replicas of `serve` share list_changed/updated events through Redis pub/sub."""

from resources_qt.bus.events import (
    BusEvent,
    BusMessageError,
    Envelope,
    ListChanged,
    Updated,
    decode,
    encode,
    new_origin,
)
from resources_qt.bus.relay import Bus, LocalDelivery, NotificationRelay
from resources_qt.bus.urls import BUS_ENV, CHANNEL_ENV, EXTRA_HINT, BusDependencyError, check_bus_url, default_channel

__all__ = [
    "BUS_ENV",
    "CHANNEL_ENV",
    "EXTRA_HINT",
    "Bus",
    "BusDependencyError",
    "BusEvent",
    "BusMessageError",
    "Envelope",
    "ListChanged",
    "LocalDelivery",
    "NotificationRelay",
    "Updated",
    "check_bus_url",
    "decode",
    "default_channel",
    "encode",
    "new_origin",
]
