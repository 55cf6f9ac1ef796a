"""An official SDK client on its own thread and asyncio loop, so GUI tests never block the Qt thread."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp import Client

TIMEOUT_S = 15.0


class BackgroundClient:
    """Connects `mcp.Client` to `url` on a private thread; `submit(job)` runs `await job(client)` there.

    Every notification the client receives is appended to `notifications` as (method, params dict).
    """

    def __init__(self, url: str, *, mode: str = "legacy") -> None:
        self.url = url
        self.mode = mode
        self.notifications: list[tuple[str, dict[str, Any]]] = []
        self.connected: concurrent.futures.Future[Client] = concurrent.futures.Future()
        self.finished: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._jobs: asyncio.Queue[Any] | None = None
        self._thread = threading.Thread(target=self._run, name="test-mcp-client", daemon=True)

    def start(self) -> concurrent.futures.Future[Client]:
        self._thread.start()
        return self.connected

    def submit(self, job: Callable[[Client], Awaitable[Any]]) -> concurrent.futures.Future[Any]:
        result: concurrent.futures.Future[Any] = concurrent.futures.Future()
        assert self._loop is not None and self._jobs is not None, "not connected yet"
        self._loop.call_soon_threadsafe(self._jobs.put_nowait, (job, result))
        return result

    def close(self) -> concurrent.futures.Future[None]:
        """Disconnect; the returned future completes when the client has left."""
        if self._loop is not None and self._jobs is not None and not self.finished.done():
            self._loop.call_soon_threadsafe(self._jobs.put_nowait, (None, None))
        return self.finished

    def join(self, timeout: float = TIMEOUT_S) -> None:
        self._thread.join(timeout)

    def methods(self) -> list[str]:
        return [method for method, _ in list(self.notifications)]

    def _run(self) -> None:
        # qasync may have installed its loop policy in this process; this thread wants a plain loop.
        loop = asyncio.SelectorEventLoop()
        try:
            loop.run_until_complete(self._main())
        finally:
            loop.close()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._jobs = asyncio.Queue()
        try:
            async with Client(self.url, mode=self.mode, read_timeout_seconds=TIMEOUT_S,
                              message_handler=self._on_message) as client:  # fmt: skip
                if self.mode == "legacy":
                    # The SDK opens the standalone GET stream in the background after the handshake;
                    # notifications sent before it exists are dropped by design, so let it open first.
                    await client.list_resources(cursor=None, cache_mode="bypass")
                    await asyncio.sleep(0.3)
                self.connected.set_result(client)
                while True:
                    job, result = await self._jobs.get()
                    if job is None:
                        break
                    try:
                        result.set_result(await asyncio.wait_for(job(client), TIMEOUT_S))
                    except BaseException as exc:
                        result.set_exception(exc)
        except BaseException as exc:
            if not self.connected.done():
                self.connected.set_exception(exc)
            self.finished.set_exception(exc)
            return
        self.finished.set_result(None)

    async def _on_message(self, message: Any) -> None:
        root = getattr(message, "root", message)
        if isinstance(root, types.ResourceUpdatedNotification):
            self.notifications.append((root.method, {"uri": root.params.uri}))
        elif isinstance(root, types.ResourceListChangedNotification):
            self.notifications.append((root.method, {}))
        elif not isinstance(root, Exception) and hasattr(root, "method"):
            self.notifications.append((str(root.method), {}))
