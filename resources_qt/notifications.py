"""A change to announce as one value: the catalogue changed, or one URI's content did (optionally for one session).

Every hop takes these values (the window's buttons and menu, `resource-studio notify`, the bus between replicas,
live data, edits, the engine, the notifier, each session): one method per hop, whatever the kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

__all__ = ["LIST_CHANGED", "UPDATED", "Capability", "ListChanged", "Notification", "Updated", "can_send"]

LIST_CHANGED = "notifications/resources/list_changed"
UPDATED = "notifications/resources/updated"

Capability = Literal["notifications", "subscriptions"]
"""The `[server]` switch a kind needs: `notifications` for list_changed, `subscriptions` for updated."""


@dataclass(frozen=True, slots=True)
class ListChanged:
    """The catalogue changed: every listening session is told."""

    method: ClassVar[str] = LIST_CHANGED
    capability: ClassVar[Capability] = "notifications"

    @property
    def uri(self) -> str:
        """No URI: "" (as the traffic log and listeners show it)."""
        return ""


@dataclass(frozen=True, slots=True)
class Updated:
    """The content at exactly `uri` changed: its subscribers are told (only `session_id`'s, when given)."""

    uri: str
    session_id: str | None = None

    method: ClassVar[str] = UPDATED
    capability: ClassVar[Capability] = "subscriptions"


Notification = ListChanged | Updated


def can_send(kind: type[Notification], *, running: bool, notifications: bool, subscriptions: bool) -> bool:
    """Whether a notification of `kind` can go out now: the server runs and the kind's switch is on.

    The one rule behind the Server page's buttons and the Server menu's actions.
    """
    switch = notifications if kind.capability == "notifications" else subscriptions
    return running and switch
