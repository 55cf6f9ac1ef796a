"""LiveData: instances in the listing, and updates driven by watched files and polling, for one server."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from resources_qt.collection import Resources
from resources_qt.live.events import (
    DataChanged,
    InstancesFailed,
    InstancesListed,
    LiveEvent,
    LiveListener,
    WatchKind,
    watch_kinds,
)
from resources_qt.live.instances import InstanceLister, InstancesError
from resources_qt.live.poll import (
    FILE_REREAD_CAP,
    FILE_REREAD_CONCURRENCY,
    ChangeRereader,
    DigestBook,
    DigestPoller,
)
from resources_qt.live.watch_files import FileWatch
from resources_qt.notifications import ListChanged, Updated
from resources_qt.project import Project, ResourceSpec
from resources_qt.server.engine import ResourceServer
from resources_qt.server.events import ServerEvent, SubscriptionAdded
from resources_qt.server.loopthread import LoopThread
from resources_qt.server.metrics_labels import NotificationOrigin
from resources_qt.server.reading import PreviewOutcome
from resources_qt.snippets import SnippetPool

__all__ = ["LiveData"]

logger = logging.getLogger(__name__)

_STOP_TIMEOUT = 10.0
_STATTED = 64
"""Changed paths whose modification time is looked at for when a change was written (more: the burst window)."""
_KEPT_PATHS = 1000
"""Changed paths one coalesced change keeps (for the event and the heuristic); past it only the time counts."""


class _PendingChange:
    """Watched changes of one resource not handled yet: its paths, and when the first batch arrived."""

    def __init__(self, arrived: float) -> None:
        self.arrived = arrived
        self.paths: list[str] = []
        self.overflow = False
        self._seen: set[str] = set()

    def add(self, paths: Iterable[str]) -> None:
        for path in paths:
            if path in self._seen:
                continue
            if len(self.paths) >= _KEPT_PATHS:
                self.overflow = True
                return
            self._seen.add(path)
            self.paths.append(path)


class LiveData:
    """The served data drives listing and notifications (issue 13).

    - On every resources/list (the engine's `on_list_resources`), each
      template's `instances` snippet runs in the pool and its instances are
      listed as direct resources (`ListingCache.set_instances`); a failing snippet lists
      none for that template, is logged and reported (`InstancesFailed`),
      and the rest of the listing is intact. Listing never sends
      `list_changed`.
    - `watch.files`: a burst of changes re-reads the subscribed URIs of the
      resource (`ChangeRereader`: bounded, coalesced while one runs) and sends
      `updated` only for those whose digest changed since the subscriber had
      it (a baseline is read when a URI is subscribed); a template with
      instances is re-listed, with `list_changed` when the set changed.
    - `watch.interval`: every subscribed URI of the resource is re-read
      through the normal reader path, once however many sessions hold it and
      within the poller's read budget (fairly across sessions, see
      DigestPoller); `updated` goes out when its digest changed. No
      subscriber, no reads.
    - Either way a change first drops every read-cache entry of the resource
      (all of a template's instances), subscribed or not: a client that
      never subscribed must not be served the old answer (issue 14).

    Watching runs on its own loop thread (`start()`/`stop()`, any thread),
    so it does not depend on the server running: notifications while the
    server is stopped are no-ops of the engine. Listeners get `LiveEvent`s
    on the live or the server thread.
    """

    def __init__(
        self,
        server: ResourceServer,
        project: Project,
        pool: SnippetPool,
        *,
        quiet_ms: int = 150,
        poll_concurrency: int = 8,
        reread_cap: int = FILE_REREAD_CAP,
        reread_concurrency: int = FILE_REREAD_CONCURRENCY,
    ) -> None:
        self._server = server
        self._pool = pool
        self._quiet_ms = quiet_ms
        self._poll_concurrency = poll_concurrency
        self._reread_cap = reread_cap
        self._reread_concurrency = reread_concurrency
        self._books: dict[str, DigestBook] = {}
        self._rereaders: dict[str, ChangeRereader] = {}
        self._pending_files: dict[str, _PendingChange] = {}
        self._file_tasks: dict[str, asyncio.Task[None]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._baselines_wanted: asyncio.Event | None = None
        self._listeners: list[LiveListener] = []
        self._lock = threading.Lock()
        self._owner_stamp: tuple[int, int] | None = None
        self._owner_of: dict[str, str | None] = {}
        self._thread: LoopThread | None = None
        self._watch: FileWatch | None = None
        self._announced: dict[str, frozenset[str]] = {}
        self._relisting: asyncio.Lock | None = None
        self._failed: dict[str, str] = {}
        self._pollers: dict[str, DigestPoller] = {}
        self._project = project
        self._specs: dict[str, ResourceSpec] = {}
        self._lister = InstanceLister(pool)
        self.listing = server.listing
        self._previous_callback = server.on_list_resources
        server.on_list_resources = self._on_list
        self.set_project(project)

    # -- configuration -------------------------------------------------------

    @property
    def project_dir(self) -> Path | None:
        path = self._project.path
        return path.resolve().parent if path is not None else None

    @property
    def resources(self) -> Resources:
        return self._server.resources

    def set_project(self, project: Project) -> None:
        """Take new declarations; instances re-list on the next listing.

        Watchers restart (if running) only when what is watched changed: a
        folder, a pattern, an interval, or a resource coming or going.
        """
        before = _watched(self._specs.values()), self.project_dir
        self._project = project
        specs = {spec.name: spec for spec in project.resources}
        with self._lock:
            self._specs = specs
        self.listing.retain({name for name, spec in specs.items() if spec.instances.strip()})
        if self._thread is not None and (_watched(specs.values()), self.project_dir) != before:
            self.stop()
            self.start()

    def watching(self) -> dict[str, WatchKind]:
        """Resources that are watched, and how."""
        return watch_kinds(self._specs.values())

    def add_listener(self, callback: LiveListener) -> Callable[[], None]:
        with self._lock:
            self._listeners = [*self._listeners, callback]

        def unsubscribe() -> None:
            with self._lock:
                self._listeners = [c for c in self._listeners if c is not callback]

        return unsubscribe

    def _emit(self, event: LiveEvent) -> None:
        for listener in self._listeners:
            try:
                listener(event)
            except Exception:
                logger.exception("Live data listener %r failed on %s", listener, type(event).__name__)

    # -- running -----------------------------------------------------------------

    def start(self) -> None:
        """Start watching files and polling (idempotent); returns at once."""
        if self._thread is not None:
            return
        root = self.project_dir
        files = {n: list(s.watch.files) for n, s in self._specs.items() if s.watch is not None and s.watch.files}
        if files and root is None:
            logger.warning("watch.files needs a saved project (patterns are relative to its folder); not watching")
            files = {}
        self._watch = FileWatch(root or Path("."), files, self._on_files, quiet_ms=self._quiet_ms)
        self._pollers = {}
        thread = LoopThread("resource-live-data")
        self._thread = thread
        thread.start(self._main, on_exit=self._on_exit)

    def stop(self) -> None:
        """Stop watching and polling; waits for the live thread to end."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        thread.cancel_main()
        if not thread.join(_STOP_TIMEOUT):
            logger.warning("The live data thread did not stop within %.0f s", _STOP_TIMEOUT)

    def close(self) -> None:
        """Stop, and give the engine back its own listing callback."""
        self.stop()
        if self._server.on_list_resources == self._on_list:
            self._server.on_list_resources = self._previous_callback

    def wait_ready(self, timeout: float = 10.0) -> bool:
        """Wait until watched files are being watched (True at once when nothing is)."""
        watch = self._watch
        if watch is None or watch.empty:
            return True
        return watch.ready.wait(timeout)

    def poll_cycles(self, name: str) -> int:
        """How many polling rounds ran for resource `name` (with or without subscribers)."""
        poller = self._pollers.get(name)
        return poller.cycles if poller is not None else 0

    def poll_rounds(self, name: str) -> list[float]:
        """Seconds each recent polling round with reads took for resource `name`."""
        poller = self._pollers.get(name)
        return list(poller.rounds) if poller is not None else []

    def poll_round_reads(self, name: str) -> list[int]:
        """Reads each recent polling round with reads made for resource `name`."""
        poller = self._pollers.get(name)
        return list(poller.round_reads) if poller is not None else []

    def poll_reads(self, name: str) -> int:
        """How many polling reads were made for resource `name` (for tests and the bench)."""
        poller = self._pollers.get(name)
        return poller.reads if poller is not None else 0

    def baselined_uris(self, name: str) -> set[str]:
        """Subscribed URIs of resource `name` whose content is known, so a watched change can tell if they changed."""
        book = self._books.get(name)
        return book.uris() if book is not None else set()

    def reread_reads(self, name: str) -> int:
        """Reads made after watched changes (and for baselines) of resource `name` (for tests and the bench)."""
        rereader = self._rereaders.get(name)
        return rereader.reads if rereader is not None else 0

    def reread_rounds(self, name: str) -> list[float]:
        """Seconds each recent re-read of resource `name`'s subscribed URIs after a watched change took."""
        rereader = self._rereaders.get(name)
        return list(rereader.rounds) if rereader is not None else []

    async def _main(self) -> None:
        tasks: list[asyncio.Task[None]] = []
        self._books, self._rereaders = {}, {}
        watch = self._watch
        if watch is not None and not watch.empty:
            tasks.append(asyncio.create_task(watch.run()))
            for name in watch.names:
                self._rereaders[name] = ChangeRereader(
                    self._read, name=name, book=self._books.setdefault(name, DigestBook()),
                    cap=self._reread_cap, concurrency=self._reread_concurrency,
                )  # fmt: skip
        for name, spec in self._specs.items():
            if spec.watch is not None and spec.watch.interval is not None:
                poller = DigestPoller(
                    self._read, name=name, interval=spec.watch.interval, concurrency=self._poll_concurrency,
                    book=self._books.setdefault(name, DigestBook()),
                )  # fmt: skip
                self._pollers[name] = poller
                tasks.append(asyncio.create_task(self._poll_loop(spec, spec.watch.interval, poller)))
        unobserve: Callable[[], None] | None = None
        self._loop = asyncio.get_running_loop()
        if self._rereaders:
            # Every subscription of a file-watched resource gets a baseline read (those there already too),
            # so the first change can tell which instances changed.
            self._baselines_wanted = asyncio.Event()
            self._baselines_wanted.set()
            tasks.append(asyncio.create_task(self._baseline_loop(self._baselines_wanted)))
            unobserve = self._server.add_observer(self._on_server_event)
        try:
            # Seed what was announced, so the first change of the set is what sends list_changed. A change
            # the seed sees after a client listed the set is announced too (what the client saw is the
            # baseline, `_on_list`).
            if any(spec.instances.strip() for spec in self._specs.values()):
                await self._lister.wait_for_workers()
            await self._relist(announce=True)
            if tasks:
                await asyncio.gather(*tasks)
            else:
                await asyncio.Event().wait()
        finally:
            if unobserve is not None:
                unobserve()
            self._loop = None
            self._relisting = None  # bound to this loop; a restart runs on a new one
            for task in [*tasks, *self._file_tasks.values()]:
                task.cancel()
            self._file_tasks.clear()
            self._pending_files.clear()

    def _on_exit(self, error: BaseException | None) -> None:
        if error is not None:
            logger.error("Live data stopped: %s", error, exc_info=error)

    # -- listing -------------------------------------------------------------------

    async def _on_list(self, resources: Resources) -> None:
        previous = self._previous_callback
        if previous is not None:
            result = previous(resources)
            if inspect.isawaitable(result):
                await result
        listed = await self._list_all(fresh=False)  # a client's listing reuses a recent answer
        for name, uris in listed.items():
            # Before the seed: what this client saw is what a later change is compared with.
            self._announced.setdefault(name, uris)

    async def _list_all(self, *, fresh: bool) -> dict[str, frozenset[str]]:
        names = [n for n, s in self._specs.items() if s.instances.strip() and s.is_template]
        found = await asyncio.gather(*(self._list_one(name, fresh=fresh) for name in names))
        return dict(zip(names, found, strict=True))

    async def _list_one(self, name: str, *, fresh: bool) -> frozenset[str]:
        spec = self._specs.get(name)
        template = self.resources.get(name)
        if spec is None or template is None or not template.is_template:
            return frozenset()
        try:
            instances = await self._lister.list(template, spec.instances, fresh=fresh)
        except InstancesError as exc:
            message = str(exc)
            logger.warning("Instances of %s: %s", name, message)
            self.listing.set_instances(name, [])
            self._failed[name] = message
            self._emit(InstancesFailed(name, message, time.time()))
            return frozenset()
        self.listing.set_instances(name, instances)
        if self._failed.pop(name, None) is not None or self._announced.get(name) is None:
            self._emit(InstancesListed(name, len(instances), time.time()))
        return frozenset(r.uri for r in instances)

    async def _relist(
        self, *, announce: bool, only: Sequence[str] | None = None, origin: NotificationOrigin = "watch"
    ) -> set[str]:
        """Re-run the listings; returns the templates whose set of instances changed and were announced.

        With notifications switched off nothing is announced (and nothing returned).
        """
        # One at a time, each listing and comparing under the lock: a listing that started earlier and
        # ended later (the seed, slow under load) must not overwrite what a newer one saw, nor record a
        # change silently because the seed was not in yet (a CI run lost a list_changed that way).
        if self._relisting is None:
            self._relisting = asyncio.Lock()
        async with self._relisting:
            # Live data's own listings (the start, a watched change, a poll) run the snippet: the change
            # they were told of may be newer than any kept answer.
            if only is None:
                current = await self._list_all(fresh=True)
            else:
                wanted = [n for n in only if self._specs.get(n) is not None and self._specs[n].instances.strip()]
                listed = await asyncio.gather(*(self._list_one(n, fresh=True) for n in wanted))
                current = dict(zip(wanted, listed, strict=True))
            changed = {name for name, uris in current.items() if self._announced.get(name) != uris}
            had = {name for name in changed if name in self._announced}
            self._announced.update(current)
        if not (announce and had and self._server.enable_resource_notifications):
            return set()
        await self._server.notify(ListChanged(), origin=origin)
        return had

    # -- changes --------------------------------------------------------------------

    def subscribed_uris(self, name: str) -> list[str]:
        """The subscribed URIs that resource `name` serves (its URI, or a template's concrete URIs)."""
        owners = self._owners(self._server.subscribed_uris())
        return sorted(uri for uri, owner in owners.items() if owner == name)

    def subscribers(self, name: str) -> dict[str, list[str]]:
        """{session id: its subscribed URIs that resource `name` serves}, for sessions holding any."""
        sessions = self._server.sessions()
        owners = self._owners({uri for info in sessions for uri in info.subscriptions})
        out: dict[str, list[str]] = {}
        for info in sessions:
            uris = [uri for uri in info.subscriptions if owners.get(uri) == name]
            if uris:
                out[info.id] = uris
        return out

    def _owners(self, uris: Iterable[str]) -> dict[str, str]:
        """{URI: the name of the resource serving it} for those of `uris` some resource serves.

        Resolutions are kept while the collection is unchanged, so a polling round
        does not match every subscribed URI against every template again; only the
        URIs asked about last are kept, so the memory follows the subscriptions.
        """
        resources = self.resources
        stamp = (id(resources), resources.version)
        with self._lock:
            known = self._owner_of if stamp == self._owner_stamp else {}
        fresh: dict[str, str | None] = {}
        for uri in uris:
            if uri in known:
                fresh[uri] = known[uri]
                continue
            try:
                match = resources.resolve(uri)
            except Exception:  # a URI no resource can take is simply not ours
                match = None
            fresh[uri] = match.resource.name if match is not None else None
        with self._lock:
            self._owner_stamp, self._owner_of = stamp, fresh
        return {uri: owner for uri, owner in fresh.items() if owner is not None}

    async def _on_files(self, hit: Mapping[str, tuple[str, ...]]) -> None:
        """A batch of watched changes: handled per resource, one at a time; batches meanwhile are coalesced."""
        arrived = time.time()
        for name, paths in hit.items():
            pending = self._pending_files.get(name)
            if pending is None:
                pending = self._pending_files[name] = _PendingChange(arrived)
            pending.add(paths)
            task = self._file_tasks.get(name)
            if task is None or task.done():
                self._file_tasks[name] = asyncio.create_task(self._drain_files(name))

    async def _drain_files(self, name: str) -> None:
        while (pending := self._pending_files.pop(name, None)) is not None:
            try:
                await self._files_changed(name, pending)
            except Exception:  # one failed announcement must not end the watching
                logger.exception("Announcing the changed files of %s failed", name)

    async def _files_changed(self, name: str, pending: _PendingChange) -> None:
        written = await asyncio.to_thread(self._earliest_write, pending)
        self._forget(name)  # before anything goes out: whoever hears of the change re-reads it fresh
        uris = self.subscribed_uris(name)
        rereader = self._rereaders.get(name)
        if rereader is None:
            changed = uris
            for uri in uris:
                await self._server.notify(Updated(uri), origin="watch")
        else:
            changed = await rereader.reread(
                uris, written=written, paths=pending.paths, notify=self._tell_updated
            )
        spec = self._specs.get(name)
        list_changed = False
        if spec is not None and spec.instances.strip():
            list_changed = bool(await self._relist(announce=True, only=[name]))
        self._emit(DataChanged(name, "files", tuple(changed), list_changed, time.time(), tuple(pending.paths)))

    async def _tell_updated(self, uri: str) -> None:
        await self._server.notify(Updated(uri), origin="watch")

    def _earliest_write(self, pending: _PendingChange) -> float:
        """When the change was written, at the earliest: the oldest modification time of its files.

        A removed file (or too many) has none to ask: then the start of the burst window.
        """
        fallback = pending.arrived - (self._watch.burst_s if self._watch is not None else 1.0)
        root = self.project_dir
        if root is None or pending.overflow or not pending.paths or len(pending.paths) > _STATTED:
            return fallback
        times = []
        for path in pending.paths:
            try:
                times.append(os.stat(root / path).st_mtime_ns / 1e9)
            except OSError:
                return fallback
        return min([*times, pending.arrived])

    def _on_server_event(self, event: ServerEvent) -> None:
        # On the server thread: a new subscription wants a baseline, read on the live loop.
        if not isinstance(event, SubscriptionAdded):
            return
        loop, wanted = self._loop, self._baselines_wanted
        if loop is None or wanted is None:
            return
        with contextlib.suppress(RuntimeError):  # the live loop has just closed
            loop.call_soon_threadsafe(wanted.set)

    async def _baseline_loop(self, wanted: asyncio.Event) -> None:
        while True:
            await wanted.wait()
            wanted.clear()  # subscriptions arriving from here on wake the next round: none is missed
            try:
                await asyncio.gather(
                    *(rereader.baseline(self.subscribed_uris(name)) for name, rereader in self._rereaders.items())
                )
            except Exception:
                logger.exception("Reading the baselines of subscribed URIs failed")

    def _forget(self, name: str) -> None:
        """Drop every cached answer of resource `name` (all of a template's instances).

        A watched change must reach every client, not only the subscribed ones:
        `updated` drops only the URIs it names, and only subscribed URIs are named.
        """
        resource = self.resources.get(name)
        if resource is not None:
            self._server.read_cache.invalidate_resource(resource)

    async def _read(self, uri: str) -> PreviewOutcome:
        return await self._server.read_for_preview(uri)

    async def _poll_loop(self, spec: ResourceSpec, interval: float, poller: DigestPoller) -> None:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(interval)
        while True:
            # Rounds start every `interval` (a round longer than that is followed at once, never overlapped).
            started = loop.time()
            await self._poll_once(spec, poller)
            await asyncio.sleep(max(0.0, interval - (loop.time() - started)))

    async def _poll_once(self, spec: ResourceSpec, poller: DigestPoller) -> None:
        server = self._server
        if not server.is_running:
            return
        subscribers = self.subscribers(spec.name) if server.enable_resource_subscriptions else {}
        changed = await poller.poll(subscribers)
        if changed:
            self._forget(spec.name)  # the data behind every URI of the resource may have moved
        list_changed = False
        if spec.instances.strip() and server.enable_resource_notifications and server.sessions():
            list_changed = bool(await self._relist(announce=True, only=[spec.name], origin="poll"))
        for uri in changed:
            await server.notify(Updated(uri), origin="poll")
        if changed or list_changed:
            self._emit(DataChanged(spec.name, "interval", tuple(changed), list_changed, time.time()))

    def __repr__(self) -> str:
        return f"LiveData({len(self.watching())} watched, {'running' if self._thread else 'stopped'})"

    @property
    def running(self) -> bool:
        return self._thread is not None

    @property
    def failures(self) -> Mapping[str, str]:
        """Templates whose instances snippet failed on its last run, with the message."""
        return dict(self._failed)


def _watched(specs: Iterable[ResourceSpec]) -> dict[str, tuple[tuple[str, ...], float | None]]:
    return {
        spec.name: (tuple(spec.watch.files), spec.watch.interval)
        for spec in specs
        if spec.watch is not None and not spec.watch.is_empty
    }
