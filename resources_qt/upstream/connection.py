"""One connection per declared upstream: made on first use (or at start, to hear updates), made again after it ends."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from resources_qt.client import (
    NotificationReceived,
    RemoteClient,
    RemoteClosed,
    RemoteConnected,
    RemoteError,
    RemoteEvent,
    RemoteFailed,
    RemoteRead,
    parse_target,
)
from resources_qt.content import ResourceContent
from resources_qt.errors import INVALID_PARAMS, RESOURCE_NOT_FOUND, NotFound, ReaderFailedError
from resources_qt.project.upstreams import UpstreamSpec

__all__ = ["RECONNECT_DELAYS_S", "UpstreamConnection", "Upstreams"]

logger = logging.getLogger(__name__)

RECONNECT_DELAYS_S = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)

CLIENT_BACKSTOP_S = 1.0
"""How much later than the upstream's `timeout` its client's own (the SDK's) request timeout falls. The two
were equal and raced: under load the SDK's "Request timed out (-32001)" answered first instead of ours,
which names the upstream and its timeout."""
"""Waits before connecting again to an upstream that went away while its updates are wanted."""
UPDATED = "notifications/resources/updated"


class UpstreamConnection:
    """Reads, completes and hears updates through one upstream; thread-safe, awaited from the server's loop.

    `watched` URIs are subscribed upstream whenever connected; their `updated` go to `on_updated`
    (the server forwards them to its own subscribers). A connection that ends is made again: at
    once on the next read, and after a growing delay while there are URIs to watch.
    """

    def __init__(self, spec: UpstreamSpec, *, on_updated: Callable[[str], None],
                 project_dir: Path | None = None) -> None:  # fmt: skip
        self.spec = spec
        self._on_updated = on_updated
        self.project_dir = project_dir
        self._lock = threading.Lock()
        self._client: RemoteClient | None = None
        self._ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._watched: set[str] = set()
        self._closed = False
        self._failures = 0
        self._timer: threading.Timer | None = None

    def watch(self, uris: set[str]) -> None:
        """Subscribe to these URIs upstream (now if connected, else on connecting) and connect for them."""
        with self._lock:
            new = uris - self._watched
            self._watched |= uris
        if not new:
            return
        client, ready = self._ensure()
        if ready.done() and ready.exception() is None:  # connected already: connecting subscribes the rest
            for uri in sorted(new):
                client.subscribe(uri).add_done_callback(functools.partial(self._subscribed, uri=uri))

    async def read(self, uri: str) -> list[ResourceContent]:
        """`uri` read upstream, within the upstream's timeout; upstream errors as the resource layer's."""
        timeout = self.spec.timeout
        client, ready = self._ensure()
        try:
            await asyncio.wait_for(asyncio.wrap_future(ready), timeout)
            read = await asyncio.wait_for(asyncio.wrap_future(client.read(uri)), timeout)
        except TimeoutError:
            raise ReaderFailedError(f"upstream {self.spec.name!r} did not answer in {timeout:g} s",
                                    data={"uri": uri, "upstream": self.spec.name}) from None  # fmt: skip
        except RemoteError as exc:
            raise ReaderFailedError(f"upstream {self.spec.name!r}: {exc.message}",
                                    data={"uri": uri, "upstream": self.spec.name}) from None  # fmt: skip
        return self._contents(read)

    async def complete(self, template: str, variable: str, value: str,
                       context: Mapping[str, str] | None) -> list[str]:  # fmt: skip
        client, ready = self._ensure()
        try:
            await asyncio.wait_for(asyncio.wrap_future(ready), self.spec.timeout)
            return await asyncio.wait_for(
                asyncio.wrap_future(client.complete(template, variable, value, dict(context or {}))), self.spec.timeout
            )
        except (TimeoutError, RemoteError):
            return []  # completions are a convenience: an unreachable upstream offers none

    def _contents(self, read: RemoteRead) -> list[ResourceContent]:
        if read.contents is not None:
            return list(read.contents)
        code, message = read.error_code, read.error_message
        data = read.error_data
        # 2026-07-28 spells not-found as invalid params about the URI itself (data {"uri": …}).
        about_uri = isinstance(data, dict) and data.get("uri") == read.uri
        if code == RESOURCE_NOT_FOUND or (code == INVALID_PARAMS and (about_uri or "not found" in message.lower())):
            # The era's own not-found error here, whatever the upstream's era spelled it as.
            raise NotFound(message, uri=read.uri)
        where = f"upstream {self.spec.name!r}"
        text = f"{where}: {message} ({code})" if code is not None else f"{where}: {message}"
        raise ReaderFailedError(text, data={"uri": read.uri, "upstream": self.spec.name, "code": code,
                                            "data": read.error_data})  # fmt: skip

    # -- the connection's lifetime ------------------------------------------------------------

    def _ensure(self) -> tuple[RemoteClient, concurrent.futures.Future[None]]:
        with self._lock:
            if self._closed:
                raise ReaderFailedError(f"upstream {self.spec.name!r} is closed")
            client = self._client
            if client is not None and not client.finished.done() and not (self._ready.done()
                                                                           and self._ready.exception()):  # fmt: skip
                return client, self._ready
            spec = self.spec
            token = os.environ.get(spec.token_env, "") if spec.token_env else ""
            target = parse_target(spec.url or spec.command, token=token, era=spec.era,
                                  cwd=str(self.project_dir) if self.project_dir else None)  # fmt: skip
            ready: concurrent.futures.Future[None] = concurrent.futures.Future()
            made: list[RemoteClient] = []  # the client's events name it; it exists before any event comes
            client = RemoteClient(target, on_event=lambda event: self._on_event(made[0], ready, event),
                                  timeout_s=spec.timeout + CLIENT_BACKSTOP_S, name=f"upstream-{spec.name}")  # fmt: skip
            made.append(client)
            if self._client is not None:
                self._client.close()
            self._client, self._ready = client, ready
        client.start()
        return client, ready

    def _on_event(self, client: RemoteClient, ready: concurrent.futures.Future[None], event: RemoteEvent) -> None:
        if isinstance(event, RemoteConnected):
            self._failures = 0
            if not ready.done():
                ready.set_result(None)
            with self._lock:
                watched = sorted(self._watched)
            if event.summary.can_subscribe:
                for uri in watched:
                    client.subscribe(uri).add_done_callback(functools.partial(self._subscribed, uri=uri))
            elif watched:
                logger.warning("Upstream %r offers no subscriptions: updates of %d resources are not forwarded",
                               self.spec.name, len(watched))  # fmt: skip
        elif isinstance(event, RemoteFailed):
            logger.warning("Upstream %r: %s", self.spec.name, event.message)
            if not ready.done():
                ready.set_exception(RemoteError(event.message))
        elif isinstance(event, NotificationReceived) and event.method == UPDATED:
            self._on_updated(event.uri)
        elif isinstance(event, RemoteClosed):
            if not ready.done():
                ready.set_exception(RemoteError("the connection closed"))
            self._reconnect_later(client)

    def _subscribed(self, future: concurrent.futures.Future[None], uri: str) -> None:
        error = future.exception()
        if error is not None:
            logger.warning("Upstream %r refused the subscription to %s: %s", self.spec.name, uri, error)

    def _reconnect_later(self, ended: RemoteClient) -> None:
        with self._lock:
            if self._closed or ended is not self._client or not self._watched:
                return
            delay = RECONNECT_DELAYS_S[min(self._failures, len(RECONNECT_DELAYS_S) - 1)]
            self._failures += 1
            timer = threading.Timer(delay, self._reconnect)
            timer.daemon = True
            self._timer = timer
        timer.start()

    def _reconnect(self) -> None:
        with contextlib.suppress(ReaderFailedError):  # closed meanwhile
            self._ensure()

    def close(self, timeout: float = 5.0) -> None:
        with self._lock:
            self._closed = True
            client, timer = self._client, self._timer
            self._client = self._timer = None
        if timer is not None:
            timer.cancel()
        if client is not None:
            client.close()
            client.join(timeout)


class Upstreams:
    """A project's declared upstreams by name (see `UpstreamConnection`)."""

    def __init__(self, specs: list[UpstreamSpec], *, on_updated: Callable[[str], None],
                 project_dir: Path | None = None) -> None:  # fmt: skip
        self._on_updated = on_updated
        self.connections: dict[str, UpstreamConnection] = {}
        self.update(specs, project_dir=project_dir)

    def get(self, name: str) -> UpstreamConnection | None:
        return self.connections.get(name)

    def update(self, specs: list[UpstreamSpec], *, project_dir: Path | None) -> None:
        """Declare `specs` from now on: unchanged upstreams keep their connection, changed or removed ones close.

        The studio's server follows the project's edits this way (an import declares an upstream while serving).
        """
        wanted = {spec.name: spec for spec in specs}
        for name, connection in list(self.connections.items()):
            if wanted.get(name) != connection.spec or connection.project_dir != project_dir:
                del self.connections[name]
                connection.close()
        for name, spec in wanted.items():
            if name not in self.connections:
                self.connections[name] = UpstreamConnection(spec, on_updated=self._on_updated,
                                                            project_dir=project_dir)  # fmt: skip

    def close(self) -> None:
        for connection in self.connections.values():
            connection.close()
