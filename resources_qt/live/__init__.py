"""Live data: template instances listed by a snippet, and updates driven by watched files and polling."""

from resources_qt.live.events import DataChanged, InstancesFailed, InstancesListed, LiveEvent
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
