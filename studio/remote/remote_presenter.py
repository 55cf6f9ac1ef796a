"""What the Remote page does: connects, reads, completes, subscribes, re-reads on updates and imports."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal, Slot

from resources_qt.client import (
    CatalogueListed,
    NotificationReceived,
    RemoteError,
    RemoteRead,
    RemoteResource,
    ServerSummary,
    Target,
    parse_target,
)
from resources_qt.project import ResourceSpec
from resources_qt.qt import TrafficEntry as Traffic
from resources_qt.qt.remote import RemoteController
from studio.document.document import ProjectDocument
from studio.preferences.settings import StudioSettings
from studio.remote.connect_dialog import ConnectRequest
from studio.remote.importing import NotImportable, static_spec, upstream_for, upstream_spec
from studio.remote.remote_page import RemotePage

__all__ = ["UPDATED", "RemotePresenter"]

logger = logging.getLogger(__name__)

UPDATED = "notifications/resources/updated"
TrafficSink = Callable[[list[Traffic]], None]


class RemotePresenter(QObject):
    """Between `RemoteController` and `RemotePage`; imports go into `document`.

    A subscribed resource shown in the preview is read again when the server says it was updated.
    Remote traffic goes to `log_traffic` (the window's traffic log) under the session "remote".

    Signals:
        message_posted(str text, int timeout_ms): a line for the status bar.
        resource_imported(str name): a remote entry was added to the project under `name`.
    """

    message_posted = Signal(str, int)
    resource_imported = Signal(str)

    def __init__(
        self,
        *,
        controller: RemoteController,
        page: RemotePage,
        document: ProjectDocument,
        settings: StudioSettings,
        ask_target: Callable[[list[str], str], ConnectRequest | None],
        log_traffic: TrafficSink,
        label_session: Callable[[str, str], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.controller = controller
        self.page = page
        self.document = document
        self.settings = settings
        self._ask_target = ask_target
        self._log_traffic = log_traffic
        self._label_session = label_session
        self._requests = itertools.count(1)
        self._completing: dict[str, str] = {}  # request id -> variable
        self._shown: RemoteRead | None = None
        self._reading: str | None = None
        self._static_waiting: str | None = None
        self.last_error = ""
        """The last connection error shown (for tests and the status bar)."""

        controller.connection_started.connect(self._on_connection_started)
        controller.server_connected.connect(self._on_server_connected)
        controller.connection_failed.connect(self._on_connection_failed)
        controller.connection_closed.connect(self._on_connection_closed)
        controller.catalogue_listed.connect(self._on_catalogue_listed)
        controller.read_finished.connect(self._on_read_finished)
        controller.completions_ready.connect(self._on_completions_ready)
        controller.subscription_changed.connect(self._on_subscription_changed)
        controller.notification_received.connect(self._on_notification_received)
        controller.traffic_logged.connect(self._on_traffic_logged)
        page.connect_requested.connect(self.ask_and_connect)
        page.disconnect_requested.connect(controller.disconnect_remote)
        page.read_requested.connect(self.read)
        page.subscribe_requested.connect(self._on_subscribe_requested)
        page.import_requested.connect(self._on_import_requested)
        page.completion_requested.connect(self._on_completion_requested)

    # -- commands -------------------------------------------------------------------------

    @Slot()
    def ask_and_connect(self) -> None:
        request = self._ask_target(self.settings.recent_targets(), self.settings.remote_era())
        if request is not None:
            self.connect_to(request.target, token=request.token, era=request.era)

    def connect_to(self, text: str, *, token: str = "", era: str = "auto") -> Target | None:
        """Connect to a URL or command line; a target that cannot be parsed is shown as the page's error."""
        try:
            target = parse_target(text, token=token, era=era)
        except RemoteError as exc:
            self._on_connection_failed(exc.message)
            return None
        self.settings.add_recent_target(target.label)
        self.settings.set_remote_era(target.era)
        self.controller.connect_to(target)
        return target

    @Slot(str)
    def read(self, uri: str) -> None:
        self._reading = uri
        self.page.uri_edit.setText(uri)
        self.page.show_reading(uri)
        self.controller.read(uri)

    def subscribe(self, uri: str) -> None:
        self.controller.subscribe(uri)

    def import_remote(self, key: str, *, static: bool = False) -> str | None:
        """Add the remote entry at `key` (a URI or template) to the project; its name, or None (reported).

        It is read from the server when served: the server is declared in `[[upstreams]]` (once) and
        the resource names it. `static`: a copy of what `key` reads now instead (read first when it
        is not the content shown; the name then comes with `resource_imported`).
        """
        entry = self._entry(key)
        try:
            if static:
                shown = self._shown
                if shown is None or shown.uri != key or shown.contents is None:
                    self._static_waiting = key
                    self.read(key)
                    return None
                spec = static_spec(entry, key, shown.contents, taken=self.document.names())
                return self._add(spec)
            return self._import_upstream(key, entry)
        except NotImportable as exc:
            self.message_posted.emit(exc.message, 8000)
            self.page.show_failure(exc.message)
            return None

    def _import_upstream(self, key: str, entry: RemoteResource | None) -> str | None:
        target, summary = self.controller.target, self.controller.summary
        if target is None or summary is None:
            raise NotImportable("Connect to the server first: an import is read from it")
        if entry is None:
            raise NotImportable(f"{key} is not in the server's catalogue: import its template, or a static copy")
        doc = self.document
        upstream, new = upstream_for(target, doc.project.upstreams, name=summary.name or "upstream")
        spec = upstream_spec(entry, upstream.name, taken=doc.names())
        doc.undo_stack.beginMacro(f"Import {spec.name} from {upstream.name}")
        try:
            if new:
                doc.add_upstream(upstream)
            name = self._add(spec)
        finally:
            doc.undo_stack.endMacro()
        if name is not None and upstream.token_env:
            self.message_posted.emit(f"Imported {spec.key}; serve it with the token in ${upstream.token_env}", 8000)
        return name

    # -- helpers --------------------------------------------------------------------------

    def _entry(self, key: str) -> RemoteResource | None:
        listing = self.controller.listing
        if listing is None:
            return None
        return next((e for e in (*listing.resources, *listing.templates) if e.key == key or e.uri == key), None)

    def _add(self, spec: ResourceSpec) -> str | None:
        if any(existing.key == spec.key for existing in self.document.project.resources):
            message = f"The project already has a resource at {spec.key}"
            self.message_posted.emit(message, 8000)
            self.page.show_failure(message)
            return None
        doc = self.document
        doc.undo_stack.beginMacro(f"Import {spec.name}")
        try:
            name = doc.add_resource(template=spec.is_template)
            doc.update_resource(name, spec)
        finally:
            doc.undo_stack.endMacro()
        self.message_posted.emit(f"Imported {spec.key} as {spec.name}", 5000)
        self.resource_imported.emit(spec.name)
        return spec.name

    # -- slots: the controller ------------------------------------------------------------

    @Slot(str)
    def _on_connection_started(self, label: str) -> None:
        self.last_error = ""
        self.page.model.set_listing(None)
        self.page.show_closed()
        self.page.show_connecting(label)

    @Slot(object)
    def _on_server_connected(self, summary: ServerSummary) -> None:
        self.page.show_summary(summary)
        self._label_session("remote", f"Remote: {summary.name or summary.target}")
        self.message_posted.emit(f"Connected to {summary.name or summary.target}", 4000)

    @Slot(str)
    def _on_connection_failed(self, message: str) -> None:
        self.last_error = message
        self.page.show_failure(message)
        self.message_posted.emit(message, 8000)

    @Slot()
    def _on_connection_closed(self) -> None:
        self.page.show_closed()
        if not self.last_error:
            self.page.status_label.setText("Disconnected.")

    @Slot(object)
    def _on_catalogue_listed(self, listing: CatalogueListed) -> None:
        selected = self.page.selected
        self.page.model.set_listing(listing)
        if selected is not None:
            self.page.select_key(selected.key)

    @Slot(object)
    def _on_read_finished(self, read: RemoteRead) -> None:
        if self._reading is not None and read.uri != self._reading:
            return  # an older read answered after a newer one was asked for
        self._reading = None
        self._shown = read
        self.page.show_read(read)
        if self._static_waiting == read.uri:
            self._static_waiting = None
            if read.contents is not None:
                self.import_remote(read.uri, static=True)

    @Slot(str, list)
    def _on_completions_ready(self, request_id: str, values: list[str]) -> None:
        variable = self._completing.pop(request_id, None)
        if variable is not None:
            self.page.set_completions(variable, values)

    @Slot(str, bool, str)
    def _on_subscription_changed(self, uri: str, subscribed: bool, error: str) -> None:
        self.page.set_subscribed(uri, subscribed)
        if error:
            self.page.show_failure(error)
            self.message_posted.emit(error, 8000)

    @Slot(object)
    def _on_notification_received(self, event: NotificationReceived) -> None:
        self.page.add_event(event)
        shown = self._shown
        if (event.method == UPDATED and shown is not None and event.uri == shown.uri
                and event.uri in self.controller.subscriptions and self._reading is None):  # fmt: skip
            self.read(event.uri)

    @Slot(list)
    def _on_traffic_logged(self, entries: list[Traffic]) -> None:
        self._log_traffic(entries)

    # -- slots: the page --------------------------------------------------------------------

    @Slot(str, bool)
    def _on_subscribe_requested(self, uri: str, on: bool) -> None:
        if on:
            self.controller.subscribe(uri)
        else:
            self.controller.unsubscribe(uri)

    @Slot(str, bool)
    def _on_import_requested(self, key: str, static: bool) -> None:
        self.import_remote(key, static=static)

    @Slot(str, str, str, dict)
    def _on_completion_requested(self, template: str, variable: str, value: str, context: dict[str, str]) -> None:
        request_id = f"remote-{next(self._requests)}"
        # Only the newest question per variable is answered: older answers would reopen a stale popup.
        for old, name in list(self._completing.items()):
            if name == variable:
                del self._completing[old]
        self._completing[request_id] = variable
        self.controller.complete(request_id, template, variable, value, context)
