"""`serve --watch`: poll the project file and apply each saved version to the live server."""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from resources_qt.project import Project, ProjectError, load_project
from resources_qt.server.auth.visibility import ScopePolicy
from resources_qt.server.engine import ResourceServer
from resources_qt.server.reload import (
    ChangeSummary,
    MakeResource,
    announce_changes,
    apply_project,
    served_specs,
)

__all__ = ["ProjectWatcher"]

logger = logging.getLogger(__name__)


class ProjectWatcher:
    """Reloads `path` once a change to it has settled; a broken or moving save keeps the previous version.

    A change counts once the file's size and mtime have stayed the same for
    `settle` seconds, so a writer that pauses between parts (an editor's
    slow save, a script appending resources) is not caught mid-write. The
    file is stamped again after parsing: if it changed meanwhile, that parse
    is dropped and the newer version waits its turn. A file that does not
    parse keeps the old catalogue serving.
    """

    def __init__(
        self,
        path: Path,
        *,
        server: ResourceServer,
        project: Project,
        make: MakeResource,
        set_prelude: Callable[[str], None],
        on_reload: Callable[[Project], None] | None = None,
        before_apply: Callable[[Project], None] | None = None,
        interval: float = 0.2,
        settle: float = 1.0,
    ) -> None:
        if not (interval > 0 and settle >= 0):
            raise ValueError(f"interval must be positive and settle not negative, not {interval!r}, {settle!r}")
        self._path = path
        self._server = server
        self._project = project
        self._make = make
        self._set_prelude = set_prelude
        self._on_reload = on_reload
        self._before_apply = before_apply
        self._interval = interval
        self._settle = settle
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._stamp = self._read_stamp()
        self.reloads = 0

    def _read_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self._path)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="project-watcher", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)

    def _run(self) -> None:
        pending: tuple[int, int, int] | None = None
        since = 0.0
        while not self._stop.wait(self._interval):
            stamp = self._read_stamp()
            if stamp is None or stamp == self._stamp:
                pending = None
                continue
            now = time.monotonic()
            if stamp != pending:
                pending, since = stamp, now  # still moving: start the settle time again
                continue
            if now - since < self._settle:
                continue
            pending = None
            try:
                self._reload_stamped(stamp)
            except Exception:
                logger.exception("Reloading %s failed", self._path)

    def _reload_stamped(self, stamp: tuple[int, int, int]) -> None:
        try:
            new = load_project(self._path)
        except ProjectError as exc:
            if self._read_stamp() == stamp:
                self._stamp = stamp  # a settled broken file: wait for the next save
                logger.warning("Not reloading %s: %s", self._path, exc.message)
            return
        if self._read_stamp() != stamp:
            logger.info("%s changed while it was read; waiting for it to settle", self._path)
            return
        self._stamp = stamp
        self._apply(new, _version_key(self._path, stamp))

    def reload(self) -> ChangeSummary | None:
        """Load the file now and apply it; None when it does not load (the old version keeps serving)."""
        try:
            new = load_project(self._path)
        except ProjectError as exc:
            logger.warning("Not reloading %s: %s", self._path, exc.message)
            return None
        self._stamp = self._read_stamp()
        return self._apply(new, _version_key(self._path, self._stamp))

    def _apply(self, new: Project, key: str | None = None) -> ChangeSummary:
        old = self._project
        if new.server != old.server:
            logger.warning("Server settings changed in %s; restart to apply them", self._path)
        if new.prelude != old.prelude:
            self._set_prelude(new.prelude)
        if self._before_apply is not None:
            self._before_apply(new)  # what the new resources are made with (their upstreams) comes first
        scopes = self._server.access.scopes
        scopes.tighten(ScopePolicy.of_specs(new.resources))  # no version serves with fewer scopes than it asks
        with self._server.change_key(key):
            summary = apply_project(self._server.resources, old, new, self._make)
        for name, why in summary.refused.items():
            logger.warning("Not serving the new version of %r: %s", name, why)
        self._project = replace(new, resources=served_specs(self._server.resources, old, new, summary))
        scopes.replace(ScopePolicy.of_specs(self._project.resources))
        if self._on_reload is not None:
            # Live data (watched files, polling, instances) follows the served version.
            self._on_reload(self._project)
        self.reloads += 1
        future = self._server.submit(announce_changes(self._server, summary, key=key))
        if future is not None:
            future.result(timeout=30)
        logger.info(
            "Reloaded %s: %d added, %d removed, %d changed",
            self._path,
            len(summary.added),
            len(summary.removed),
            len(summary.changed),
        )
        return summary


def _version_key(path: Path, stamp: tuple[int, int, int] | None) -> str | None:
    """Names one saved version of the file: the same on every replica that reads the same file.

    The content hash with the mtime, so saving back an earlier text is still a new change.
    """
    if stamp is None:
        return None
    try:
        digest = hashlib.sha256(path.read_bytes())
    except OSError:
        return None
    digest.update(str(stamp[0]).encode())
    return f"reload-{digest.hexdigest()[:24]}"
