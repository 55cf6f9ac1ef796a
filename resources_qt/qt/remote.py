"""The Qt facade of client mode: one remote connection at a time, its events batched onto the GUI thread."""

from __future__ import annotations

import concurrent.futures
import logging
from collections.abc import Callable
from typing import TypeVar

from PySide6.QtCore import QObject, QThread, Signal, Slot

from resources_qt.client import (
    CatalogueListed,
    NotificationReceived,
    RemoteClient,
    RemoteClosed,
    RemoteConnected,
    RemoteError,
    RemoteEvent,
    RemoteFailed,
    RemoteRead,
    ServerSummary,
    SubscriptionChanged,
    Target,
    TrafficSeen,
)
from resources_qt.qt.pump import EventPump

__all__ = ["REMOTE_SIGNALS", "RemoteController"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

REMOTE_SIGNALS: dict[str, tuple[str, ...]] = {
    "connection_started": ("QString",),  # the target as typed (never the token)
    "server_connected": ("PyObject",),  # ServerSummary
    "connection_failed": ("QString",),  # the one line saying why
    "connection_closed": (),
    "catalogue_listed": ("PyObject",),  # CatalogueListed
    "read_finished": ("PyObject",),  # RemoteRead
    "completions_ready": ("QString", "QVariantList"),  # request id, list[str]
    "subscription_changed": ("QString", "bool", "QString"),  # URI, subscribed, why refused ("" if not)
    "notification_received": ("PyObject",),  # NotificationReceived
    "traffic_logged": ("QVariantList",),  # list[Traffic] with session_id "remote", a batch at most every 50 ms
}
"""Every signal of `RemoteController` with its payload."""


class _Completed:
    """A completion answer, carried through the pump."""

    __slots__ = ("request_id", "values")

    def __init__(self, request_id: str, values: list[str]) -> None:
        self.request_id = request_id
        self.values = values


_Delivered = RemoteEvent | RemoteRead | _Completed


class RemoteController(QObject):
    """Connects the window to one remote server (`RemoteClient`) at a time; never blocks the GUI thread.

    Connecting again closes the previous connection first (its thread ends on its own; `shutdown`
    waits for every one). Whatever an old connection still reports after that is dropped.

    Signals:
        connection_started(str target): connecting to `target` (as typed; the token left out).
        server_connected(ServerSummary summary): connected; who answered and what it offers.
        connection_failed(str message): the connection could not be made or was lost, in one line.
        connection_closed(): the connection ended (after a failure too); nothing of it is left running.
        catalogue_listed(CatalogueListed listing): every page of resources and templates, listed again.
        read_finished(RemoteRead read): a read's contents or exact error, and its time.
        completions_ready(str request_id, list values): `list[str]`, the server's completions.
        subscription_changed(str uri, bool subscribed, str error): a subscription was made, ended or refused.
        notification_received(NotificationReceived notification): list_changed or updated, with its time.
        traffic_logged(list entries): `list[Traffic]`, the connection's messages (session id "remote").
    """

    connection_started = Signal(str)
    server_connected = Signal(object)
    connection_failed = Signal(str)
    connection_closed = Signal()
    catalogue_listed = Signal(object)
    read_finished = Signal(object)
    completions_ready = Signal(str, list)
    subscription_changed = Signal(str, bool, str)
    notification_received = Signal(object)
    traffic_logged = Signal(list)

    def __init__(self, *, timeout_s: float = 30.0, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.timeout_s = timeout_s
        self._client: RemoteClient | None = None
        self._generation = 0
        self._ending: list[RemoteClient] = []
        self._summary: ServerSummary | None = None
        self._listing: CatalogueListed | None = None
        self._pump = EventPump(parent=self)
        self._pump.drained.connect(self._on_drained)

    # -- state -----------------------------------------------------------------------

    @property
    def target(self) -> Target | None:
        return self._client.target if self._client is not None else None

    @property
    def summary(self) -> ServerSummary | None:
        """Who answered, while connected."""
        return self._summary

    @property
    def listing(self) -> CatalogueListed | None:
        """The last listing of the connected server."""
        return self._listing

    @property
    def is_connected(self) -> bool:
        return self._summary is not None

    @property
    def subscriptions(self) -> frozenset[str]:
        return self._client.subscriptions if self._client is not None else frozenset()

    # -- commands (GUI thread; each returns at once) -------------------------------------

    def connect_to(self, target: Target) -> None:
        """Connect to `target`, closing the current connection first."""
        self.disconnect_remote()
        self._generation += 1
        generation = self._generation
        client = RemoteClient(target, on_event=lambda event: self._deliver(generation, event), timeout_s=self.timeout_s)
        self._client = client
        self.connection_started.emit(target.label)
        client.start()

    def disconnect_remote(self) -> None:
        """Close the connection (if any); `connection_closed` follows when it has ended."""
        client = self._client
        if client is None:
            return
        self._client = None
        self._summary = None
        self._listing = None
        self._ending = [c for c in self._ending if not c.finished.done()] + [client]
        client.close()
        self.connection_closed.emit()

    def refresh(self) -> None:
        client = self._need()
        if client is not None:
            # The listing itself comes as the client's event; only a failure is followed here.
            self._follow(client.refresh(), None, failed=lambda message: RemoteFailed(f"Listing failed: {message}"))

    def read(self, uri: str) -> None:
        """Read `uri`; `read_finished` follows with its contents or error."""
        client = self._client
        if client is None:
            self.read_finished.emit(RemoteRead(uri, None, 0.0, error_message="Not connected to a server"))
            return
        self._follow(client.read(uri), lambda read: read, failed=lambda message: RemoteRead(
            uri, None, 0.0, error_message=message))  # fmt: skip

    def complete(self, request_id: str, template: str, variable: str, value: str, context: dict[str, str]) -> None:
        """Ask for completions; `completions_ready(request_id, values)` follows (empty on failure)."""
        client = self._client
        if client is None:
            self.completions_ready.emit(request_id, [])
            return
        self._follow(client.complete(template, variable, value, context),
                     lambda values: _Completed(request_id, values),
                     failed=lambda _message: _Completed(request_id, []))  # fmt: skip

    def subscribe(self, uri: str) -> None:
        """Subscribe in the server's era; `subscription_changed` says whether it was made."""
        client = self._need()
        if client is not None:
            self._follow(client.subscribe(uri), None, failed=lambda message: SubscriptionChanged(uri, False, message))

    def unsubscribe(self, uri: str) -> None:
        client = self._need()
        if client is not None:
            self._follow(client.unsubscribe(uri), None, failed=lambda message: SubscriptionChanged(uri, False, message))

    def shutdown(self, *, timeout: float = 5.0) -> None:
        """Disconnect and wait (at most `timeout` each) for every connection's thread to end."""
        self._pump.close()
        client = self._client
        self._client = None
        ending = [*self._ending, *([client] if client is not None else [])]
        for each in ending:
            each.close()
        for each in ending:
            if not each.join(timeout):
                logger.warning("Remote connection to %s did not end in %.0f s", each.target.label, timeout)
        self._ending = []

    # -- from the client's thread ----------------------------------------------------------

    def _need(self) -> RemoteClient | None:
        if self._client is None:
            self.connection_failed.emit("Not connected to a server")
        return self._client

    def _deliver(self, generation: int, event: RemoteEvent) -> None:
        if isinstance(event, TrafficSeen):
            self._pump.push_traffic((generation, event.entry))
        else:
            self._pump.push((generation, event))

    def _follow(
        self,
        future: concurrent.futures.Future[T],
        deliver: Callable[[T], _Delivered] | None,
        *,
        failed: Callable[[str], _Delivered] | None = None,
    ) -> None:
        generation = self._generation
        pump = self._pump

        def hand_over(item: tuple[int, _Delivered]) -> None:
            # A future already done runs this on the GUI thread, inside add_done_callback: there the
            # pump's immediate path would flush under its own lock, so the batched path is taken.
            if QThread.currentThread() is pump.thread():
                pump.push(item)
            else:
                pump.push_now(item)

        def done(finished: concurrent.futures.Future[T]) -> None:
            if finished.cancelled():
                return
            error = finished.exception()
            if error is not None:
                message = error.message if isinstance(error, RemoteError) else str(error)
                if failed is not None:
                    hand_over((generation, failed(message)))
                return
            if deliver is not None:
                hand_over((generation, deliver(finished.result())))

        future.add_done_callback(done)

    @Slot(list, list, list)
    def _on_drained(self, events: list[tuple[int, _Delivered]], traffic: list[tuple[int, object]],
                    _output: list[object]) -> None:  # fmt: skip
        current = self._generation
        entries = [entry for generation, entry in traffic if generation == current]
        if entries:
            self.traffic_logged.emit(entries)
        for generation, event in events:
            if generation != current:
                continue
            self._emit(event)

    def _emit(self, event: _Delivered) -> None:
        if isinstance(event, RemoteConnected):
            self._summary = event.summary
            self.server_connected.emit(event.summary)
        elif isinstance(event, CatalogueListed):
            self._listing = event
            self.catalogue_listed.emit(event)
        elif isinstance(event, RemoteRead):
            self.read_finished.emit(event)
        elif isinstance(event, _Completed):
            self.completions_ready.emit(event.request_id, event.values)
        elif isinstance(event, SubscriptionChanged):
            self.subscription_changed.emit(event.uri, event.subscribed, event.error)
        elif isinstance(event, NotificationReceived):
            self.notification_received.emit(event)
        elif isinstance(event, RemoteFailed):
            self.connection_failed.emit(event.message)
        elif isinstance(event, RemoteClosed) and self._client is not None:
            # The connection ended by itself (a failure, a server that went away): forget it.
            self._ending.append(self._client)
            self._client = None
            self._summary = None
            self.connection_closed.emit()
