"""A private event loop (asyncio's selector loop, or uvloop on request) in a thread, never the GUI's."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["LoopThread", "loop_kind", "new_loop"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


def loop_kind() -> str:
    """"uvloop" or "asyncio": the loop `new_loop` makes here.

    uvloop is opt-in (`RESOURCE_STUDIO_LOOP=uvloop`): it measured within noise
    of asyncio's loop for reads (bench/analysis.md), and a fatal error escaping
    into a uvloop loop left the server thread running, so the port was never
    freed (tests/stress/test_stress_server_faults.py).
    """
    if os.environ.get("RESOURCE_STUDIO_LOOP", "").lower() != "uvloop":
        return "asyncio"
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


def new_loop() -> asyncio.AbstractEventLoop:
    """A fresh event loop of `loop_kind()`, not installed anywhere (the caller's thread sets it)."""
    if loop_kind() == "uvloop":
        import uvloop

        loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()  # untyped where uvloop is not installed
        return loop
    return asyncio.SelectorEventLoop()


class LoopThread:
    """Runs one main coroutine on its own loop; other threads submit work with `submit`.

    The loop is created explicitly (never from the global policy, which
    qasync replaces with one handing out Qt loops): a SelectorEventLoop, or
    uvloop's when `RESOURCE_STUDIO_LOOP=uvloop` and it is installed.
    `loop_kind()` says which.
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._main_task: asyncio.Task[Any] | None = None
        # Guards submissions against the loop's end: a coroutine scheduled then would never be awaited.
        self._submit_lock = threading.Lock()
        self._closing = False

    @property
    def thread(self) -> threading.Thread | None:
        return self._thread

    def is_alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def in_loop_thread(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def start(
        self,
        main: Callable[[], Coroutine[Any, Any, None]],
        *,
        on_exit: Callable[[BaseException | None], None],
    ) -> None:
        """Start the thread running `main()`; `on_exit(error)` runs on the thread when it ends."""
        loop = new_loop()
        with self._submit_lock:
            self.loop = loop
            self._closing = False

        def run() -> None:
            asyncio.set_event_loop(loop)
            error: BaseException | None = None
            try:
                self._main_task = loop.create_task(main())
                loop.run_until_complete(self._main_task)
            except asyncio.CancelledError:
                pass
            except BaseException as exc:
                error = exc
            finally:
                try:
                    with self._submit_lock:
                        self._closing = True
                    # What was submitted before that becomes a task here, so it is cancelled and awaited
                    # with the rest instead of dropped unawaited when the loop closes.
                    loop.run_until_complete(asyncio.sleep(0))
                    _cancel_leftovers(loop)
                    loop.run_until_complete(loop.shutdown_asyncgens())
                finally:
                    try:
                        on_exit(error)
                    finally:
                        asyncio.set_event_loop(None)
                        loop.close()

        self._thread = threading.Thread(target=run, name=self._name, daemon=True)
        self._thread.start()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule `coro` on the loop from any thread (RuntimeError, `coro` closed, once the loop is ending)."""
        with self._submit_lock:
            loop = self.loop
            if loop is None or loop.is_closed() or self._closing:
                coro.close()
                raise RuntimeError("The server loop is not running")
            return asyncio.run_coroutine_threadsafe(coro, loop)

    async def run_here(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await `coro` on the loop from a coroutine on any loop (directly when already there)."""
        if self.in_loop_thread():
            return await coro
        return await asyncio.wrap_future(self.submit(coro))

    def call_soon(self, fn: Callable[[], Any]) -> None:
        loop = self.loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # closed between the check and the call
                loop.call_soon_threadsafe(fn)

    def cancel_main(self) -> None:
        task = self._main_task
        if task is not None:
            self.call_soon(task.cancel)

    def join(self, timeout: float) -> bool:
        thread = self._thread
        if thread is None or thread is threading.current_thread():
            return True
        thread.join(timeout)
        return not thread.is_alive()


def _cancel_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))

