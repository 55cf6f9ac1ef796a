"""Transport hosting: Streamable HTTP and stdio as tasks on the engine's one server loop thread."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, Literal

import anyio
import uvicorn
from mcp.server.stdio import stdio_server

from resources_qt.server import http as http_host
from resources_qt.server.loopthread import LoopThread
from resources_qt.server.sdk_private import discard_session, http_transports, live_session_manager
from resources_qt.server.stdio import StdinClaim, WakeableInput
from resources_qt.server.streams import StreamGuard

__all__ = ["HostedTransport", "HttpTransport", "StdioTransport", "TransportHost", "TransportName", "current_transport"]

logger = logging.getLogger(__name__)

TransportName = Literal["http", "stdio"]

_CURRENT: contextvars.ContextVar[str] = contextvars.ContextVar("resources_qt_transport", default="")
"""Which transport the running code serves: set in each transport's task, so every request handler
(spawned from it by the SDK's task groups) inherits it, even with both transports on one loop."""

_START_TIMEOUT = 15.0
_STOP_TIMEOUT = 10.0
_GRACE = 5.0
"""Seconds a transport asked to end gets before its task is cancelled."""


def current_transport() -> str:
    """"http" or "stdio" inside a transport's task (its requests included), else ""."""
    return _CURRENT.get()


class HostedTransport(ABC):
    """One transport served on the host's loop: `serve` runs until it ends; `shut` asks it to end soon."""

    name: ClassVar[TransportName]

    def __init__(self) -> None:
        self.task: asyncio.Task[None] | None = None
        self.started = threading.Event()
        self.error: BaseException | None = None

    @abstractmethod
    async def serve(self, on_started: Callable[[], None]) -> None:
        """Serve until the transport ends; call `on_started()` once clients can connect."""

    @abstractmethod
    async def shut(self) -> None:
        """On the loop: make `serve` return soon (idempotent)."""

    def hang_up(self) -> None:  # noqa: B027 - only stdio has something to wake outside the loop
        """From any thread, before `shut`: wake what the loop cannot reach (a blocked read)."""

    def release(self) -> None:  # noqa: B027 - only stdio holds something when it never ran
        """Give back what the transport claimed if its task never ran."""


class HttpTransport(HostedTransport):
    """uvicorn serving the SDK's Streamable HTTP app on an already-listening socket."""

    name: ClassVar[TransportName] = "http"

    def __init__(
        self, *, app: StreamGuard, sock: Any, lowlevel: Any, url: str, port: int, close_sessions: Callable[[], None]
    ) -> None:
        super().__init__()
        self.app = app
        self.sock = sock
        self.lowlevel = lowlevel
        self.url = url
        self.port = port
        self._close_sessions = close_sessions
        self._uvicorn: uvicorn.Server | None = None
        self._shutting = False
        self._ending: set[asyncio.Task[None]] = set()

    async def serve(self, on_started: Callable[[], None]) -> None:
        def keep(server: uvicorn.Server) -> None:
            self._uvicorn = server

        try:
            ok = await http_host.serve_uvicorn(
                self.app, self.sock, on_started=on_started, stopper=keep, graceful_timeout=1
            )
        finally:
            self.sock.close()
        if not ok and not self._shutting:
            raise RuntimeError("The HTTP server did not start; see the log")

    async def shut(self) -> None:
        if self._shutting:
            return
        self._shutting = True
        # End open streams first so uvicorn's graceful shutdown has nothing to wait for.
        self._close_sessions()
        manager = live_session_manager(self.lowlevel)
        # The SDK has no public call to end its HTTP sessions before its own
        # lifespan shutdown, which uvicorn runs only after open GET streams
        # close; terminating the transports ends those streams now.
        transports = list(http_transports(manager).values()) if manager is not None else []
        for transport in transports:
            try:
                await transport.terminate()
            except Exception:  # best effort while stopping
                logger.debug("Terminating an HTTP session failed", exc_info=True)
        self.app.close()  # streams cut earlier stop waiting for their clients
        await asyncio.sleep(0)
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True
        elif self.task is not None:
            self.task.cancel()  # not listening yet: nothing to end gracefully

    def release(self) -> None:
        self.sock.close()

    def end_session(self, session_id: str) -> None:
        """On the loop: cut handshake-era session `session_id`'s GET stream now, then end the session.

        Its client gets 404 on its next request and may start a new session.
        """
        cut = self.app.abort(session_id)
        logger.info("Ending HTTP session %s (%d stream(s) cut)", session_id, cut)
        manager = live_session_manager(self.lowlevel)
        transport = http_transports(manager).get(session_id) if manager is not None else None
        if manager is None or transport is None:
            return
        task = asyncio.get_running_loop().create_task(discard_session(manager, session_id, transport))
        self._ending.add(task)
        task.add_done_callback(self._ending.discard)


class StdioTransport(HostedTransport):
    """The process's stdin/stdout through the SDK's stdio transport; stdout then carries only protocol.

    With explicit `stdin` / `stdout` (text files over descriptors, e.g. pipes)
    those are served instead and the process's own streams are left alone.
    """

    name: ClassVar[TransportName] = "stdio"

    def __init__(
        self, *, lowlevel: Any, close_sessions: Callable[[], None], stdin: Any = None, stdout: Any = None
    ) -> None:
        super().__init__()
        self.lowlevel = lowlevel
        self._close_sessions = close_sessions
        self._stdout = anyio.wrap_file(stdout) if stdout is not None else None
        self._input: StdinClaim | WakeableInput | None = None
        if stdin is not None:
            self._input = WakeableInput(stdin)
        elif StdinClaim.supported():
            self._input = StdinClaim()

    async def serve(self, on_started: Callable[[], None]) -> None:
        wire = self._input
        try:
            stdin = wire.stdin if wire is not None else None
            async with stdio_server(stdin=stdin, stdout=self._stdout) as (read_stream, write_stream):
                on_started()
                server = self.lowlevel
                await server.run(read_stream, write_stream, server.create_initialization_options())
        finally:
            if wire is not None:
                wire.release()

    def hang_up(self) -> None:
        if self._input is not None:
            # The SDK's stdin reader blocks in a thread that cancellation cannot reach.
            self._input.hang_up()

    async def shut(self) -> None:
        self._close_sessions()
        self.hang_up()
        if self.task is not None:
            self.task.cancel()

    def release(self) -> None:
        if self._input is not None:
            self._input.release()


Ended = Callable[[HostedTransport, "tuple[TransportName, ...]"], None]


class TransportHost:
    """One loop thread, started with the first transport and ended with the last one.

    `add` starts a transport as a task on the loop; `remove` ends only that
    task; `stop` ends them all and the thread. `on_ended(transport, remaining)`
    runs on the loop when a transport's task finished while others keep
    serving; when the last one finishes the thread ends and
    `on_exit(error)` runs on it (error: the last transport's failure, if any).
    `setup` and `teardown` run on the loop around its whole life (the bus).
    """

    def __init__(
        self,
        *,
        setup: Callable[[], Awaitable[None]],
        teardown: Callable[[], Awaitable[None]],
        on_ended: Ended,
        on_exit: Callable[[BaseException | None], None],
    ) -> None:
        self._setup = setup
        self._teardown = teardown
        self._on_ended = on_ended
        self._on_exit = on_exit
        self._lock = threading.Lock()
        # Held from a start's checks until its task is submitted: two starts on two threads must not
        # each create a loop thread, nor land on a loop that is ending.
        self._start_lock = threading.Lock()
        self._transports: dict[TransportName, HostedTransport] = {}
        self._thread: LoopThread | None = None
        self._idle: asyncio.Event | None = None
        self._error: BaseException | None = None
        self.stopping = False

    # -- state (any thread) --------------------------------------------------------

    @property
    def thread(self) -> LoopThread | None:
        return self._thread

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def names(self) -> tuple[TransportName, ...]:
        with self._lock:
            return tuple(name for name, t in self._transports.items() if t.started.is_set())

    def get(self, name: TransportName) -> HostedTransport | None:
        with self._lock:
            return self._transports.get(name)

    # -- starting --------------------------------------------------------------------

    def check_can_start(self, name: TransportName) -> None:
        """Raise RuntimeError when `name` cannot start now (serving it already, or still stopping).

        A thread that is ending (stopped, crashed, or its last client left) is waited for first.
        """
        thread = self._thread
        if thread is not None and thread.is_alive() and self.stopping:
            thread.join(_STOP_TIMEOUT)
        with self._lock:
            self._check_locked(name)

    def _check_locked(self, name: TransportName) -> None:
        if self.alive() and self.stopping:
            raise RuntimeError("The server is still stopping; try again in a moment")
        if name in self._transports:
            what = "HTTP" if name == "http" else "stdio"
            raise RuntimeError(f"The server is already serving {what}; stop it first")

    def add(self, transport: HostedTransport, *, on_started: Callable[[], None]) -> None:
        """Start `transport` on the loop (starting the loop if needed); returns once it serves.

        Raises:
            RuntimeError: already serving that transport, still stopping, or it failed to start.
        """
        with self._start_lock:
            try:
                self._reserve(transport)
            except BaseException:
                transport.release()
                raise
            try:
                thread = self._ensure_thread()
                thread.submit(self._spawn(transport, on_started))
            except BaseException:
                with self._lock:
                    self._transports.pop(transport.name, None)
                transport.release()
                raise
        deadline = time.monotonic() + _START_TIMEOUT
        while not transport.started.wait(0.02):
            if transport.task is not None and transport.task.done():
                break
            if not thread.is_alive() or time.monotonic() > deadline:
                break
        if not transport.started.is_set():
            error = transport.error
            message = _one_line(error) if error is not None else "The server did not start in time"
            self.remove(transport.name)
            raise RuntimeError(message)

    def _reserve(self, transport: HostedTransport) -> None:
        for _ in range(2):
            self.check_can_start(transport.name)  # waits for a thread that is ending
            with self._lock:
                if self.alive() and self.stopping:
                    continue  # its last transport ended after that check: wait for the thread once more
                self._check_locked(transport.name)
                self._transports[transport.name] = transport
                return
        raise RuntimeError("The server is still stopping; try again in a moment")

    def _ensure_thread(self) -> LoopThread:
        thread = self._thread
        if thread is not None and thread.is_alive():
            return thread
        self.stopping = False
        self._error = None
        ready = threading.Event()
        thread = LoopThread("resource-server")
        self._thread = thread

        async def main() -> None:
            self._idle = asyncio.Event()
            ready.set()
            # The bus connects in the background: a missing Redis never delays or fails the start.
            await self._setup()
            try:
                await self._idle.wait()
            finally:
                await self._teardown()
            if self._error is not None:
                raise self._error

        thread.start(main, on_exit=self._exited)
        if not ready.wait(_START_TIMEOUT):
            raise RuntimeError("The server loop did not start")
        return thread

    async def _spawn(self, transport: HostedTransport, on_started: Callable[[], None]) -> None:
        context = contextvars.copy_context()
        context.run(_CURRENT.set, transport.name)

        def started() -> None:
            transport.started.set()
            on_started()

        async def run() -> None:
            await transport.serve(started)

        task = asyncio.get_running_loop().create_task(run(), context=context)
        transport.task = task
        task.add_done_callback(lambda done: self._finished(transport, done))

    def _finished(self, transport: HostedTransport, task: asyncio.Task[None]) -> None:
        # On the loop, once the transport's task is over.
        error = None if task.cancelled() else task.exception()
        if isinstance(error, asyncio.CancelledError):
            error = None
        transport.error = error
        if error is not None and not self.stopping:
            logger.error("The %s transport failed: %s", transport.name, _one_line(error), exc_info=error)
        with self._lock:
            if self._transports.get(transport.name) is transport:
                del self._transports[transport.name]
            remaining = tuple(name for name, t in self._transports.items() if t.started.is_set())
            last = not self._transports
            if last:
                # The thread is ending: a start from now on waits for it (check_can_start joins)
                # rather than land on a closing loop; set under the lock a start checks under.
                self.stopping = True
        if not last:
            self._on_ended(transport, remaining)
            return
        if error is not None:
            self._error = error  # the thread ends with it: observers hear ServerFailed, not a stop
        if self._idle is not None:
            self._idle.set()

    # -- stopping --------------------------------------------------------------------

    def remove(self, name: TransportName) -> None:
        """End one transport (the thread too when it was the last); waits until it has ended."""
        transport = self.get(name)
        thread = self._thread
        if transport is None or thread is None or not thread.is_alive():
            return
        with self._lock:
            last = set(self._transports) == {name}
        if last:
            self.stopping = True
        transport.hang_up()
        try:
            future = thread.submit(self._end([transport]))
        except RuntimeError:
            return
        if thread.in_loop_thread():
            return
        try:
            future.result(timeout=_STOP_TIMEOUT)
        except Exception:  # the loop itself is ending
            logger.debug("Ending the %s transport failed", name, exc_info=True)
        if last:
            self._join(thread)

    def stop(self) -> None:
        """End every transport and the loop thread: listen streams close, sessions end, the port is freed."""
        thread = self._thread
        if thread is None:
            return
        self.stopping = True
        with self._lock:
            transports = list(self._transports.values())
        for transport in transports:
            transport.hang_up()
        with contextlib.suppress(RuntimeError):  # the loop has closed already
            thread.submit(self._end(transports, finish=True))
        if thread.in_loop_thread():
            return
        self._join(thread)

    def _join(self, thread: LoopThread) -> None:
        if not thread.join(_STOP_TIMEOUT):
            # Keep the thread: the server is still stopping, and a restart must not race it.
            logger.warning("The server thread did not end within %.0f s; it is still stopping", _STOP_TIMEOUT)
            return
        if self._thread is thread:
            self._thread = None

    async def _end(self, transports: list[HostedTransport], *, finish: bool = False) -> None:
        for transport in transports:
            try:
                await transport.shut()
            except Exception:  # shutting down regardless
                logger.debug("Shutting the %s transport failed", transport.name, exc_info=True)
        tasks = [t.task for t in transports if t.task is not None and not t.task.done()]
        if tasks:
            _, late = await asyncio.wait(tasks, timeout=_GRACE)
            for task in late:
                task.cancel()
            if late:
                await asyncio.wait(late, timeout=_GRACE)
        if finish and self._idle is not None:
            self._idle.set()

    def _exited(self, error: BaseException | None) -> None:
        with self._lock:
            leftovers = list(self._transports.values())
            self._transports.clear()
        for transport in leftovers:
            if transport.task is None:
                transport.release()  # the loop ended before its task ran
        self._on_exit(error)


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
