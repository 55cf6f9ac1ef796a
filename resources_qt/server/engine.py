"""ResourceServer: serves a Resources collection over stdio and/or Streamable HTTP on one loop thread."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
import threading
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from mcp.server.context import ServerRequestContext

from resources_qt.bus.relay import Bus, NotificationRelay
from resources_qt.bus.urls import redact
from resources_qt.collection import ChangeKind, Resources
from resources_qt.notifications import ListChanged, Notification, Updated
from resources_qt.resource import CacheHint, Resource
from resources_qt.server import http as http_host
from resources_qt.server.auth.access import Access
from resources_qt.server.engine_checks import check_limits
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
    TransportStopped,
)
from resources_qt.server.handlers import build_lowlevel
from resources_qt.server.metrics_labels import NotificationOrigin
from resources_qt.server.metrics_notify import ORIGIN, caller_origin, send_instrumented, tag_remote_origin
from resources_qt.server.middleware import SESSION_KEY, EngineMiddleware, connection_of
from resources_qt.server.notify import EngineDelivery, Notifier
from resources_qt.server.outbox import SEND_QUEUE
from resources_qt.server.paging import ListingCache
from resources_qt.server.read_cache import ReadCache, connect_read_cache
from resources_qt.server.reading import PreviewOutcome, preview_read
from resources_qt.server.sessions import LegacySession, Session, SessionRegistry
from resources_qt.server.streams import StreamBudget, open_stream_limit
from resources_qt.server.transports import (
    HostedTransport,
    HttpTransport,
    StdioTransport,
    TransportHost,
    TransportName,
    current_transport,
)

if TYPE_CHECKING:  # prometheus_client and OpenTelemetry's SDK load only when metrics or traces are asked for
    from resources_qt.server.metrics import ServerMetrics
    from resources_qt.server.tracing import Tracing
    from resources_qt.snippets.readers import SnippetReaders

__all__ = ["ResourceServer"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

ListCallback = Callable[[Resources], "Awaitable[None] | None"]


class ResourceServer:
    """An MCP server publishing `resources` (the seed's TTMSMCPServer).

    Set `enable_resource_notifications` / `enable_resource_subscriptions` and
    `on_list_resources` before `start_http` or `serve_stdio`: the first two are
    advertised to clients as capabilities. The server runs on its own
    asyncio.SelectorEventLoop in a background thread; observers receive
    events (resources_qt.server.events) on that thread.

    HTTP and stdio may be served at once: both transports are tasks on that
    one loop, over the same collection, sessions and notifications
    (`stop_http()` / `stop_stdio()` end one, `stop()` ends all). Each
    transport's lowlevel SDK server is built when it starts, so it advertises
    the capabilities switched on at that moment.

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
        check_limits(name=name, page_size=page_size, max_request_body_size=max_request_body_size,
                     session_idle_timeout=session_idle_timeout, max_sessions=max_sessions,
                     max_subscriptions=max_subscriptions, max_uri_length=max_uri_length)  # fmt: skip
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
        self.access = Access(resources)
        """`[server.auth]` (set `access.config` before `start_http`) and the scopes each resource needs."""
        self.notifier = Notifier(
            visible=self.access.visible_to,
            registry=self.registry,
            emit=self.emit,
            observing=lambda: self.observing,
            drop_session=self.end_session,
            queue_size=lambda: max(SEND_QUEUE, 2 * self.max_subscriptions),
        )
        self.streams = StreamBudget()
        """HTTP streams open now (GET and listen), capped below the open-file limit from start_http on."""
        # The one seam every notification passes: local subscribers at once, then
        # the bus (when replicas share one), and the other replicas' events back in.
        self.relay = NotificationRelay(
            EngineDelivery(
                notifier=self.notifier,
                registry=self.registry,
                notifications=lambda: self.enable_resource_notifications,
                subscriptions=lambda: self.enable_resource_subscriptions,
                wrap=functools.partial(send_instrumented, self),
            ),
            None,
        )
        self.metrics: ServerMetrics | None = None
        """The Prometheus metrics of this server (`enable_metrics`); None: nothing is counted."""
        self.tracing: Tracing | None = None
        """Spans of reads and notifications (`resources_qt.server.tracing.start_tracing`); None: no tracing."""
        self.read_cache = ReadCache()
        """Answers of resources with a cache hint, within their TTL; dropped by notifications and edits."""
        self._disconnect_cache = connect_read_cache(self.read_cache, notifier=self.notifier, resources=resources)
        self._unwatch_bus: Callable[[], None] | None = None
        self._observers: list[Observer] = []
        self._observers_lock = threading.Lock()
        self._host = TransportHost(
            setup=self._setup_loop,
            teardown=self.relay.close,
            on_ended=self._on_transport_ended,
            on_exit=self._on_thread_exit,
        )
        self._failure: str | None = None
        self._list_changed_pending = False
        self._state_lock = threading.Lock()
        self._change = threading.local()
        self._unlisten = resources.add_listener(self._on_collection_change)
        self.set_bus(bus)

    def enable_metrics(self, *, readers: SnippetReaders | None = None) -> ServerMetrics:
        """Count reads and notifications from now on (idempotent); `readers`: the pool the gauges report."""
        if self.metrics is None:
            from resources_qt.server.metrics import ServerMetrics

            self.metrics = ServerMetrics(self, readers=readers)
        return self.metrics

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
        """Some transport is being served (or starting) and stop() has not been asked for."""
        return self._host.alive() and not self._host.stopping

    @property
    def transports(self) -> tuple[TransportName, ...]:
        """The transports being served right now: "http", "stdio", both, or none."""
        return self._host.names()

    @property
    def transport(self) -> str:
        """The transport of the request being handled ("http" / "stdio"); else the only one served, or ""."""
        current = current_transport()
        if current:
            return current
        names = self._host.names()
        return names[0] if len(names) == 1 else ""

    @property
    def url(self) -> str | None:
        """The HTTP endpoint (`http://host:port/mcp`) while serving HTTP, else None."""
        http = self._host.get("http")
        return http.url if isinstance(http, HttpTransport) and http.started.is_set() else None

    @property
    def port(self) -> int | None:
        http = self._host.get("http")
        return http.port if isinstance(http, HttpTransport) and http.started.is_set() else None

    def sessions(self) -> list[SessionInfo]:
        """One record per connected handshake-era session or 2026-07-28 listen stream, of every transport."""
        return self.registry.infos()

    # -- starting and stopping -----------------------------------------------
    #
    # One loop thread serves every transport: the first start makes it, each
    # start adds its transport as a task on it, and it ends with the last one.

    def start_http(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        token: str | None = None,
        allowed_hosts: Sequence[str] = (),
    ) -> str:
        """Serve Streamable HTTP at /mcp; returns the URL once the socket listens (port 0: any free port).

        A stdio transport being served keeps running beside it (same collection, sessions and pool).

        With `access.config` (`[server.auth]`) set, HTTP callers need an OAuth access token from its issuer
        instead (`resources_qt.server.auth`), and see the resources their token's scopes allow.

        Raises:
            ValueError: a non-loopback host without a token or `[server.auth]`; a token with `[server.auth]`.
            OSError: the port is busy or the address unusable.
            RuntimeError: serving HTTP already, still stopping, or the server failed to start.
        """
        self._host.check_can_start("http")
        oauth = self.access.http_auth(path=http_host.MCP_PATH, token=token)
        http_host.check_bind(host, token, oauth=oauth is not None)
        sock = http_host.bind_socket(host, port)
        try:
            bound = sock.getsockname()[1]
            self.streams = StreamBudget(open_stream_limit())
            server = build_lowlevel(self)
            app = http_host.build_app(
                server,
                host=host,
                port=bound,
                token=token,
                max_request_body_size=self.max_request_body_size,
                session_idle_timeout=self.session_idle_timeout,
                max_sessions=self.max_sessions,
                extra_hosts=[*allowed_hosts, *(oauth.hosts() if oauth is not None else ())],
                streams=self.streams,
                oauth=oauth,
            )
        except BaseException:
            sock.close()
            raise
        url = http_host.endpoint_url(host, bound)
        transport = HttpTransport(
            app=app, sock=sock, lowlevel=server, url=url, port=bound, close_sessions=lambda: self._close_listens("http")
        )
        self._host.add(transport, on_started=lambda: self.emit(ServerStarted(url, "http")))
        return url

    def start_stdio(self, *, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        """Serve the process's stdin/stdout in the background (stdout then carries only protocol).

        An HTTP transport being served keeps running beside it. `stdin` / `stdout`
        (text files over real descriptors, e.g. pipes) serve a client over those
        instead of the process's own streams; they stay the caller's to close.
        """
        self._host.check_can_start("stdio")
        transport = StdioTransport(
            lowlevel=build_lowlevel(self),
            close_sessions=lambda: self._close_listens("stdio"),
            stdin=stdin,
            stdout=stdout,
        )
        self._host.add(transport, on_started=lambda: self.emit(ServerStarted("stdio", "stdio")))

    def serve_stdio(self, *, until: threading.Event | None = None) -> None:
        """Serve stdin/stdout until the client closes stdin or `until` is set (blocks; for headless use).

        Returns when the stdio client has gone; other transports are left running (stop() ends them).
        """
        self.start_stdio()
        thread = self._host.thread
        assert thread is not None
        stopping = until if until is not None else threading.Event()
        try:
            while thread.is_alive() and self._host.get("stdio") is not None and not stopping.wait(0.2):
                pass
        except KeyboardInterrupt:
            self.stop()

    def stop_http(self) -> None:
        """Stop serving HTTP only (its sessions end, the port is freed); stdio keeps running. No-op if not serving."""
        self._host.remove("http")

    def stop_stdio(self) -> None:
        """Stop serving stdio only (the wire goes back to fd 0); HTTP keeps running. No-op if not serving."""
        self._host.remove("stdio")

    def stop(self) -> None:
        """End every transport and the server thread: listen streams close, sessions end, the port is freed."""
        self._host.stop()

    def close(self) -> None:
        """Stop and detach from the collection."""
        self.stop()
        self._unlisten()
        self._disconnect_cache()

    @property
    def is_stopping(self) -> bool:
        """stop() was called (or the last transport ended) but the server thread has not ended yet."""
        return self._host.stopping and self._host.alive()

    async def _setup_loop(self) -> None:
        with self._state_lock:
            self._list_changed_pending = False
        await self.relay.start()

    def _close_listens(self, transport: str | None = None) -> None:
        for session in self.registry.all():
            if transport is None or session.transport == transport:
                session.close()

    def _on_transport_ended(self, transport: HostedTransport, remaining: tuple[TransportName, ...]) -> None:
        # On the loop: one transport ended while others keep serving. Its sessions
        # leave with their connections; any left over (a listen stream) go now.
        for session in self.registry.all():
            if session.transport == transport.name:
                self.drop_session(session.id)
        error = transport.error
        message = ""
        if error is not None:
            message = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        self.emit(TransportStopped(transport.name, message, remaining))

    def _on_thread_exit(self, error: BaseException | None) -> None:
        for session in self.registry.clear():
            for uri in sorted(session.subscriptions):
                self.emit(SubscriptionRemoved(session.id, uri))
            self.emit(SessionClosed(session.id))
        if error is not None and not (self._host.stopping and isinstance(error, asyncio.CancelledError)):
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
            prefix = self.transport or "session"
            connection.state[SESSION_KEY] = connection.session_id or f"{prefix}-{uuid.uuid4().hex[:12]}"

    def open_legacy_session(self, ctx: ServerRequestContext[Any, Any], result: Any) -> None:
        """Register the session an accepted `initialize` opened; it leaves with its connection."""
        connection = connection_of(ctx)
        if connection is None:
            return
        self.prepare_legacy_session(ctx)
        session_id: str = connection.state[SESSION_KEY]
        if self.registry.get(session_id) is not None:
            return
        caller = self.access.caller(ctx)
        session = LegacySession.opened_by(
            connection, session_id=session_id, transport=self.transport, params=ctx.params or {}, result=result,
            caller=caller,
        )  # fmt: skip
        if caller.subject or caller.client_id:
            logger.info("Session %s opened for %r (client %r)", session_id, caller.subject, caller.client_id)
        if session.transport == "http":
            session.ender = lambda: self._end_http_session(session_id)
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
        session.stop_sending()
        for uri in sorted(session.subscriptions):
            self.emit(SubscriptionRemoved(session_id, uri))
        self.emit(SessionClosed(session_id))

    def end_session(self, session_id: str) -> None:
        """Drop a session that cannot be sent to (not reading, or its send failed) and close its stream."""
        session = self.registry.get(session_id)
        self.drop_session(session_id)
        if session is not None:
            session.end()

    def _end_http_session(self, session_id: str) -> None:
        http = self._host.get("http")
        if isinstance(http, HttpTransport):
            http.end_session(session_id)

    # -- notifications ---------------------------------------------------------

    @property
    def bus(self) -> Bus | None:
        """The bus replicas share notifications on (None: this server's subscribers only)."""
        return self.relay.bus

    def set_bus(self, bus: Bus | None) -> None:
        """Share notifications on `bus` from the next start (refused while running); None for none.

        Observers get BusStateChanged each time it connects or is lost.
        """
        if self._host.alive():
            raise RuntimeError("The bus can only change while the server is stopped")
        if self._unwatch_bus is not None:
            self._unwatch_bus()
            self._unwatch_bus = None
        self.relay.bus = bus
        if bus is not None:
            shown = redact(bus.url)
            unwatch = bus.add_state_listener(
                lambda connected: self.emit(BusStateChanged(connected, shown, bus.channel))
            )
            # Before the relay's own listener (it subscribes when the loop starts): tells what it delivers
            # came from another replica or from `resource-studio notify` (the metrics' origin label).
            untag = bus.add_listener(tag_remote_origin)

            def unhook() -> None:
                unwatch()
                untag()

            self._unwatch_bus = unhook

    async def notify(
        self, notification: Notification, *, key: str | None = None, origin: NotificationOrigin | None = None
    ) -> None:
        """Announce `notification` to this server's sessions and, with a bus, every replica's.

        A no-op unless its switch is on (`notifications` for list_changed, `subscriptions` for updated).
        What it concerns is dropped from the read cache first, whether or not anything goes out (switched
        off, the server stopped): what changed must not be served from the cache, now or after a restart.
        `key` names the change when several replicas may raise it on their own (see NotificationRelay).
        `origin` says who raised it, for the metrics (default: the live data's watch or poll, else "edit").
        """
        raised_by = caller_origin(origin)
        if isinstance(notification, Updated):
            self.read_cache.invalidate(notification.uri)
        else:
            self.read_cache.clear()
        on = self.enable_resource_notifications if notification.capability == "notifications" else (
            self.enable_resource_subscriptions
        )
        if on:
            await self._on_server_loop(lambda: self._send(notification, key=key, origin=raised_by))

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T] | None:
        """Schedule `coro` on the server loop from any thread without waiting.

        Returns None (and closes the coroutine) when the server is not running.
        """
        thread = self._host.thread
        if thread is None or not thread.is_alive() or self._host.stopping:
            coro.close()
            return None
        try:
            return thread.submit(coro)
        except RuntimeError:
            return None

    def subscribed_uris(self) -> set[str]:
        """Every concrete URI some session is subscribed to."""
        return self.registry.subscribed_uris()

    async def _on_server_loop(self, make: Callable[[], Awaitable[object]]) -> None:
        thread = self._host.thread
        if thread is None or not thread.is_alive() or self._host.stopping:
            return

        async def run() -> None:
            await make()

        try:
            await thread.run_here(run())
        except RuntimeError:
            logger.debug("Notification dropped: the server loop has stopped")

    async def _send(
        self, notification: Notification, *, key: str | None = None, origin: NotificationOrigin = "edit"
    ) -> None:
        if isinstance(notification, ListChanged):
            with self._state_lock:
                self._list_changed_pending = False
        token = ORIGIN.set(origin)
        try:
            await self.relay.send(notification, key=key)
        finally:
            ORIGIN.reset(token)

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
        thread = self._host.thread
        if thread is None or not thread.is_alive() or self._host.stopping:
            return
        with self._state_lock:
            if self._list_changed_pending:
                return
            self._list_changed_pending = True
        try:
            key = getattr(self._change, "key", None)
            thread.submit(self._send(ListChanged(), key=f"{key}:list" if key else None))
        except RuntimeError:
            with self._state_lock:
                self._list_changed_pending = False

    # -- preview ---------------------------------------------------------------

    async def read_for_preview(self, uri: str, *, protocol_version: str | None = None) -> PreviewOutcome:
        """Read `uri` exactly as resources/read would, without a client; errors land in the outcome."""
        return await preview_read(self.resources, uri, protocol_version=protocol_version)

    def __repr__(self) -> str:
        state = " + ".join(self.url if name == "http" and self.url else name for name in self.transports) or "stopped"
        return f"ResourceServer({self.name!r}, {state})"
