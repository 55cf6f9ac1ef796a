"""Live data: template instances listed by a snippet, and updates driven by watched files and polling."""

from importlib import import_module
from typing import TYPE_CHECKING

from resources_qt.live.events import DataChanged, InstancesFailed, InstancesListed, LiveEvent

if TYPE_CHECKING:
    from resources_qt.live.instances import InstanceLister, parse_instances
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

_LAZY = {
    "LiveData": "resources_qt.live.runtime",
    "InstanceLister": "resources_qt.live.instances",
    "parse_instances": "resources_qt.live.instances",
}


def __getattr__(name: str) -> object:
    # The runtime drives a ResourceServer, whose SDK stack the window's first paint must not wait
    # for; and the project loader checks watch patterns from this package, so nothing here may
    # import the project package (instances does, through the snippet pool) until it is asked for.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'resources_qt.live' has no attribute {name!r}")
    return getattr(import_module(module), name)
