"""The facade's private loop thread: previews and completions run there while no server loop is running."""

from __future__ import annotations

import asyncio

from resources_qt.server.loopthread import LoopThread

__all__ = ["SideLoop"]


class SideLoop:
    """A loop thread started on first use (`get`) and stopped by `close`; never the GUI loop. No signals."""

    def __init__(self, name: str = "studio-preview") -> None:
        self._name = name
        self._thread: LoopThread | None = None
        self._stop: asyncio.Event | None = None

    def get(self) -> LoopThread:
        """The running loop thread, started now if it is not (or no longer) alive."""
        if self._thread is None or not self._thread.is_alive():
            thread = LoopThread(self._name)
            stop = asyncio.Event()

            async def main() -> None:
                await stop.wait()

            thread.start(main, on_exit=lambda error: None)
            self._thread, self._stop = thread, stop
        return self._thread

    def close(self, timeout: float = 5.0) -> None:
        thread, stop = self._thread, self._stop
        if thread is not None and stop is not None:
            thread.call_soon(stop.set)
            thread.join(timeout)
