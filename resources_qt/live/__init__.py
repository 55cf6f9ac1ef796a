"""Live data: template instances listed by a snippet, and updates driven by watched files and polling."""

from importlib import import_module
from typing import TYPE_CHECKING

from resources_qt.live.events import DataChanged, InstancesFailed, InstancesListed, LiveEvent
from resources_qt.live.instances import InstanceLister, parse_instances

if TYPE_CHECKING:
    from resources_qt.live.runtime import LiveData

__all__ = [
    "DataChanged",
    "InstanceLister",
    "InstancesFailed",
    "InstancesListed",
    "LiveData",
    "LiveEvent",
    "parse_instances",
]


def __getattr__(name: str) -> object:
    # The runtime drives a ResourceServer, whose SDK stack the window's first paint must not wait
    # for: the event types load at once, LiveData when a server is built.
    if name == "LiveData":
        return import_module("resources_qt.live.runtime").LiveData
    raise AttributeError(f"module 'resources_qt.live' has no attribute {name!r}")
