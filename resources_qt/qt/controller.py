"""ServerController: the Qt face of the engine; widgets talk to this, never to the engine."""

from __future__ import annotations

import concurrent.futures
import copy
import logging
import threading
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from PySide6.QtCore import QObject, Signal, Slot

from resources_qt.errors import ValidationError
from resources_qt.live.events import watch_kinds
from resources_qt.notifications import Notification, Updated
from resources_qt.project import Project, ResourceSpec
from resources_qt.project.settings_table import settings_for
from resources_qt.qt.engine_parts import EngineParts, build_engine, import_engine
from resources_qt.qt.facade_events import CompletionsDone, PreviewDone, TransportFailed, event_emitters
from resources_qt.qt.metrics_feed import MetricsFeed
from resources_qt.qt.pump import EventPump
from resources_qt.qt.side_loop import SideLoop
from resources_qt.resource import Resource
from resources_qt.server.auth.visibility import ScopePolicy, reading_as
from resources_qt.server.completion import complete_values
from resources_qt.server.events import (
    ServerEvent,
    ServerFailed,
    SessionInfo,
    SubscriptionAdded,
    Traffic,
)
from resources_qt.server.reading import PreviewOutcome, preview_read
from resources_qt.server.reload import (
    ChangeSummary,
    announce_changes,
    apply_project,
    apply_spec,
    served_specs,
)
from resources_qt.snippets import SnippetOutput, SnippetPool, bind_project, create_pool, snippet_resource
from resources_qt.snippets.binding import project_folder
from resources_qt.upstream import bind_upstreams, sync_upstreams, upstream_resource, watch_subscribed

if TYPE_CHECKING:  # built on first use (see EngineParts): importing them loads the SDK's server stack
    from resources_qt.bus.relay import Bus
    from resources_qt.server.engine import ResourceServer

__all__ = ["ServerController"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


class ServerController(QObject):
    """Owns a `ResourceServer` and a `SnippetPool` and re-emits engine events on the GUI thread.

    Every slot returns at once: start/stop run on a private control thread,
    notifications are scheduled on the server loop, previews and completions
    run on the server loop (or a private loop when stopped), never the GUI loop.

    HTTP and stdio may be served at once (one engine, one pool, one set of
    sessions): `start_http` / `start_stdio` each add a transport, `stop_http`
    ends HTTP only, `stop` ends everything.

    The engine (the server and its live data) is built on first real use: a
    start (on the control thread) or the `server` property. Until then the controller
    holds the collection, the project and every setting, applied to the engine
    when it is built, so that constructing it (the window does before its
    first paint) does not import the SDK's server stack. Previews and
    completions read the held collection meanwhile, the way the engine does.

    Signals:
        server_started(str url_or_transport): a transport started (the HTTP URL, or "stdio").
        server_stopped(): the server stopped: no transport is served any more.
        server_failed(str message): the server could not start, or its thread crashed.
        transport_stopped(str transport, str message): one transport ("http" / "stdio") ended, or failed
            to start (`message` says why; "" when asked to stop), while another keeps serving.
        session_opened(SessionInfo)
        session_closed(str session_id)
        subscription_added(str session_id, str uri)
        subscription_removed(str session_id, str uri)
        traffic_logged(list[Traffic]): a batch of traffic records, at most every 50 ms.
        notification_sent(str method, str uri, int recipients)
        preview_finished(PreviewOutcome)
        completions_ready(str request_id, list[str] values)
        snippet_output(str key, str text): what a snippet printed.
        read_output(SnippetOutput): what one read (or completion) printed, streams in order.
        instances_failed(str resource, str message): a template's `instances` snippet failed (listed none).
        instances_listed(str resource, int count): it answered again after a failure, or for the first time.
        data_changed(str resource, float time, list[str] uris, list[str] paths): a watched file or a polled
            read changed; `uris` were sent `updated`; `paths` are the changed files, relative to the project
            folder ([] for a poll).
        bus_state_changed(bool connected, str url): the notification bus connected or went away (url redacted).
        metrics_sampled(MetricsSample): the reads of the last second while serving (resources_qt.qt.metrics_feed).
    """

    server_started = Signal(str)
    server_stopped = Signal()
    server_failed = Signal(str)
    transport_stopped = Signal(str, str)
    session_opened = Signal(SessionInfo)
    session_closed = Signal(str)
    subscription_added = Signal(str, str)
    subscription_removed = Signal(str, str)
    traffic_logged = Signal(list)
    notification_sent = Signal(str, str, int)
    preview_finished = Signal(PreviewOutcome)
    completions_ready = Signal(str, list)
    snippet_output = Signal(str, str)
    read_output = Signal(SnippetOutput)
    instances_failed = Signal(str, str)
    instances_listed = Signal(str, int)
    data_changed = Signal(str, float, list, list)
    bus_state_changed = Signal(bool, str)
    metrics_sampled = Signal(object)

    def __init__(
        self, *, project: Project, parent: QObject | None = None, pool: SnippetPool | None = None
    ) -> None:
        super().__init__(parent)
        self._project = project.copy()
        self._pool = pool if pool is not None else create_pool(self._project)
        # The collection the engine serves once built; edits land here before and after.
        self._resources = bind_project(self._project, self._pool)
        # Imported resources read through their [[upstreams]], here as in `serve`.
        self._upstreams = bind_upstreams(self._project, self._resources, on_updated=self._on_upstream_updated)
        self._specs: dict[str, ResourceSpec] = {spec.name: spec for spec in self._project.resources}
        # Guards the engine's building against edits on the GUI thread: an engine built
        # from a project an edit has just replaced would serve the old one.
        self._lock = threading.RLock()
        self._engine: EngineParts | None = None
        self._bus: Bus | None = None
        self._announce_edits = False
        self._emitters = event_emitters(self)
        self._pump = EventPump(parent=self)
        self._pump.drained.connect(self._on_drained)
        self._unlisten_output = self._pool.add_output_listener(self._on_snippet_output)
        self._unlisten_reads = self._pool.add_read_output_listener(self._on_read_output)
        self._control = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="server-control")
        self._side = SideLoop()
        self._shut = False
        self._read_as: tuple[str, ...] | None = None
        self._metrics = MetricsFeed(self, parts=lambda: self._engine, emit=self.metrics_sampled.emit)

    # -- properties ------------------------------------------------------------------

    @property
    def server(self) -> ResourceServer:
        """The engine (for scripts and tests; widgets use the slots and signals); built on first use."""
        return self._parts().server

    @property
    def engine_built(self) -> bool:
        """The engine exists (a start or `server` built it); before, the SDK's server stack need not be loaded."""
        return self._engine is not None

    @property
    def project(self) -> Project:
        return self._project

    @property
    def is_running(self) -> bool:
        engine = self._engine
        return engine is not None and engine.server.is_running

    @property
    def url(self) -> str:
        """The HTTP endpoint while HTTP is served, else ""."""
        engine = self._engine
        return (engine.server.url or "") if engine is not None else ""

    @property
    def transports(self) -> tuple[str, ...]:
        """The transports served right now: "http", "stdio", both, or none."""
        engine = self._engine
        return engine.server.transports if engine is not None else ()

    @property
    def announce_edits(self) -> bool:
        """When on, edits applied while serving send `updated` (and `list_changed` for in-place renames)."""
        return self._announce_edits

    @announce_edits.setter
    def announce_edits(self, value: bool) -> None:
        self._announce_edits = bool(value)

    def sessions(self) -> list[SessionInfo]:
        engine = self._engine
        return engine.server.sessions() if engine is not None else []

    def watching(self) -> dict[str, str]:
        """Resources whose data is watched, and how ("files", "interval" or "both")."""
        engine = self._engine
        if engine is None:
            return dict(watch_kinds(self._specs.values()))  # what the live data takes when it is built
        return dict(engine.live.watching())

    def wait_watching(self, timeout: float = 10.0) -> bool:
        """Wait until watched files are being watched (for scripts and tests; True when nothing is)."""
        engine = self._engine
        return engine.live.wait_ready(timeout) if engine is not None else True  # watchers run while serving

    def instance_failures(self) -> dict[str, str]:
        """Templates whose `instances` snippet failed on its last run, with the message."""
        engine = self._engine
        return dict(engine.live.failures) if engine is not None else {}

    def _parts(self) -> EngineParts:
        """The engine, built now if it is not yet (on any thread; the first call imports the SDK)."""
        engine = self._engine
        if engine is not None:
            return engine
        import_engine()  # outside the lock: edits on the GUI thread must not wait for the import
        with self._lock:
            if self._engine is None:
                served = self._served()
                engine = build_engine(served, self._resources, self._pool, bus=self._bus,
                                      on_server_event=self._on_server_event, on_live_event=self._pump.push)  # fmt: skip
                if self._shut:
                    engine.unhook()  # built after shutdown (a late preview, a script): no events for a closed pump
                self._engine = engine
            return self._engine

    # -- editing -----------------------------------------------------------------------

    def apply_project(self, project: Project) -> None:
        """Serve `project` from now on, touching only resources that differ."""
        new = project.copy()
        with self._lock:
            # Compare with what is actually served (a refused edit left its old version).
            old = self._served()
            self._apply_settings(new)
            if old.prelude != new.prelude:
                self._pool.set_prelude(new.prelude)
            self._scopes_before(new.resources)
            sync_upstreams(self._upstreams, new)
            summary = apply_project(self._resources, old, new, self._make)
            self._project = new
            self._specs = {spec.name: spec for spec in served_specs(self._resources, old, new, summary)}
            self._scopes_after()
            self._update_live()
            self._announce(summary)
        if summary.refused:
            raise ValidationError(
                "Not served: " + "; ".join(f"{name}: {why}" for name, why in summary.refused.items())
            )

    def apply_resource(self, old_name: str | None, spec: ResourceSpec | None) -> None:
        """Add (old_name None), replace, or remove (spec None) one resource; raises if it is refused."""
        old = self._specs.get(old_name) if old_name else None
        if old_name and old is None and spec is None:
            return
        if spec is not None:
            spec.validate()
        with self._lock:
            self._scopes_before([spec] if spec is not None else [])
            summary = apply_spec(self._resources, old, spec, self._make)
            if old is not None:
                self._specs.pop(old.name, None)
            if spec is not None:
                # A copy: the caller may keep editing its spec, and the next call must see that as a change.
                self._specs[spec.name] = copy.deepcopy(spec)
            self._project.resources = list(self._specs.values())
            self._scopes_after()
            self._update_live()
            self._announce(summary)

    def set_prelude(self, source: str) -> None:
        if source == self._project.prelude:
            return
        with self._lock:
            self._project.prelude = source
            self._pool.set_prelude(source)
            self._announce(ChangeSummary(everything=True))

    def set_capabilities(self, notifications: bool, subscriptions: bool) -> None:
        """The switches clients see at the next start; sends follow them at once."""
        with self._lock:
            self._project.server.notifications = notifications
            self._project.server.subscriptions = subscriptions
            if self._engine is not None:
                server = self._engine.server
                server.enable_resource_notifications = notifications
                server.enable_resource_subscriptions = subscriptions

    def _apply_settings(self, project: Project) -> None:
        # Under the lock. Without an engine, building it later takes these settings from the project.
        settings = project.server
        if self._engine is not None:
            server = self._engine.server
            for applies in ("identity", "engine"):
                for name, value in settings_for(settings, applies, live_only=True).items():
                    setattr(server, name, value)
            server.cache = settings.cache
            if not server.is_running:
                for name, value in settings_for(settings, "capabilities").items():
                    setattr(server, name, value)
                server.access.config = settings.auth  # like the capabilities: taken at the next start
        self._pool.configure(**settings_for(settings, "pool", live_only=True))
        folder = project_folder(project)
        if folder is not None:
            # Saved under a new name: snippets run in (and PROJECT_DIR names) the new folder.
            self._pool.configure(project_dir=folder)

    def _scopes_before(self, specs: list[ResourceSpec]) -> None:
        # Under the lock: no version of an edited resource serves for a moment with fewer scopes than it asks.
        if self._engine is not None:
            self._engine.server.access.scopes.tighten(ScopePolicy.of_specs(specs))

    def _scopes_after(self) -> None:
        if self._engine is not None:
            self._engine.server.access.scopes.replace(ScopePolicy.of_specs(self._specs.values()))

    def _update_live(self) -> None:
        # Under the lock. On the control thread: restarting a watcher waits for its thread, which the GUI must not.
        engine = self._engine
        if self._shut or engine is None:
            return  # an engine built later gives its live data the served specs
        project = self._served()
        self._control.submit(engine.live.set_project, project).add_done_callback(_log_failure)

    def _served(self) -> Project:
        """The project as it is served: a refused edit leaves its resource's old version (under the lock)."""
        return replace(self._project, resources=list(self._specs.values()))

    def _make(self, spec: ResourceSpec) -> Resource:
        return upstream_resource(spec, self._upstreams) if spec.upstream else snippet_resource(spec, self._pool)

    def _on_upstream_updated(self, uri: str) -> None:
        self.notify(Updated(uri))  # from the upstream's client thread: notify hands it to the server loop

    def _announce(self, summary: ChangeSummary) -> None:
        engine = self._engine
        if self._announce_edits and summary and engine is not None and engine.server.is_running:
            future = engine.server.submit(announce_changes(engine.server, summary))
            if future is not None:
                future.add_done_callback(_log_failure)

    # -- serving -------------------------------------------------------------------------

    def set_bus(self, url: str | None, *, channel: str | None = None) -> None:
        """Share notifications on the Redis bus at `url` from the next start (None or "": no bus).

        Call while stopped. The channel defaults to the one `serve --bus` derives from the server
        name, so the studio reaches a fleet serving the same project.

        Raises:
            ValueError: the URL is not a bus URL (the message names the problem).
            BusDependencyError: the redis package is missing (the message names the extra).
            RuntimeError: the server is running.
        """
        bus: Bus | None = None
        if url:
            from resources_qt.bus.redis_bus import RedisBus
            from resources_qt.bus.urls import default_channel

            bus = RedisBus(url, channel=channel or default_channel(self._project.server.name))
        with self._lock:
            if self._engine is not None:
                self._engine.server.set_bus(bus)  # refused while running
            self._bus = bus  # for an engine built later
        if bus is None:
            self.bus_state_changed.emit(False, "")

    @Slot(str, int, str)
    def start_http(self, host: str = "127.0.0.1", port: int = 0, token: str | None = None) -> None:
        """Start serving HTTP (beside stdio, if served); the outcome arrives as server_started or server_failed."""
        self._control_call("http", lambda server: server.start_http(host, port, token=token or None))

    @Slot()
    def start_stdio(self, *, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        """Serve the process's stdin/stdout (or the given pipes) beside HTTP, if served."""
        self._control_call("stdio", lambda server: server.start_stdio(stdin=stdin, stdout=stdout))

    @Slot()
    def stop(self) -> None:
        """Stop every transport; server_stopped follows."""
        if self._shut:
            return
        def run() -> None:
            engine = self._engine
            if engine is None:
                return  # never built: nothing was served
            try:
                engine.live.stop()
            finally:
                engine.server.stop()

        self._control.submit(run).add_done_callback(_log_failure)

    @Slot()
    def stop_http(self) -> None:
        """Stop serving HTTP only: transport_stopped follows while stdio keeps serving, else server_stopped."""
        if self._shut:
            return
        def run() -> None:
            engine = self._engine
            if engine is None:
                return  # never built: nothing was served
            if set(engine.server.transports) <= {"http"}:
                engine.live.stop()  # nothing left to watch for
            engine.server.stop_http()

        self._control.submit(run).add_done_callback(_log_failure)

    def _control_call(self, transport: str, start: Callable[[ResourceServer], object]) -> None:
        if self._shut:
            return

        def run() -> None:
            try:
                engine = self._parts()
                self._pool.start()
                start(engine.server)
                engine.live.start()
            except Exception as exc:
                message = " ".join(str(exc).split()) or type(exc).__name__
                logger.warning("Starting %s failed: %s", transport, message)
                if self.is_running:
                    # The other transport keeps serving: only this one failed.
                    self._pump.push(TransportFailed(transport, message))
                else:
                    self._pump.push(ServerFailed(message))

        self._control.submit(run)

    # Sends reach sessions only: without an engine nothing serves, and there is no one to tell.

    @Slot(object)
    def notify(self, notification: Notification) -> None:
        """Send `notification` (list_changed, or updated for a URI and maybe one session) from the server loop."""
        engine = self._engine
        if engine is not None:
            engine.server.submit(engine.server.notify(notification))

    # -- preview and completion --------------------------------------------------------------

    @Slot(str)
    def preview(self, uri: str) -> None:
        """Read `uri` as a client would; the outcome arrives as preview_finished."""

        read_as = self._read_as
        visible = reading_as(self._specs.values(), read_as) if read_as is not None else None

        async def run() -> None:
            # The collection the engine serves (or will): the same read, resolution and error mapping.
            outcome = await preview_read(self._resources, uri, visible=visible)
            self._pump.push_now(PreviewDone(outcome))  # a user is waiting: no batching delay

        self._run_off_gui(run)

    def set_read_as(self, scopes: Sequence[str] | None) -> None:
        """Previews read as an HTTP caller whose token holds `scopes` (None: as the studio, seeing everything)."""
        self._read_as = tuple(scopes) if scopes is not None else None

    def listed_as(self, scopes: Sequence[str]) -> list[str]:
        """The served resources and templates (names) a caller holding `scopes` lists (instances follow theirs)."""
        visible = reading_as(self._specs.values(), scopes)
        return [name for name in self._specs if visible(name)]

    @Slot(str, str, str, str, dict)
    def complete(
        self, request_id: str, resource_name: str, variable: str, value: str, context: Mapping[str, str]
    ) -> None:
        """Completion values for one template variable; they arrive as completions_ready."""

        async def run() -> None:
            values: list[str] = []
            resource = self._resources.get(resource_name)
            if resource is not None:
                try:
                    values = await complete_values(resource, variable, value, dict(context or {}))
                except Exception as exc:
                    logger.info("Completion of %s.%s failed: %s", resource_name, variable, exc)
            self._pump.push(CompletionsDone(request_id, values[:100]))

        self._run_off_gui(run)

    def _run_off_gui(self, make: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """On the server loop while serving, else on a private loop thread; never the GUI loop."""
        if self._shut:
            return
        self._pool.start()
        engine = self._engine
        future = engine.server.submit(make()) if engine is not None and engine.server.is_running else None
        if future is None:
            future = self._side.get().submit(make())
        future.add_done_callback(_log_failure)

    def warm_up(self) -> None:
        """Start the snippet workers and the preview loop now (the window calls it after its first paint),
        so the first preview does not wait for them; returns at once.

        It does not build the engine: measured on a loaded 2-core machine, the SDK import on a
        background thread right after the first paint held the interpreter in 75-220 ms stretches
        and slowed the first Read from about 0.1-0.25 s to 0.5-1.5 s. The first start builds it.
        """
        if self._shut:
            return
        self._pool.start()
        if not self.is_running:
            self._side.get()

    # -- lifecycle ---------------------------------------------------------------------------

    def shutdown(self, *, timeout: float = 2.0) -> None:
        """Stop the server and the snippet workers (call on application exit); idempotent.

        The work runs on the control thread; the caller (the GUI thread) waits
        at most `timeout` seconds for it. What is left finishes in the
        background: the control thread is not a daemon, so interpreter exit
        waits for it, and the pool's finalizer reaps workers in any case.
        """
        if self._shut:
            return
        with self._lock:
            self._shut = True
            engine = self._engine
        if engine is not None:
            engine.unhook()
        self._unlisten_output()
        self._unlisten_reads()
        finished = self._control.submit(self._finish)
        finished.add_done_callback(_log_failure)  # failures are logged there, not raised here
        self._control.shutdown(wait=False)
        done, _ = concurrent.futures.wait([finished], timeout=timeout)
        if not done:
            logger.info("The server is still stopping; it finishes in the background")
        self._pump.close()

    def _finish(self) -> None:
        # Control thread: every step runs even if an earlier one fails.
        try:
            engine = self._engine
            if engine is not None:
                try:
                    engine.live.close()
                finally:
                    engine.server.close()
        finally:
            try:
                self._side.close()
            finally:
                self._upstreams.close()
                self._pool.close()

    # -- engine events -> Qt signals ---------------------------------------------------------

    def _on_server_event(self, event: ServerEvent) -> None:
        # Server thread: queue only; the pump hands batches to the GUI thread.
        if isinstance(event, Traffic):
            self._pump.push_traffic(event)
            return
        if isinstance(event, SubscriptionAdded):
            watch_subscribed(self._resources, event.uri)  # an imported template's instance, subscribed upstream
        self._pump.push(event)

    def _on_snippet_output(self, key: str, text: str) -> None:
        self._pump.push_output((key, text))

    def _on_read_output(self, output: SnippetOutput) -> None:
        # Pool thread: one record per read, in the pump's bounded output queue (a flood drops the oldest).
        self._pump.push_output(output)

    @Slot(list, list, list)
    def _on_drained(self, events: list[Any], traffic: list[Any], output: list[Any]) -> None:
        for event in events:
            self._dispatch(event)
        if traffic:
            self.traffic_logged.emit(traffic)
        for item in output:
            if isinstance(item, SnippetOutput):
                self.read_output.emit(item)
            else:
                key, text = item
                self.snippet_output.emit(key, text)

    def _dispatch(self, event: object) -> None:
        emit = self._emitters.get(type(event))
        if emit is not None:
            emit(event)

def _log_failure(future: concurrent.futures.Future[Any]) -> None:
    if future.cancelled():
        return
    try:
        future.result()
    except Exception:
        logger.exception("Background call failed")
