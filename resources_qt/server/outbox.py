"""A session's bounded queue of notifications and the one task that sends them, so fan-out never waits on a socket."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable

from resources_qt.notifications import Notification

__all__ = ["SEND_QUEUE", "Outbox"]

SEND_QUEUE = 1024
"""Notifications one session may have waiting at least (the SDK's own backlog for a listen stream);
the engine allows twice max_subscriptions when that is more, so one edit touching every URI a session
holds always fits."""


class Outbox:
    """Notifications waiting for one session, sent in order by a task of its own (started on the first `put`).

    `put` never waits: a session whose client stops reading only fills its
    own queue, and `put` answers False once `size` are waiting (the caller
    drops the session). `sent(notification)` runs after each send; `failed(error)`
    when a send raised, after which the outbox sends nothing more.
    """

    def __init__(
        self,
        *,
        size: int,
        send: Callable[[Notification], Awaitable[None]],
        sent: Callable[[Notification], None],
        failed: Callable[[Exception], None],
    ) -> None:
        if size < 1:
            raise ValueError(f"size must be at least 1, not {size}")
        self.size = size
        self._send = send
        self._sent = sent
        self._failed = failed
        self._queue: deque[Notification] = deque()
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    def __len__(self) -> int:
        return len(self._queue)

    @property
    def closed(self) -> bool:
        """Sending has stopped: closed, or a send failed."""
        return self._closed

    def put(self, notification: Notification) -> bool:
        """Queue `notification` (on the server loop); False, queueing nothing, when the queue is full."""
        if self._closed:
            return False
        if len(self._queue) >= self.size:
            return False
        self._queue.append(notification)
        self._ready.set()
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="resources_qt-outbox")
        return True

    def close(self) -> None:
        """Send nothing more: the queue is dropped and a send under way is cancelled."""
        self._closed = True
        self._queue.clear()
        if self._task is not None and not self._task.done():
            self._task.cancel()

    async def _run(self) -> None:
        while not self._closed:
            if not self._queue:
                self._ready.clear()
                await self._ready.wait()
                continue
            notification = self._queue.popleft()
            try:
                await self._send(notification)
            except Exception as exc:
                self._closed = True
                self._queue.clear()
                self._failed(exc)
                return
            self._sent(notification)
