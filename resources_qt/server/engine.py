"""ResourceServer: serves a Resources collection over stdio or Streamable HTTP on its own loop thread."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import uvicorn
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server

from resources_qt.bus.relay import Bus, NotificationRelay
from resources_qt.bus.urls import redact
from resources_qt.collection import ChangeKind, Resources
from resources_qt.resource import CacheHint, Resource
from resources_qt.server import http as http_host
from resources_qt.server.events import (
    BusStateChanged,
    Observer,
    ServerEvent,
    ServerFailed,
    ServerStarted,
    ServerStopped,
    SessionClosed,
    SessionInfo,
    SessionOpened,
    SubscriptionRemoved,
)
from resources_qt.server.handlers import build_lowlevel
from resources_qt.server.loopthread import LoopThread
from resources_qt.server.middleware import SESSION_KEY, EngineMiddleware, connection_of
from resources_qt.server.notify import EngineDelivery, Notifier
from resources_qt.server.paging import ListingCache
from resources_qt.server.reading import PreviewOutcome, preview_read
from resources_qt.server.sdk_private import http_transports, live_session_manager
from resources_qt.server.sessions import LegacySession, Session, SessionRegistry
from resources_qt.server.stdio import StdinClaim

__all__ = ["ResourceServer"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

ListCallback = Callable[[Resources], "Awaitable[None] | None"]

_START_TIMEOUT = 15.0
_STOP_TIMEOUT = 10.0


class ResourceServer:
    """An MCP server publishing `resources` (the seed's TTMSMCPServer).

    Set `enable_resource_notifications` / `enable_resource_subscriptions` and
    `on_list_resources` before `start_http` or `serve_stdio`: the first two are
    advertised to clients as capabilities. The server runs on its own
    asyncio.SelectorEventLoop in a background thread; observers receive
    events (resources_qt.server.events) on that thread.

    The `completions` capability is always advertised (resources can gain
    completions while serving, and capabilities are fixed at start); a
    variable without declared completions answers an empty list. `cache`
    is the 2026-07-28 hint for list, templates/list and read results;
    a resource's own `cache` wins for its reads.
    """

    def __init__(
        self,
        resources: Resources,
        *,
        name: str,
        version: str,
        title: str = "",
        instructions: str = "",
        page_size: int = 100,
        cache: CacheHint | None = None,
        max_request_body_size: int = http_host.DEFAULT_MAX_REQUEST_BODY_SIZE,
        session_idle_timeout: float | None = 600.0,
        max_listen_streams: int = 1024,
        max_sessions: int | None = 10_000,
        max_subscriptions: int = 1000,
        max_uri_length: int = 8192,
        mask_errors: bool = False,
        bus: Bus | None = None,
    ) -> None:
        if not isinstance(resources, Resources):
            raise TypeError(f"resources must be a Resources collection, not {type(resources).__name__}")
        if not name:
            raise ValueError("The server name must not be empty")
        if page_size < 1:
            raise ValueError(f"page_size must be at least 1, not {page_size}")
        if max_request_body_size < 1:
            raise ValueError("max_request_body_size must be positive")
        if session_idle_timeout is not None and not (0 < session_idle_timeout < float("inf")):
            raise ValueError("session_idle_timeout must be positive and finite (or None for no limit)")
        if max_sessions is not None and max_sessions < 1:
            raise ValueError(f"max_sessions must be at least 1 (or None for no limit), not {max_sessions}")
        if max_subscriptions < 1:
            raise ValueError(f"max_subscriptions must be at least 1, not {max_subscriptions}")
        if max_uri_length < 16:
            raise ValueError(f"max_uri_length must be at least 16, not {max_uri_length}")
        self.resources = resources
        self.name = name
        self.version = version
        self.title = title
        self.instructions = instructions
        self.page_size = page_size
        self.cache = cache
        self.max_request_body_size = max_request_body_size
        # An HTTP session whose client vanished without DELETE (no request in
        # flight, no GET stream) is closed after this many seconds.
        self.session_idle_timeout = session_idle_timeout
        self.max_listen_streams = max_listen_streams
        # Everything a client can make the server hold is bounded: sessions
        # (the longest-idle one without a stream is evicted for a newcomer),
        # subscriptions per session, and the length of every URI it sends.
        self.max_sessions = max_sessions
        self.max_subscriptions = max_subscriptions
        self.max_uri_length = max_uri_length
        # Clients get a generic message for reader failures; the studio and the log keep the detail.
        self.mask_errors = mask_errors
        self.enable_resource_notifications = False
        self.enable_resource_subscriptions = False
        self.on_list_resources: ListCallback | None = None
        self.listing = ListingCache(resources)
        self.registry = SessionRegistry()
        self.middleware = EngineMiddleware(self)
        self.notifier = Notifier(
            registry=self.registry, emit=self.emit, observing=lambda: self.observing, drop_session=self.drop_session
        )
        # The one seam every notification passes: local subscribers at once, then
        # the bus (when replicas share one), and the other replicas' events back in.
        self.relay = NotificationRelay(
            EngineDelivery(
                notifier=self.notifier,
                registry=self.registry,
                notifications=lambda: self.enable_resource_notifications,
                subscriptions=lambda: self.enable_resource_subscriptions,
            ),
            None,
        )
        self._unwatch_bus: Callable[[], None] | None = None
        self.transport = ""
        self._observers: list[Observer] = []
        self._observers_lock = threading.Lock()
        self._thread: LoopThread | None = None
        self._stdin: StdinClaim | None = None
        self._uvicorn: uvicorn.Server | None = None
        self._lowlevel: Any = None
        self._listen_closers: list[Callable[[], None]] = []
        self._url: str | None = None
        self._port: int | None = None
        self._stopping = False
        self._failure: str | None = None
        self._list_changed_pending = False
        self._state_lock = threading.Lock()
        self._change = threading.local()
        self._unlisten = resources.add_listener(self._on_collection_change)
        self.set_bus(bus)

    # -- observers -----------------------------------------------------------

    def add_observer(self, callback: Observer) -> Callable[[], None]:
        """Call `callback(event)` on the server thread for every event; returns the unsubscribe call."""
        with self._observers_lock:
            self._observers = [*self._observers, callback]

        def unsubscribe() -> None:
            with self._observers_lock:
                self._observers = [o for o in self._observers if o is not callback]

        return unsubscribe

    @property
    def observing(self) -> bool:
        return bool(self._observers)

    def emit(self, event: ServerEvent) -> None:
        for observer in self._observers:
            try:
                observer(event)
            except Exception:
                logger.exception("Server observer %r failed on %s", observer, type(event).__name__)

    # -- state ---------------------------------------------------------------

    @property
    def is_running(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and not self._stopping

    @property
    def url(self) -> str | None:
        """The HTTP endpoint (`http://host:port/mcp`) while serving HTTP, else None."""
        return self._url

    @property
    def port(self) -> int | None:
        return self._port

    def sessions(self) -> list[SessionInfo]:
        """One record per connected handshake-era session or 2026-07-28 listen stream."""
        return self.registry.infos()

    # -- starting and stopping -----------------------------------------------

    def start_http(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        token: str | None = None,
        allowed_hosts: Sequence[str] = (),
    ) -> str:
        """Serve Streamable HTTP at /mcp; returns the URL once the socket listens (port 0: any free port).

        Raises:
            ValueError: a non-loopback host without a token.
            OSError: the port is busy or the address unusable.
            RuntimeError: already running, or the server failed to start.
        """
        self._ensure_stopped()
        http_host.check_bind(host, token)
        sock = http_host.bind_socket(host, port)
        try:
            bound = sock.getsockname()[1]
            server = build_lowlevel(self._prepare_run("http"))
            self._lowlevel = server
            app = http_host.build_app(
                server,
                host=host,
                port=bound,
                token=token,
                max_request_body_size=self.max_request_body_size,
                session_idle_timeout=self.session_idle_timeout,
                max_sessions=self.max_sessions,
                extra_hosts=allowed_hosts,
            )
        except BaseException:
            sock.close()
            raise
        url = http_host.endpoint_url(host, bound)
        ready = threading.Event()

        def started() -> None:
            self._url, self._port = url, bound
            self.emit(ServerStarted(url, "http"))
            ready.set()

        def keep(server: uvicorn.Server) -> None:
            self._uvicorn = server

        async def main() -> None:
            try:
                ok = await http_host.serve_uvicorn(app, sock, on_started=started, stopper=keep, graceful_timeout=1)
            finally:
                sock.close()
            if not ok and not self._stopping:
                raise RuntimeError("The HTTP server did not start; see the log")

        self._launch(main, ready, f"resource-server-http-{bound}")
        return url

    def start_stdio(self) -> None:
        """Serve the process's stdin/stdout in the background (stdout then carries only protocol)."""
        self._ensure_stopped()
        server = build_lowlevel(self._prepare_run("stdio"))
        self._lowlevel = server
        ready = threading.Event()
        claim = StdinClaim() if StdinClaim.supported() else None
        self._stdin = claim

        async def main() -> None:
            try:
                stdin = claim.stdin if claim is not None else None
                async with stdio_server(stdin=stdin) as (read_stream, write_stream):
                    self.emit(ServerStarted("stdio", "stdio"))
                    ready.set()
                    await server.run(read_stream, write_stream, server.create_initialization_options())
            finally:
                if claim is not None:
                    claim.release()

        try:
            self._launch(main, ready, "resource-server-stdio")
        finally:
            if claim is not None and self._thread is None:
                claim.release()  # the thread never ran main()

    def serve_stdio(self) -> None:
        """Serve stdin/stdout until the client closes stdin (blocks; for headless use)."""
        self.start_stdio()
        thread = self._thread
        assert thread is not None
        try:
            while thread.is_alive():
                thread.join(0.2)
        except KeyboardInterrupt:
            self.stop()

    def stop(self) -> None:
        """End the server thread cleanly: listen streams close, sessions end, the port is freed."""
        thread = self._thread
        if thread is None:
            return
        self._stopping = True
        if self._uvicorn is not None:
            uvicorn_server = self._uvicorn
            # End open streams first so uvicorn's graceful shutdown has nothing to wait for.
            future = self._submit(self._end_streams(), while_stopping=True)
            if future is not None:
                try:
                    future.result(timeout=5)
                except Exception:  # shutting down regardless
                    logger.debug("Ending streams before shutdown failed", exc_info=True)
            uvicorn_server.should_exit = True
        else:
            thread.call_soon(self._close_listens)
            if self._stdin is not None:
                # The SDK's stdin reader blocks in a thread that cancellation cannot reach.
                self._stdin.hang_up()
            thread.cancel_main()
        if thread.in_loop_thread():
            return
        if not thread.join(_STOP_TIMEOUT):
            # Keep the thread: the server is still stopping, and a restart must not race it.
            logger.warning("The server thread did not end within %.0f s; it is still stopping", _STOP_TIMEOUT)
            return
        self._thread = None
        self._stdin = None

    def close(self) -> None:
        """Stop and detach from the collection."""
        self.stop()
        self._unlisten()

    @property
    def is_stopping(self) -> bool:
        """stop() was called but the server thread has not ended yet."""
        return self._stopping and self._thread is not None and self._thread.is_alive()

    def _ensure_stopped(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            if self._stopping:
                raise RuntimeError("The server is still stopping; try again in a moment")
            raise RuntimeError("The server is already running; stop() it first")
        self._thread = None
        self._stdin = None

    def _prepare_run(self, transport: str) -> ResourceServer:
        self.transport = transport
        self._stopping = False
        self._failure = None
        self._uvicorn = None
        self._url = self._port = None
        with self._state_lock:
            self._list_changed_pending = False
        return self

    def _launch(self, main: Callable[[], Any], ready: threading.Event, name: str) -> None:
        thread = LoopThread(name)
        self._thread = thread

        async def with_bus() -> None:
            # The bus connects in the background: a missing Redis never delays or fails the start.
            await self.relay.start()
            try:
                await main()
            finally:
                await self.relay.close()

        thread.start(with_bus, on_exit=self._on_thread_exit)
        deadline = time.monotonic() + _START_TIMEOUT
        while not ready.wait(0.02):
            if not thread.is_alive() or time.monotonic() > deadline:
                break
        if not ready.is_set():
            message = self._failure or "The server did not start in time"
            self.stop()
            raise RuntimeError(message)

    async def _end_streams(self) -> None:
        self._close_listens()
        manager = live_session_manager(self._lowlevel) if self._lowlevel is not None else None
        # The SDK has no public call to end its HTTP sessions before its own
        # lifespan shutdown, which uvicorn runs only after open GET streams
        # close; terminating the transports ends those streams now.
        transports = list(http_transports(manager).values()) if manager is not None else []
        for transport in transports:
            try:
                await transport.terminate()
            except Exception:  # best effort while stopping
                logger.debug("Terminating an HTTP session failed", exc_info=True)
        await asyncio.sleep(0)

    def _close_listens(self) -> None:
        for session in self.registry.all():
            session.close()

    def _on_thread_exit(self, error: BaseException | None) -> None:
        for session in self.registry.clear():
            for uri in sorted(session.subscriptions):
                self.emit(SubscriptionRemoved(session.id, uri))
            self.emit(SessionClosed(session.id))
        self._url = self._port = None
        self._uvicorn = None
        if error is not None and not (self._stopping and isinstance(error, asyncio.CancelledError)):
            message = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
            self._failure = message
            logger.error("The MCP server failed: %s", message, exc_info=error)
            self.emit(ServerFailed(message))
        else:
            self.emit(ServerStopped())

    # -- sessions (called by handlers and middleware on the server loop) --------

    def prepare_legacy_session(self, ctx: ServerRequestContext[Any, Any]) -> None:
        connection = connection_of(ctx)
        if connection is not None and SESSION_KEY not in connection.state:
            connection.state[SESSION_KEY] = connection.session_id or f"{self.transport}-{uuid.uuid4().hex[:12]}"

    def open_legacy_session(self, ctx: ServerRequestContext[Any, Any], result: Any) -> None:
        """Register the session an accepted `initialize` opened; it leaves with its connection."""
        connection = connection_of(ctx)
        if connection is None:
            return
        self.prepare_legacy_session(ctx)
        session_id: str = connection.state[SESSION_KEY]
        if self.registry.get(session_id) is not None:
            return
        params: Mapping[str, Any] = ctx.params or {}
        info: Mapping[str, Any] = params.get("clientInfo") or {}
        version = result.get("protocolVersion", "") if isinstance(result, Mapping) else ""
        session = LegacySession(
            connection=connection,
            session_id=session_id,
            transport=self.transport,
            client_name=str(info.get("name", "")),
            client_version=str(info.get("version", "")),
            protocol_version=str(version or params.get("protocolVersion", "")),
        )
        self.registry.add(session)
        connection.exit_stack.callback(self.drop_session, session_id)
        self.emit(SessionOpened(session.info()))

    def legacy_session(self, ctx: ServerRequestContext[Any, Any]) -> Session | None:
        connection = connection_of(ctx)
        if connection is None:
            return None
        session_id = connection.state.get(SESSION_KEY)
        return self.registry.get(session_id) if isinstance(session_id, str) else None

    def drop_session(self, session_id: str) -> None:
        session = self.registry.remove(session_id)
        if session is None:
            return
        for uri in sorted(session.subscriptions):
            self.emit(SubscriptionRemoved(session_id, uri))
        self.emit(SessionClosed(session_id))

    # -- notifications ---------------------------------------------------------

    @property
    def bus(self) -> Bus | None:
        """The bus replicas share notifications on (None: this server's subscribers only)."""
        return self.relay.bus

    def set_bus(self, bus: Bus | None) -> None:
        """Share notifications on `bus` from the next start (refused while running); None for none.

        Observers get BusStateChanged each time it connects or is lost.
        """
        if self._thread is not None and self._thread.is_alive():
            raise RuntimeError("The bus can only change while the server is stopped")
        if self._unwatch_bus is not None:
            self._unwatch_bus()
            self._unwatch_bus = None
        self.relay.bus = bus
        if bus is not None:
            shown = redact(bus.url)
            self._unwatch_bus = bus.add_state_listener(
                lambda connected: self.emit(BusStateChanged(connected, shown, bus.channel))
            )

    async def send_resources_changed(self, *, key: str | None = None) -> None:
        """Broadcast notifications/resources/list_changed (no-op unless notifications are enabled).

        With a bus every replica's listeners get it too. `key` names the change
        when several replicas may raise it on their own (see NotificationRelay).
        """
        if self.enable_resource_notifications:
            await self._on_server_loop(lambda: self._broadcast_list_changed(key=key))

    async def send_resource_updated(self, uri: str, *, key: str | None = None) -> None:
        """Tell every session subscribed to exactly `uri`, on every replica (no-op unless subscriptions are enabled)."""
        if self.enable_resource_subscriptions:
            await self._on_server_loop(lambda: self.relay.updated(uri, key=key))

    async def send_resource_updated_for_session(self, session_id: str, uri: str) -> None:
        """Tell one session (on whichever replica holds it), only if it subscribed to `uri`."""
        if self.enable_resource_subscriptions:
            await self._on_server_loop(lambda: self.relay.updated(uri, session_id))

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T] | None:
        """Schedule `coro` on the server loop from any thread without waiting.

        Returns None (and closes the coroutine) when the server is not running.
        """
        return self._submit(coro)

    def _submit(
        self, coro: Coroutine[Any, Any, T], *, while_stopping: bool = False
    ) -> concurrent.futures.Future[T] | None:
        # `while_stopping`: stop() itself schedules clean-up and waits for it,
        # which must not happen from the loop thread (it would wait on itself).
        thread = self._thread
        refused = (
            thread is None
            or not thread.is_alive()
            or (thread.in_loop_thread() if while_stopping else self._stopping)
        )
        if refused:
            coro.close()
            return None
        assert thread is not None
        try:
            return thread.submit(coro)
        except RuntimeError:
            return None

    def subscribed_uris(self) -> set[str]:
        """Every concrete URI some session is subscribed to."""
        return self.registry.subscribed_uris()

    async def _on_server_loop(self, make: Callable[[], Awaitable[object]]) -> None:
        thread = self._thread
        if thread is None or not thread.is_alive() or self._stopping:
            return

        async def run() -> None:
            await make()

        try:
            await thread.run_here(run())
        except RuntimeError:
            logger.debug("Notification dropped: the server loop has stopped")

    async def _broadcast_list_changed(self, *, key: str | None = None) -> None:
        with self._state_lock:
            self._list_changed_pending = False
        await self.relay.list_changed(key=key)

    @contextlib.contextmanager
    def change_key(self, key: str | None) -> Iterator[None]:
        """Collection changes made on this thread inside the block announce list_changed with `key`.

        A --watch reload names the file version it applies, so replicas reloading
        one shared file announce it once per subscriber (see NotificationRelay).
        """
        previous = getattr(self._change, "key", None)
        self._change.key = key
        try:
            yield
        finally:
            self._change.key = previous

    def _on_collection_change(self, kind: ChangeKind, resource: Resource) -> None:
        # Called on whichever thread mutated the collection (GUI, watcher, server);
        # a burst of changes (a project reload, clear()) coalesces into one notification.
        if not self.enable_resource_notifications:
            return
        thread = self._thread
        if thread is None or not thread.is_alive() or self._stopping:
            return
        with self._state_lock:
            if self._list_changed_pending:
                return
            self._list_changed_pending = True
        try:
            key = getattr(self._change, "key", None)
            thread.submit(self._broadcast_list_changed(key=f"{key}:list" if key else None))
        except RuntimeError:
            with self._state_lock:
                self._list_changed_pending = False

    # -- preview ---------------------------------------------------------------

    async def read_for_preview(self, uri: str, *, protocol_version: str | None = None) -> PreviewOutcome:
        """Read `uri` exactly as resources/read would, without a client; errors land in the outcome."""
        return await preview_read(self.resources, uri, protocol_version=protocol_version)

    def __repr__(self) -> str:
        state = self._url or (self.transport if self.is_running else "stopped")
        return f"ResourceServer({self.name!r}, {state})"

