"""RedisBus: notification events over Redis pub/sub, with reconnects that never block or crash the caller."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Awaitable, Callable
from typing import Any

from resources_qt.bus.events import BusEvent, BusMessageError, Envelope, decode, encode, new_origin
from resources_qt.bus.urls import check_bus_url, check_password, import_redis, password_option, redact

__all__ = ["BusStats", "EnvelopeListener", "RedisBus"]

logger = logging.getLogger(__name__)

EnvelopeListener = Callable[[Envelope], Awaitable[None]]
StateListener = Callable[[bool], None]

_POLL = 1.0  # seconds one get_message waits, so close() and health checks are noticed


class BusStats:
    """Counters a bench, a test or a status line can read (plain ints, updated on the bus loop)."""

    def __init__(self) -> None:
        self.published = 0
        self.unpublished = 0
        self.received = 0
        self.own = 0
        self.rejected = 0
        self.connects = 0
        self.attempts = 0

    def __repr__(self) -> str:
        return (f"BusStats(published={self.published}, unpublished={self.unpublished}, received={self.received}, "
                f"own={self.own}, rejected={self.rejected}, connects={self.connects}, attempts={self.attempts})")


class RedisBus:
    """One replica's endpoint on a Redis channel.

    `start()` (on the loop that will use the bus) returns at once: connecting,
    subscribing and reconnecting with exponential back-off happen in a
    background task, so a missing Redis never delays the server. `post()`
    never waits: it queues an event for the publisher task, or reports it not
    published while Redis is away (no replay: pub/sub has none either).
    Messages from other origins go to the listeners; this replica's own
    (echoed back by Redis) and malformed or foreign ones are dropped, the
    latter logged. `password`, when given (read from a file, say), is the
    password the URL then must not carry; logs show the URL redacted.
    """

    def __init__(
        self,
        url: str,
        *,
        channel: str,
        origin: str | None = None,
        timeout: float = 2.0,
        backoff_initial: float = 0.2,
        backoff_max: float = 10.0,
        outbox_limit: int = 10_000,
        health_check_interval: float = 5.0,
        password: str | None = None,
    ) -> None:
        self.url = check_bus_url(url)
        self._password = check_password(url, password)
        if not channel:
            raise ValueError("channel: must not be empty")
        if not 0 < backoff_initial <= backoff_max:
            raise ValueError("backoff_initial: must be positive and at most backoff_max")
        if outbox_limit < 1:
            raise ValueError("outbox_limit: must be at least 1")
        if not (timeout > 0 and health_check_interval > 0):
            raise ValueError("timeout and health_check_interval: must be positive")
        self._redis = import_redis()
        self.channel = channel
        self.origin = origin or new_origin()
        self.timeout = timeout
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.health_check_interval = health_check_interval
        self.stats = BusStats()
        self._outbox_limit = outbox_limit
        self._outbox: asyncio.Queue[Envelope] | None = None
        self._listeners: dict[object, EnvelopeListener] = {}
        self._state_listeners: dict[object, StateListener] = {}
        self._connected = False
        self._connected_event: asyncio.Event | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._publisher: Any = None
        self._closed = False
        self._outage_warned = False
        self._unpublished_in_outage = 0

    # -- listeners -------------------------------------------------------------

    def add_listener(self, listener: EnvelopeListener) -> Callable[[], None]:
        """Await `listener(envelope)` for each event from another origin; returns the unsubscribe call."""
        token = object()
        self._listeners[token] = listener

        def unsubscribe() -> None:
            self._listeners.pop(token, None)

        return unsubscribe

    def add_state_listener(self, listener: StateListener) -> Callable[[], None]:
        """Call `listener(connected)` on each change of the connection state."""
        token = object()
        self._state_listeners[token] = listener

        def unsubscribe() -> None:
            self._state_listeners.pop(token, None)

        return unsubscribe

    @property
    def connected(self) -> bool:
        return self._connected

    async def wait_connected(self, timeout: float) -> bool:
        if self._connected_event is None:
            return False
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._connected_event.wait(), timeout)
        return self._connected

    # -- lifecycle ---------------------------------------------------------------

    async def start(self) -> None:
        """Begin connecting in the background on the running loop; returns at once."""
        if self._tasks:
            return
        self._closed = False
        self._outbox = asyncio.Queue(self._outbox_limit)
        self._connected_event = asyncio.Event()
        self._publisher = self._client(retries=1)
        self._tasks = [
            asyncio.create_task(self._subscribe_loop(), name=f"bus-subscribe-{self.channel}"),
            asyncio.create_task(self._publish_loop(), name=f"bus-publish-{self.channel}"),
        ]

    async def close(self) -> None:
        self._closed = True
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        publisher, self._publisher = self._publisher, None
        if publisher is not None:
            with contextlib.suppress(Exception):
                await publisher.aclose()
        self._set_connected(False, None)

    # -- publishing --------------------------------------------------------------

    def post(self, event: BusEvent, *, session_id: str | None = None, key: str | None = None) -> bool:
        """Queue `event` for publishing without waiting; False (logged "not published") when it cannot be."""
        envelope = Envelope(event=event, origin=self.origin, session_id=session_id, key=key)
        try:
            encode(envelope)  # checked here, so the publisher task only ever sees publishable events
        except BusMessageError as exc:
            self._not_published(envelope, f"it is not a valid bus event: {exc}")
            return False
        if self._outbox is None or self._closed:
            self._not_published(envelope, "the bus is not started")
            return False
        if not self._connected:
            self._not_published(envelope, "the bus is unavailable")
            return False
        try:
            self._outbox.put_nowait(envelope)
        except asyncio.QueueFull:
            self._not_published(envelope, f"{self._outbox_limit} notifications are already waiting for Redis")
            return False
        return True

    async def publish(self, event: BusEvent, *, session_id: str | None = None) -> int | None:
        """Publish now; the number of Redis subscribers that got it, or None (logged) when not published."""
        envelope = Envelope(event=event, origin=self.origin, session_id=session_id)
        if not self._connected or self._publisher is None:
            self._not_published(envelope, "the bus is unavailable")
            return None
        return await self._publish_now(envelope)

    async def _publish_now(self, envelope: Envelope) -> int | None:
        try:
            receivers = await asyncio.wait_for(
                self._publisher.publish(self.channel, encode(envelope)), self.timeout
            )
        except (self._redis.RedisError, OSError, TimeoutError) as exc:
            self._not_published(envelope, f"Redis failed: {_describe(exc)}")
            return None
        self.stats.published += 1
        return int(receivers)

    async def _publish_loop(self) -> None:
        assert self._outbox is not None
        while True:
            envelope = await self._outbox.get()
            await self._publish_now(envelope)

    def _not_published(self, envelope: Envelope, reason: str) -> None:
        self.stats.unpublished += 1
        self._unpublished_in_outage += 1
        level = logging.WARNING if self._unpublished_in_outage == 1 else logging.DEBUG
        logger.log(level, "Notification %s not published on the bus (%s); delivered on this replica only",
                   _label(envelope), reason)

    # -- subscribing -------------------------------------------------------------

    def _client(self, *, retries: int = 0, health_checks: bool = True) -> Any:
        # No client-side back-off: the loops below own reconnecting, with one warning per outage.
        # The publisher retries once on a connection error (not a timeout, which could
        # duplicate): after Redis restarts its pooled connection is stale, and the first
        # command on it fails before reaching the server.
        retry = self._redis.asyncio.retry.Retry(
            self._redis.backoff.NoBackoff(), retries, supported_errors=(self._redis.ConnectionError,)
        )
        return self._redis.asyncio.from_url(
            self.url,
            **password_option(self._password),
            socket_timeout=self.timeout,
            socket_connect_timeout=self.timeout,
            # The subscriber runs its own liveness check (_listen); redis-py's would not notice silence.
            health_check_interval=max(1, round(self.health_check_interval)) if health_checks else 0,
            retry=retry,
        )

    async def _subscribe_loop(self) -> None:
        delay = self.backoff_initial
        while not self._closed:
            client = self._client(health_checks=False)
            pubsub = client.pubsub(ignore_subscribe_messages=True)
            self.stats.attempts += 1
            try:
                await asyncio.wait_for(pubsub.subscribe(self.channel), self.timeout)
                self.stats.connects += 1
                self._set_connected(True, None)
                delay = self.backoff_initial
                await self._listen(pubsub)
            except asyncio.CancelledError:
                raise
            except (self._redis.RedisError, OSError, TimeoutError) as exc:
                self._set_connected(False, exc)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
                with contextlib.suppress(Exception):
                    await client.aclose()
            # Jitter keeps a fleet of replicas from reconnecting in lock step.
            await asyncio.sleep(delay * random.uniform(0.8, 1.2))
            delay = min(delay * 2, self.backoff_max)

    async def _listen(self, pubsub: Any) -> None:
        # A Redis that stops answering without closing the connection (a paused
        # process, a network partition) would otherwise look like a quiet channel
        # for as long as TCP keepalive takes: after a quiet interval we ping, and
        # a ping unanswered within `timeout` counts as losing the connection.
        loop = asyncio.get_running_loop()
        heard = loop.time()
        pinged: float | None = None
        while True:
            message = await pubsub.get_message(ignore_subscribe_messages=True,
                                               timeout=min(_POLL, self.health_check_interval))
            now = loop.time()
            if message is not None:
                heard, pinged = now, None
                if message.get("type") == "message":
                    await self._dispatch(message.get("data"))
                continue
            if pinged is None and now - heard >= self.health_check_interval:
                await asyncio.wait_for(pubsub.ping(), self.timeout)
                pinged = now
            elif pinged is not None and now - pinged > self.timeout:
                raise TimeoutError(f"Redis did not answer a ping within {self.timeout:g} s")

    async def _dispatch(self, data: object) -> None:
        if not isinstance(data, bytes | str):
            return
        try:
            envelope = decode(data)
        except BusMessageError as exc:
            self.stats.rejected += 1
            level = logging.WARNING if self.stats.rejected <= 5 or self.stats.rejected % 1000 == 0 else logging.DEBUG
            logger.log(level, "Ignoring a message on bus channel %r that is not a notification event (%s); %d so far",
                       self.channel, exc, self.stats.rejected)
            return
        if envelope.origin == self.origin:
            self.stats.own += 1  # already delivered locally when it was sent
            return
        self.stats.received += 1
        for listener in list(self._listeners.values()):
            try:
                await listener(envelope)
            except Exception:  # one failing consumer must not end the subscription
                logger.exception("Bus listener %r failed on %s", listener, _label(envelope))

    def _set_connected(self, connected: bool, error: BaseException | None) -> None:
        was = self._connected
        self._connected = connected
        if self._connected_event is not None:
            if connected:
                self._connected_event.set()
            else:
                self._connected_event.clear()
        if connected and not was:
            if self._outage_warned:
                logger.warning("Redis bus %s is back (channel %r); %d notifications were not published meanwhile",
                               redact(self.url), self.channel, self._unpublished_in_outage)
            else:
                logger.info("Redis bus %s connected (channel %r)", redact(self.url), self.channel)
            self._outage_warned = False
            self._unpublished_in_outage = 0
        elif not connected and error is not None and not self._outage_warned:
            self._outage_warned = True
            logger.warning(
                "Redis bus %s is unavailable (%s); serving on: notifications reach this replica's subscribers only "
                "until it is back (retrying with back-off up to %g s)",
                redact(self.url), _describe(error), self.backoff_max,
            )
        if connected != was:
            for listener in list(self._state_listeners.values()):
                try:
                    listener(connected)
                except Exception:
                    logger.exception("Bus state listener %r failed", listener)


def _label(envelope: Envelope) -> str:
    uri = getattr(envelope.event, "uri", "")
    name = "updated" if uri else "list_changed"
    target = f" for session {envelope.session_id!r}" if envelope.session_id else ""
    return f"{name} {uri!r}{target}" if uri else f"{name}{target}"


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if isinstance(exc, TimeoutError) and not text:
        return "timed out"
    return text or type(exc).__name__
