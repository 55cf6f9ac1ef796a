"""What live data reports: instances listed or failed, and data changes that sent updates."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from resources_qt.project import ResourceSpec

__all__ = [
    "DataChanged",
    "InstancesFailed",
    "InstancesListed",
    "LiveEvent",
    "LiveListener",
    "WatchKind",
    "watch_kinds",
]

WatchKind = Literal["files", "interval", "both"]


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
    says the template's set of instances changed and `list_changed` went out;
    `paths` are the changed files of a "files" change, relative to the project
    folder, in the order they were seen (at most the first 1,000 of a burst; none for a poll).
    """

    resource: str
    cause: Literal["files", "interval"]
    uris: tuple[str, ...]
    list_changed: bool
    time: float
    paths: tuple[str, ...] = ()


LiveEvent = InstancesFailed | InstancesListed | DataChanged
LiveListener = Callable[[LiveEvent], None]


def watch_kinds(specs: Iterable[ResourceSpec]) -> dict[str, WatchKind]:
    """Resources whose data is watched, and how (what `LiveData.watching` reports, and the window
    shows before the live data exists)."""
    out: dict[str, WatchKind] = {}
    for spec in specs:
        watch = spec.watch
        if watch is None or watch.is_empty:
            continue
        out[spec.name] = "both" if watch.files and watch.interval else ("files" if watch.files else "interval")
    return out
