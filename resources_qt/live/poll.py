"""Interval polling: re-read each subscribed URI of a resource and report the ones whose content changed."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

from resources_qt.content import ResourceContent
from resources_qt.server.reading import PreviewOutcome

__all__ = ["DigestPoller", "content_digest"]

logger = logging.getLogger(__name__)

Reader = Callable[[str], Awaitable[PreviewOutcome]]


def content_digest(contents: Sequence[ResourceContent]) -> str:
    """A digest of everything a client would receive for a read (texts, blobs, MIME types, meta)."""
    payload = json.dumps([c.to_dict() for c in contents], sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class DigestPoller:
    """Remembers the last digest of each polled URI; `poll(uris)` returns the URIs whose content changed.

    The first read of a URI sets its baseline (nothing to compare with yet);
    a failing read sends nothing and keeps the baseline; URIs no longer
    subscribed are forgotten, so the memory follows the subscriptions.
    """

    def __init__(self, read: Reader, *, name: str, concurrency: int = 8) -> None:
        self._read = read
        self._name = name
        self._digests: dict[str, str] = {}
        self._limit = asyncio.Semaphore(max(1, concurrency))
        self.reads = 0
        """Reads made so far (the bench and the tests count them)."""
        self.cycles = 0
        """Polling rounds so far, subscribers or not."""
        self.rounds: list[float] = []
        """Seconds the last rounds with reads took (the latest 32), for the bench and the studio."""

    async def poll(self, uris: Sequence[str]) -> list[str]:
        self.cycles += 1
        wanted = set(uris)
        for gone in set(self._digests) - wanted:
            del self._digests[gone]
        if not wanted:
            return []
        started = time.perf_counter()
        results = await asyncio.gather(*(self._one(uri) for uri in sorted(wanted)))
        self.rounds = [*self.rounds[-31:], time.perf_counter() - started]
        return [uri for uri, changed in zip(sorted(wanted), results, strict=True) if changed]

    async def _one(self, uri: str) -> bool:
        async with self._limit:
            self.reads += 1
            try:
                outcome = await self._read(uri)
            except Exception:  # a reader path that raises instead of reporting must not stop the polling
                logger.exception("Polling %s (%s) failed", uri, self._name)
                return False
        if not outcome.ok or outcome.contents is None:
            logger.info("Polling %s (%s): the read failed, nothing sent: %s", uri, self._name, outcome.error_message)
            return False
        digest = content_digest(outcome.contents)
        previous = self._digests.get(uri)
        self._digests[uri] = digest
        return previous is not None and previous != digest
