"""publish_once: connect, publish a few events, disconnect (the `notify` command, deploy hooks)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

from resources_qt.bus.events import BusEvent, Envelope, encode, new_origin
from resources_qt.bus.urls import check_bus_url, check_password, import_redis, password_option, redact

__all__ = ["BusUnavailableError", "publish_once"]


class BusUnavailableError(ConnectionError):
    """Redis could not be reached or refused the publish; the message is one line, password redacted."""


async def publish_once(
    url: str,
    *,
    channel: str,
    events: Sequence[BusEvent],
    session_id: str | None = None,
    origin: str | None = None,
    timeout: float = 5.0,
    password: str | None = None,
) -> list[int]:
    """Publish `events` in order; per event, how many replicas were subscribed to the channel."""
    url = check_bus_url(url)
    password = check_password(url, password)
    redis = import_redis()
    origin = origin or new_origin("notify")
    payloads = [encode(Envelope(event=event, origin=origin, session_id=session_id)) for event in events]
    retry = redis.asyncio.retry.Retry(redis.backoff.NoBackoff(), 0)
    client = redis.asyncio.from_url(url, **password_option(password), socket_timeout=timeout,
                                    socket_connect_timeout=timeout, retry=retry)
    receivers: list[int] = []
    try:
        for payload in payloads:
            receivers.append(int(await asyncio.wait_for(client.publish(channel, payload), timeout)))
    except (redis.RedisError, OSError, TimeoutError) as exc:
        reason = " ".join(str(exc).split()) or ("timed out" if isinstance(exc, TimeoutError) else type(exc).__name__)
        raise BusUnavailableError(f"the bus at {redact(url)} is unreachable: {reason}") from None
    finally:
        with contextlib.suppress(Exception):  # the publish result stands whatever closing does
            await client.aclose()
    return receivers
