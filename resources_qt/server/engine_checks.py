"""The engine's limits checked where they enter, each against its `[server]` row: one range everywhere."""

from __future__ import annotations

from resources_qt.project.settings_table import setting

__all__ = ["check_limits"]


def check_limits(
    *,
    name: str,
    page_size: int,
    max_request_body_size: int,
    session_idle_timeout: float | None,
    max_sessions: int | None,
    max_subscriptions: int,
    max_uri_length: int,
) -> None:
    """Raise ValueError naming the first argument out of its range (None: no limit, where allowed)."""
    if not name:
        raise ValueError("The server name must not be empty")
    setting("page_size").check(page_size)
    if max_request_body_size < 1:
        raise ValueError("max_request_body_size must be positive")
    if session_idle_timeout is not None:
        setting("session_idle_timeout").check(session_idle_timeout)
    if max_sessions is not None:
        setting("max_sessions").check(max_sessions)
    setting("max_subscriptions").check(max_subscriptions)
    setting("max_uri_length").check(max_uri_length)
