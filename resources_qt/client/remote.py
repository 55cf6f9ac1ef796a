"""A connection to one remote MCP server through the SDK's client, on its own asyncio loop in a background thread."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from resources_qt import __version__
from resources_qt.client.errors import ConnectContext, RemoteError, describe, leaf_error
from resources_qt.client.events import (
    CatalogueListed,
    NotificationReceived,
    RemoteClosed,
    RemoteConnected,
    RemoteEvent,
    RemoteFailed,
    RemoteRead,
    ServerSummary,
    SubscriptionChanged,
    TrafficSeen,
)
from resources_qt.client.listing import list_catalogue
from resources_qt.client.stderr_tail import StderrTail
from resources_qt.client.target import Target
from resources_qt.server.loopthread import LoopThread

if TYPE_CHECKING:
    import mcp_types as types
    from mcp import Client
    from mcp.client import Transport
    from mcp.client.subscriptions import Subscription

    from resources_qt.server.events import Traffic

__all__ = ["COMPLETION_LIMIT", "RemoteClient"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

COMPLETION_LIMIT = 100
"""Completion values kept of one answer (the spec caps an answer at 100 too)."""
RELISTEN_DELAYS_S = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
"""Waits before opening a lost subscriptions/listen stream again, growing to the last one."""

EventSink = Callable[[RemoteEvent], None]
_Job = Callable[[], Coroutine[Any, Any, None]]
_CLOSE: _Job | None = None


def _resolve(future: concurrent.futures.Future[T], result: T) -> None:
    if not future.done():  # done: the caller cancelled it
        future.set_result(result)


def _reject(future: concurrent.futures.Future[T], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)


class RemoteClient:
    """The studio as a client of `target`: list, read, complete, subscribe; every call returns at once.

    Each call returns a `concurrent.futures.Future` completed on the client's loop; what the
    server says unasked (notifications, the catalogue after list_changed, traffic, the
    connection's end) goes to `on_event`, called on the client's thread (it must not block).
    `close()` ends the connection: jobs in flight are cancelled, a stdio child is terminated
    (the SDK closes its stdin, then signals its process tree) and the thread ends.
    """

    def __init__(self, target: Target, *, on_event: EventSink, timeout_s: float = 30.0,
                 name: str = "remote-client") -> None:  # fmt: skip
        self.target = target
        self.timeout_s = timeout_s
        self._emit_to = on_event
        self._thread = LoopThread(name)
        self._lock = threading.Lock()
        self._jobs: deque[_Job | None] = deque()
        self._accepting = True
        self._wake: asyncio.Event | None = None
        self._client: Client | None = None
        self._summary: ServerSummary | None = None
        self._closing = False
        self._lost: asyncio.Event | None = None
        self._http_status: int | None = None
        self._stderr: StderrTail | None = None
        self._subscribed: set[str] = set()
        self._pending_subscriptions: dict[str, list[concurrent.futures.Future[None]]] = {}
        self._listen_changed: asyncio.Event | None = None
        self._listening: frozenset[str] | None = None
        self._finished: concurrent.futures.Future[None] = concurrent.futures.Future()

    # -- from any thread -------------------------------------------------------------

    def start(self) -> None:
        self._thread.start(self._main, on_exit=self._on_exit)

    @property
    def summary(self) -> ServerSummary | None:
        """Who answered, once connected."""
        return self._summary

    @property
    def is_connected(self) -> bool:
        return self._client is not None and not self._closing

    @property
    def subscriptions(self) -> frozenset[str]:
        return frozenset(self._subscribed)

    @property
    def finished(self) -> concurrent.futures.Future[None]:
        """Done when the thread has ended (everything the connection started has ended with it)."""
        return self._finished

    def refresh(self) -> concurrent.futures.Future[CatalogueListed]:
        """List every page of resources and templates again (also sent to `on_event`)."""
        return self._submit(self._refresh)

    def read(self, uri: str) -> concurrent.futures.Future[RemoteRead]:
        """Read `uri`; the future holds its contents or the exact error (it never raises for a server error)."""
        return self._submit(lambda: self._read(uri))

    def complete(self, template: str, variable: str, value: str,
                 context: dict[str, str] | None = None) -> concurrent.futures.Future[list[str]]:  # fmt: skip
        """The server's completions for `variable` of `template` (empty when it offers none)."""
        return self._submit(lambda: self._complete(template, variable, value, dict(context or {})))

    def subscribe(self, uri: str) -> concurrent.futures.Future[None]:
        """Subscribe in the server's era (resources/subscribe, or subscriptions/listen); RemoteError if refused."""
        return self._submit(lambda: self._subscribe(uri))

    def unsubscribe(self, uri: str) -> concurrent.futures.Future[None]:
        return self._submit(lambda: self._unsubscribe(uri))

    def close(self) -> concurrent.futures.Future[None]:
        """Disconnect (idempotent); the returned future is `finished`."""
        with self._lock:
            if self._accepting:
                self._accepting = False
                self._jobs.append(_CLOSE)
        if self._client is None:
            # Still connecting (a server that never answers): cancel the connection itself.
            self._thread.cancel_main()
        else:
            self._thread.call_soon(self._on_woken)
        if self._thread.thread is None and not self._finished.done():
            self._finished.set_result(None)
        return self._finished

    def join(self, timeout: float) -> bool:
        """Wait for the thread to end (after `close`); False if it is still running."""
        return self._thread.join(timeout)

    # -- the client's loop ---------------------------------------------------------------

    def _submit(self, work: Callable[[], Awaitable[T]]) -> concurrent.futures.Future[T]:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()

        async def job() -> None:
            try:
                _resolve(future, await work())
            except RemoteError as exc:
                _reject(future, exc)
            except Exception as exc:
                _reject(future, RemoteError(describe(exc, self._context())))
            finally:
                _reject(future, RemoteError("Disconnected before the answer came"))

        with self._lock:
            if not self._accepting:
                future.set_exception(RemoteError("Not connected"))
                return future
            self._jobs.append(job)
        self._thread.call_soon(self._on_woken)
        return future

    def _on_woken(self) -> None:
        if self._wake is not None:
            self._wake.set()

    def _emit(self, event: RemoteEvent) -> None:
        try:
            self._emit_to(event)
        except Exception:  # the sink's fault must not end the connection
            logger.exception("Remote event %s not delivered", type(event).__name__)

    def _context(self) -> ConnectContext:
        tail = self._stderr.tail() if self._stderr is not None else ""
        return ConnectContext(target=self.target.label, http_status=self._http_status,
                              had_token=bool(self.target.token), stderr_tail=tail)  # fmt: skip

    async def _main(self) -> None:
        self._wake = asyncio.Event()
        self._lost = asyncio.Event()
        try:
            async with AsyncExitStack() as stack:
                await self._connect(stack)
                await self._serve()
                self._closing = True
        except asyncio.CancelledError:
            pass
        except Exception as exc:
            if not self._closing:
                self._emit(RemoteFailed(describe(exc, self._context())))
            else:
                logger.debug("Remote connection ended with %s", leaf_error(exc), exc_info=True)
        finally:
            self._closing = True
            self._client = None
            with self._lock:
                self._accepting = False
                left = list(self._jobs)
                self._jobs.clear()
            for job in left:
                if job is not None:
                    await job()  # each settles its future with "Disconnected" (its work sees no client)

    def _on_exit(self, error: BaseException | None) -> None:
        if error is not None:
            logger.error("Remote client thread failed", exc_info=error)
        if self._stderr is not None:
            self._stderr.close()
        self._emit(RemoteClosed())
        if not self._finished.done():
            self._finished.set_result(None)

    async def _connect(self, stack: AsyncExitStack) -> None:
        import mcp_types as types
        from mcp import Client

        from resources_qt.client.tap import TappedTransport

        transport = await self._transport(stack)
        client = Client(TappedTransport(transport, self._on_traffic, on_end=self._on_stream_end),
                        mode=self.target.sdk_mode, read_timeout_seconds=self.timeout_s,
                        message_handler=self._on_message, cache=None,
                        client_info=types.Implementation(name="resource-studio", version=__version__))  # fmt: skip
        await stack.enter_async_context(client)
        if self.target.era == "2026-07-28":
            await self._discover(client)
        capabilities = client.server_capabilities.model_dump(by_alias=True, mode="json", exclude_none=True)
        info = client.server_info
        if client.server_capabilities.resources is None:
            offered = ", ".join(sorted(capabilities)) or "nothing"
            raise RemoteError(f"{self.target.label} offers no resources (its capabilities: {offered})")
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        self._summary = ServerSummary(
            target=self.target.label, name=info.name if info else "", version=info.version if info else "",
            title=(info.title or "") if info else "", instructions=client.instructions or "",
            protocol_version=client.protocol_version, modern=client.protocol_version in MODERN_PROTOCOL_VERSIONS,
            capabilities=capabilities,
        )  # fmt: skip
        self._client = client
        self._emit(RemoteConnected(self._summary))

    async def _discover(self, client: Client) -> None:
        """A pinned 2026-07-28 connection adopts a stand-in result: ask the server what it offers instead."""
        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        try:
            raw = await client.session.send_discover(self.target.era)
            # The session keeps the stand-in it adopted on entering; `discover()` would return that again.
            client.session.adopt(types.DiscoverResult.model_validate(raw))
        except MCPError as exc:
            raise RemoteError(f"{self.target.label} does not speak 2026-07-28 (server/discover: {exc.message}); "
                              "connect with era auto or handshake") from exc  # fmt: skip

    async def _transport(self, stack: AsyncExitStack) -> Transport:
        target = self.target
        if target.is_http:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            async def note_status(response: httpx2.Response) -> None:
                if response.status_code in (401, 403, 404) and self._client is None:
                    self._http_status = response.status_code

            headers = {"Authorization": f"Bearer {target.token}"} if target.token else {}
            http = await stack.enter_async_context(httpx2.AsyncClient(
                headers=headers, timeout=httpx2.Timeout(self.timeout_s, read=300.0),
                event_hooks={"response": [note_status]},
            ))  # fmt: skip
            return streamable_http_client(target.url, http_client=http)
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        self._stderr = tail = StderrTail()
        # Closed after the child has gone (the stack unwinds in reverse), so the tail's reader sees its end.
        stack.callback(tail.close_writer)
        params = StdioServerParameters(command=target.command[0], args=list(target.command[1:]), cwd=target.cwd)
        return stdio_client(params, errlog=tail.writer)

    async def _serve(self) -> None:
        import anyio

        assert self._wake is not None and self._lost is not None
        async with anyio.create_task_group() as group:
            summary = self._summary
            if summary is not None and summary.modern:
                group.start_soon(self._listen_loop)
            group.start_soon(self._refresh_quietly)
            while True:
                while self._jobs:
                    job = self._jobs.popleft()
                    if job is None:
                        group.cancel_scope.cancel()
                        return
                    group.start_soon(job)
                if self._lost.is_set():
                    raise RemoteError(self._lost_message())
                self._wake.clear()
                await self._wake.wait()

    def _lost_message(self) -> str:
        tail = self._stderr.tail() if self._stderr is not None else ""
        if self.target.is_http:
            return f"{self.target.label} closed the connection"
        return f"The command ended the connection{f': {tail}' if tail else ''}"

    # -- what the server sends unasked ---------------------------------------------------

    def _on_traffic(self, entry: Traffic) -> None:
        self._emit(TrafficSeen(entry))

    def _on_stream_end(self) -> None:
        if not self._closing and self._lost is not None and self._wake is not None:
            self._lost.set()
            self._wake.set()

    async def _on_message(self, message: types.ServerNotification | Exception) -> None:
        import mcp_types as types

        summary = self._summary
        if summary is not None and summary.modern:
            return  # the SDK tees listen-stream frames here too: the stream's own events are the ones counted
        if isinstance(message, types.ResourceUpdatedNotification):
            self._emit(NotificationReceived(datetime.now(UTC), message.method, str(message.params.uri)))
        elif isinstance(message, types.ResourceListChangedNotification):
            self._emit(NotificationReceived(datetime.now(UTC), message.method))
            self._submit(self._refresh)  # not here: the dispatcher waits for this handler
        elif isinstance(message, Exception):
            logger.debug("Remote transport reported %r", message)

    async def _refresh_quietly(self) -> None:
        try:
            await self._refresh()
        except Exception as exc:
            self._emit(RemoteFailed(f"Listing failed: {describe(exc, self._context())}"))

    # -- the jobs ---------------------------------------------------------------------

    def _connected(self) -> Client:
        client = self._client
        if client is None or self._closing:
            raise RemoteError("Not connected")
        return client

    async def _refresh(self) -> CatalogueListed:
        listed = await list_catalogue(self._connected())
        self._emit(listed)
        return listed

    async def _read(self, uri: str) -> RemoteRead:
        from mcp.shared.exceptions import MCPError

        client = self._connected()
        started = time.perf_counter()
        try:
            result = await client.read_resource(uri, cache_mode="bypass")
        except MCPError as exc:
            elapsed = (time.perf_counter() - started) * 1000
            return RemoteRead(uri, None, elapsed, error_code=exc.code, error_message=exc.message,
                              error_data=exc.data)  # fmt: skip
        except Exception as exc:
            elapsed = (time.perf_counter() - started) * 1000
            return RemoteRead(uri, None, elapsed, error_message=describe(exc, self._context()))
        elapsed = (time.perf_counter() - started) * 1000
        from resources_qt.client.listing import to_content

        try:
            contents = tuple(to_content(item) for item in result.contents)
        except RemoteError as exc:
            return RemoteRead(uri, None, elapsed, error_message=exc.message)
        return RemoteRead(uri, contents, elapsed)

    async def _complete(self, template: str, variable: str, value: str, context: dict[str, str]) -> list[str]:
        import mcp_types as types

        client = self._connected()
        if self._summary is None or not self._summary.completes:
            return []
        result = await client.complete(types.ResourceTemplateReference(uri=template),
                                       {"name": variable, "value": value}, context or None)  # fmt: skip
        return [str(item) for item in result.completion.values[:COMPLETION_LIMIT]]

    async def _subscribe(self, uri: str) -> None:
        client = self._connected()
        summary = self._summary
        if summary is None or not summary.can_subscribe:
            raise RemoteError(f"{self.target.label} offers no subscriptions (resources.subscribe is not set)")
        if uri in self._subscribed:
            return
        if not summary.modern:
            import mcp_types as types

            await client.session.send_request(types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri)),
                                              types.EmptyResult)  # fmt: skip
            self._subscribed.add(uri)
            self._emit(SubscriptionChanged(uri, True))
            return
        # 2026-07-28: one listen stream carries every subscription; it is opened again with the new set.
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._pending_subscriptions.setdefault(uri, []).append(future)
        self._subscribed.add(uri)
        if self._listen_changed is not None:
            self._listen_changed.set()
        try:
            await asyncio.wait_for(asyncio.wrap_future(future), self.timeout_s)
        except TimeoutError:
            self._refuse_pending([uri], f"no acknowledgement in {self.timeout_s:g} s")
            message = f"{uri}: the server did not acknowledge the subscription in {self.timeout_s:g} s"
            raise RemoteError(message) from None

    async def _unsubscribe(self, uri: str) -> None:
        client = self._connected()
        summary = self._summary
        if uri not in self._subscribed or summary is None:
            return
        self._subscribed.discard(uri)
        if summary.modern:
            if self._listen_changed is not None:
                self._listen_changed.set()
        else:
            import mcp_types as types

            await client.session.send_request(
                types.UnsubscribeRequest(params=types.UnsubscribeRequestParams(uri=uri)), types.EmptyResult
            )
        self._emit(SubscriptionChanged(uri, False))

    # -- 2026-07-28: subscriptions/listen ------------------------------------------------

    async def _listen_loop(self) -> None:
        """Keep one listen stream open for list_changed and the subscribed URIs, reopened when they change."""
        import anyio
        from mcp.client.subscriptions import SubscriptionLost
        from mcp.shared.exceptions import MCPError

        failures = 0
        summary = self._summary
        assert summary is not None
        while True:
            changed = self._listen_changed = asyncio.Event()
            uris = tuple(sorted(self._subscribed))
            if not uris and not summary.announces_list_changes:
                await changed.wait()
                continue
            try:
                await self._listen_once(uris, changed)
                if changed.is_set():
                    failures = 0
                    continue
                # The server closed the stream on its own: open it again, not in a tight loop.
                raise RemoteError("the server closed the subscriptions/listen stream")
            except (MCPError, SubscriptionLost, TimeoutError, RemoteError) as exc:
                message = describe(exc, self._context())
                self._refuse_pending(uris, message)
                logger.info("subscriptions/listen to %s ended: %s", self.target.label, message)
                delay = RELISTEN_DELAYS_S[min(failures, len(RELISTEN_DELAYS_S) - 1)]
                failures += 1
                with anyio.move_on_after(delay):
                    await changed.wait()

    async def _listen_once(self, uris: tuple[str, ...], changed: asyncio.Event) -> None:
        import anyio

        client = self._connected()
        summary = self._summary
        assert summary is not None
        async with client.listen(resources_list_changed=summary.announces_list_changes,
                                 resource_subscriptions=uris) as subscription:  # fmt: skip
            honored = set(subscription.honored.resource_subscriptions or ())
            for uri in uris:
                if uri in honored:
                    self._accept_pending(uri)
            self._refuse_pending([uri for uri in uris if uri not in honored],
                                 "The server did not honour the subscription")  # fmt: skip
            async with anyio.create_task_group() as group:

                async def consume() -> None:
                    await self._consume(subscription)
                    group.cancel_scope.cancel()

                group.start_soon(consume)
                await changed.wait()
                group.cancel_scope.cancel()

    async def _consume(self, subscription: Subscription) -> None:
        from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated

        async for event in subscription:
            if isinstance(event, ResourceUpdated):
                self._emit(NotificationReceived(datetime.now(UTC), "notifications/resources/updated", event.uri))
            elif isinstance(event, ResourcesListChanged):
                self._emit(NotificationReceived(datetime.now(UTC), "notifications/resources/list_changed"))
                self._submit(self._refresh)

    def _accept_pending(self, uri: str) -> None:
        futures = self._pending_subscriptions.pop(uri, [])
        if futures:
            self._emit(SubscriptionChanged(uri, True))
        for future in futures:
            _resolve(future, None)

    def _refuse_pending(self, uris: Iterable[str], message: str) -> None:
        for uri in list(uris):
            futures = self._pending_subscriptions.pop(uri, [])
            if not futures:
                continue
            self._subscribed.discard(uri)
            self._emit(SubscriptionChanged(uri, False, message))
            for future in futures:
                _reject(future, RemoteError(f"{uri}: {message}"))
