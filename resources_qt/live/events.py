"""What live data reports: instances listed or failed, and data changes that sent updates."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

__all__ = ["DataChanged", "InstancesFailed", "InstancesListed", "LiveEvent", "LiveListener"]


@dataclass(frozen=True, slots=True)
class InstancesFailed:
    """A template's `instances` snippet raised, timed out or returned something malformed."""

    resource: str
    message: str
    time: float


@dataclass(frozen=True, slots=True)
class InstancesListed:
    """A template's `instances` snippet answered (`count` instances); clears an earlier failure."""

    resource: str
    count: int
    time: float


@dataclass(frozen=True, slots=True)
class DataChanged:
    """A resource's data changed: watched files moved, or a polled read gave new content.

    `uris` are the subscribed URIs that were sent `updated`; `list_changed`
    says the template's set of instances changed and `list_changed` went out.
    """

    resource: str
    cause: Literal["files", "interval"]
    uris: tuple[str, ...]
    list_changed: bool
    time: float
    paths: tuple[str, ...] = ()


LiveEvent = InstancesFailed | InstancesListed | DataChanged
LiveListener = Callable[[LiveEvent], None]
