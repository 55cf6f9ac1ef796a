"""The words the metrics label with: read outcomes, notification origins and the unmatched resource (no imports)."""

from __future__ import annotations

from typing import Final, Literal

__all__ = ["LATENCY_BUCKETS", "NOTIFICATION_ORIGINS", "OUTCOMES", "UNMATCHED", "NotificationOrigin", "Outcome"]

Outcome = Literal["ok", "error", "not_found", "timeout", "busy", "cached"]
OUTCOMES: Final[tuple[Outcome, ...]] = ("ok", "error", "not_found", "timeout", "busy", "cached")

NotificationOrigin = Literal["button", "edit", "watch", "poll", "bus", "cli"]
"""Who raised a notification: the studio's Notify buttons, an edit (in the window, or a `--watch` reload of the
project file), a watched data file, an interval poll, another replica over the bus, `resource-studio notify`."""
NOTIFICATION_ORIGINS: Final[tuple[NotificationOrigin, ...]] = ("button", "edit", "watch", "poll", "bus", "cli")

UNMATCHED: Final = ""
"""The `resource` label of a read whose URI no resource matches: never the client's URI (bounded cardinality)."""

LATENCY_BUCKETS: Final = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Seconds; a read answers in well under a millisecond (cached) to the reader timeout (5 s by default)."""
