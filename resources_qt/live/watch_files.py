"""Watching `watch.files`: watchfiles events, coalesced into one batch per burst, matched to resources."""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path

import watchfiles

from resources_qt.live.patterns import WatchPattern, watch_roots

__all__ = ["FileWatch"]

logger = logging.getLogger(__name__)

OnChange = Callable[[Mapping[str, tuple[str, ...]]], Awaitable[None]]
"""Called with {resource name: the project-relative paths that changed for it}."""


class FileWatch:
    """Watches the folders the patterns need and reports which resources a burst of changes touched.

    watchfiles (the Rust `notify` watcher, not polling) groups events until
    `quiet_ms` pass without one (at most `max_ms`): a burst of writes, or an
    atomic save (write a temporary file, rename it over the old one), is one
    batch, so one notification.
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
        self._patterns = {name: [WatchPattern(p) for p in globs] for name, globs in patterns.items() if globs}
        self._on_change = on_change
        self._quiet_ms = quiet_ms
        self._max_ms = max_ms
        self.ready = threading.Event()
        """Set once the watcher is listening: a change made after this is seen."""

    @property
    def empty(self) -> bool:
        return not self._patterns

    def affected(self, paths: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """{resource name: its matching paths} for project-relative `paths`."""
        out: dict[str, tuple[str, ...]] = {}
        for name, patterns in self._patterns.items():
            hits = tuple(p for p in paths if any(pattern.matches(p) for pattern in patterns))
            if hits:
                out[name] = hits
        return out

    async def run(self) -> None:
        """Watch until cancelled."""
        if self.empty:
            return
        roots = watch_roots(self.root, [p for ps in self._patterns.values() for p in ps])
        logger.info("Watching %s for %d resource(s)", ", ".join(map(str, roots)), len(self._patterns))
        async for changes in watchfiles.awatch(
            *roots,
            watch_filter=None,
            debounce=self._max_ms,
            step=self._quiet_ms,
            rust_timeout=200,
            yield_on_timeout=True,
        ):
            # The first (empty) batch after a timeout says the watcher is set up.
            self.ready.set()
            if not changes:
                continue
            paths = sorted({self._relative(path) for _change, path in changes} - {""})
            hit = self.affected(paths)
            if not hit:
                continue
            try:
                await self._on_change(hit)
            except Exception:  # one failed announcement must not end the watching
                logger.exception("Announcing changes of %s failed", ", ".join(hit))

    def _relative(self, path: str) -> str:
        try:
            return Path(path).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return ""
