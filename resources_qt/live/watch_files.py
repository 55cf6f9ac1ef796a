"""Watching `watch.files`: the project's own folders (never through a link), re-armed as folders come and go."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import watchfiles

from resources_qt.errors import ValidationError
from resources_qt.live.patterns import WatchPattern

__all__ = ["MAX_WATCHED_FOLDERS", "FileWatch", "FolderPlan", "plan_folders"]

logger = logging.getLogger(__name__)

MAX_WATCHED_FOLDERS = 4096
"""Folders one project watches at most (one inotify watch each); the shallowest are kept."""

OnChange = Callable[[Mapping[str, tuple[str, ...]]], Awaitable[None]]
"""Called with {resource name: the project-relative paths that changed for it}."""


@dataclass(frozen=True, slots=True)
class FolderPlan:
    """What to watch: real folders inside the project, root first, and what the walk found in them."""

    folders: tuple[Path, ...]
    files: tuple[str, ...]
    """Project-relative paths of the files in those folders that some pattern matches."""
    links: tuple[str, ...]
    """Project-relative symbolic links to folders a pattern would look into: not followed."""
    truncated: bool
    """More folders qualified than MAX_WATCHED_FOLDERS."""


def plan_folders(root: Path, patterns: Sequence[WatchPattern], *, limit: int = MAX_WATCHED_FOLDERS) -> FolderPlan:
    """Walk the project from `root` (breadth first) into every folder a pattern may match inside.

    The project folder itself is always watched: a folder of a pattern that is
    missing (not created yet, or deleted) appears there. Symbolic links are
    never followed, so nothing outside the project is watched.
    """
    folders: list[Path] = [root]
    files: list[str] = []
    links: list[str] = []
    truncated = False
    index = 0
    while index < len(folders):
        folder = folders[index]
        index += 1
        prefix = "" if folder == root else folder.relative_to(root).as_posix() + "/"
        try:
            with os.scandir(folder) as entries:
                listed = sorted(entries, key=lambda e: e.name)
        except OSError as exc:  # gone since, or unreadable: what it holds cannot be watched
            logger.debug("Not watching inside %s: %s", folder, exc)
            continue
        for entry in listed:
            relative = prefix + entry.name
            try:
                real_dir = entry.is_dir(follow_symlinks=False)
                link = not real_dir and entry.is_symlink()
            except OSError:
                continue
            if real_dir or (link and _is_dir(entry.path)):
                if not any(p.may_match_below(relative) for p in patterns):
                    continue
                if link:
                    links.append(relative)
                elif len(folders) < limit:
                    folders.append(Path(entry.path))
                else:
                    truncated = True
            elif any(p.matches(relative) for p in patterns):
                files.append(relative)
    return FolderPlan(tuple(folders), tuple(files), tuple(links), truncated)


def _is_dir(path: str) -> bool:
    try:
        return os.path.isdir(path)
    except OSError:
        return False


class FileWatch:
    """Watches the folders the patterns need and reports which resources a burst of changes touched.

    watchfiles (the Rust `notify` watcher, not polling) groups events until
    `quiet_ms` pass without one (at most `max_ms`): a burst of writes, or an
    atomic save (write a temporary file, rename it over the old one), is one
    batch, so one notification.

    Each folder is watched on its own (not recursively: a recursive watch
    follows symbolic links out of the project). When a folder a pattern needs
    appears or goes away, the folders are walked again and the watch re-armed;
    files found in newly watched folders are reported as changed, since they
    may have been written before their folder was watched.
    """

    def __init__(
        self,
        root: Path,
        patterns: Mapping[str, Sequence[str]],
        on_change: OnChange,
        *,
        quiet_ms: int = 150,
        max_ms: int = 1000,
    ) -> None:
        self.root = root.resolve()
        self._patterns: dict[str, list[WatchPattern]] = {}
        for name, globs in patterns.items():
            kept = [p for p in (_pattern(name, glob) for glob in globs) if p is not None]
            if kept:
                self._patterns[name] = kept
        self._all = [p for ps in self._patterns.values() for p in ps]
        self._on_change = on_change
        self._quiet_ms = quiet_ms
        self._max_ms = max_ms
        self._gone: set[Path] = set()
        self._warned_links: set[str] = set()
        self.folders: tuple[Path, ...] = ()
        """The folders watched right now."""
        self.arms = 0
        """How often the watch was armed (1 at start, one more per re-arm)."""
        self.ready = threading.Event()
        """Set once the watcher is listening: a change made after this is seen."""

    @property
    def empty(self) -> bool:
        return not self._patterns

    @property
    def names(self) -> tuple[str, ...]:
        """The resources whose files are watched (a pattern of theirs is valid)."""
        return tuple(self._patterns)

    @property
    def burst_s(self) -> float:
        """The longest a batch's first write can precede its report (the burst window plus one quiet gap)."""
        return (self._max_ms + self._quiet_ms) / 1000.0

    def affected(self, paths: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """{resource name: its matching paths} for project-relative `paths`."""
        out: dict[str, tuple[str, ...]] = {}
        for name, patterns in self._patterns.items():
            hits = tuple(p for p in paths if any(pattern.matches(p) for pattern in patterns))
            if hits:
                out[name] = hits
        return out

    def plan(self) -> FolderPlan:
        return plan_folders(self.root, self._all)

    async def run(self) -> None:
        """Watch until cancelled."""
        if self.empty:
            return
        armed: FolderPlan | None = None
        plan = await asyncio.to_thread(self.plan)
        while True:
            self._log_plan(armed, plan)
            self.folders = plan.folders
            self.arms += 1
            try:
                plan, armed = await self._watch(plan, armed)
            except FileNotFoundError:  # a folder went away between the walk and the watch
                if not self.root.is_dir():
                    logger.warning("The project folder %s is gone; watching again once it is back", self.root)
                    while not self.root.is_dir():
                        await asyncio.sleep(1.0)
                plan = await asyncio.to_thread(self.plan)

    async def _watch(self, plan: FolderPlan, before: FolderPlan | None) -> tuple[FolderPlan, FolderPlan]:
        """Watch `plan`'s folders until they must change; returns (the next plan, this one)."""
        first = True
        batches = watchfiles.awatch(
            *plan.folders,
            watch_filter=None,
            debounce=self._max_ms,
            step=self._quiet_ms,
            rust_timeout=200,
            yield_on_timeout=True,
            recursive=False,
            ignore_permission_denied=True,
        )
        async with contextlib.aclosing(batches):
            async for changes in batches:
                if first:
                    # Watching now: walk again, so a folder made meanwhile is not missed, and
                    # report what the newly watched folders already hold.
                    first = False
                    check = await asyncio.to_thread(self.plan)
                    if check.folders != plan.folders:
                        return check, plan
                    if before is not None:
                        await self._rescan(before, check)
                    self.ready.set()
                if not changes:
                    continue
                paths = sorted({self._relative(path) for _change, path in changes} - {""})
                reshaped = self._reshaped(changes, plan)
                await self._announce(self.affected(paths))
                if reshaped:
                    return await asyncio.to_thread(self.plan), plan
        raise FileNotFoundError("the watch ended")  # watchfiles stops only when a watched path fails

    async def _rescan(self, before: FolderPlan, now: FolderPlan) -> None:
        new = set(now.folders) - set(before.folders)
        found = [f for f in now.files if (self.root / f).parent in new]
        if found:
            await self._announce(self.affected(found))

    async def _announce(self, hit: Mapping[str, tuple[str, ...]]) -> None:
        if not hit:
            return
        try:
            await self._on_change(hit)
        except Exception:  # one failed announcement must not end the watching
            logger.exception("Announcing changes of %s failed", ", ".join(hit))

    def _reshaped(self, changes: set[tuple[watchfiles.Change, str]], plan: FolderPlan) -> bool:
        """Whether a watched folder went away or a folder worth watching appeared."""
        watched = set(plan.folders)
        for change, raw in changes:
            path = Path(raw)
            if change == watchfiles.Change.deleted and path in watched:
                return True
            if change == watchfiles.Change.added and path not in watched and path.parent in watched:
                relative = self._relative(raw)
                if relative and _is_dir(raw) and any(p.may_match_below(relative) for p in self._all):
                    return True
        return False

    def _log_plan(self, before: FolderPlan | None, plan: FolderPlan) -> None:
        for link in plan.links:
            if link not in self._warned_links:
                self._warned_links.add(link)
                logger.warning("watch.files: %s is a symbolic link; links are not followed, so not watching it", link)
        if plan.truncated:
            logger.warning("watch.files: watching only the first %d folders (the limit)", MAX_WATCHED_FOLDERS)
        if before is None:
            missing = sorted({str(p.base()) for p in self._all if not (self.root / p.base()).exists()})
            for base in missing:
                logger.info("watch.files: %s does not exist yet; watching for it", base)
            logger.info("Watching %d folder(s) under %s for %d resource(s)", len(plan.folders), self.root,
                        len(self._patterns))
            return
        old, new = set(before.folders), set(plan.folders)
        for folder in sorted(_tops(old - new)):
            self._gone.add(folder)
            logger.warning("Watched folder %s disappeared; watching for it to come back", folder)
        for folder in sorted(_tops(new - old)):
            if folder in self._gone:
                self._gone.discard(folder)
                logger.info("Watched folder %s is back; watching it again", folder)
            else:
                logger.info("Watching the new folder %s", folder)

    def _relative(self, path: str) -> str:
        """The project-relative path of a change, "" for one outside the project (or a link out of it)."""
        try:
            relative = Path(path).relative_to(self.root)
        except ValueError:
            return ""
        if os.path.islink(path) and not Path(path).resolve().is_relative_to(self.root):
            return ""
        return relative.as_posix()


def _tops(folders: set[Path]) -> set[Path]:
    """The folders of `folders` not inside another of them."""
    return {f for f in folders if f.parent not in folders}


def _pattern(name: str, glob: str) -> WatchPattern | None:
    try:
        return WatchPattern(glob)
    except ValidationError as exc:
        # The loader refuses these; a project built in memory may still carry one.
        logger.warning("Resource %s: not watching %r: %s", name, glob, exc.message)
        return None
