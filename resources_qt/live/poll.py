"""Interval polling: re-read subscribed URIs of a resource, fairly and within a read budget, and report changes."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence

from resources_qt.content import ResourceContent
from resources_qt.server.reading import PreviewOutcome

__all__ = ["POLL_READS_PER_SECOND", "DigestPoller", "content_digest"]

logger = logging.getLogger(__name__)

POLL_READS_PER_SECOND = 250
"""Polling reads one resource starts per second at most (interval x this per round, spread over the round)."""

Reader = Callable[[str], Awaitable[PreviewOutcome]]

_HISTORY = 32


def content_digest(contents: Sequence[ResourceContent]) -> str:
    """A digest of everything a client would receive for a read (texts, blobs, MIME types, meta)."""
    payload = json.dumps([c.to_dict() for c in contents], sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class DigestPoller:
    """Remembers the last digest of each polled URI; `poll(subscribers)` returns the URIs whose content changed.

    Each round reads every subscribed URI once, however many sessions hold it,
    but at most `budget` of them (interval x POLL_READS_PER_SECOND), started
    one every 1/POLL_READS_PER_SECOND s rather than in one burst. When more are
    subscribed, the round takes them fairly: one URI per session in turn, the
    sessions and URIs read longest ago first, so a session subscribed to a few
    URIs has them read every round whatever others subscribe to; the rest wait
    for the next rounds.

    The first read of a URI sets its baseline (nothing to compare with yet);
    a failing read sends nothing and keeps the baseline; URIs no longer
    subscribed are forgotten, so the memory follows the subscriptions.
    """

    def __init__(
        self,
        read: Reader,
        *,
        name: str,
        interval: float = 1.0,
        concurrency: int = 8,
        rate: float = POLL_READS_PER_SECOND,
    ) -> None:
        self._read = read
        self._name = name
        self._digests: dict[str, str] = {}
        self._limit = asyncio.Semaphore(max(1, concurrency))
        self._gap = 1.0 / rate
        self.budget = max(1, int(interval * rate))
        """Reads one round makes at most."""
        self._read_in: dict[str, int] = {}  # URI -> the round that last read it
        self._served_in: dict[str, int] = {}  # session id -> the last round that read one of its URIs
        self.reads = 0
        """Reads made so far (the bench and the tests count them)."""
        self.cycles = 0
        """Polling rounds so far, subscribers or not."""
        self.rounds: list[float] = []
        """Seconds the last rounds with reads took (the latest 32), for the bench and the studio."""
        self.round_reads: list[int] = []
        """Reads each of the last rounds with reads made (the latest 32)."""

    async def poll(self, subscribers: Mapping[str, Collection[str]]) -> list[str]:
        """One round over {session id: its subscribed URIs of this resource}."""
        self.cycles += 1
        wanted = {uri for uris in subscribers.values() for uri in uris}
        for gone in set(self._digests) - wanted:
            del self._digests[gone]
        for gone in set(self._read_in) - wanted:
            del self._read_in[gone]
        for gone in set(self._served_in) - set(subscribers):
            del self._served_in[gone]
        if not wanted:
            return []
        chosen = self.choose(subscribers)
        started = time.perf_counter()
        results = await self._paced(chosen)
        self.rounds = [*self.rounds[-(_HISTORY - 1) :], time.perf_counter() - started]
        self.round_reads = [*self.round_reads[-(_HISTORY - 1) :], len(chosen)]
        return [uri for uri, changed in zip(chosen, results, strict=True) if changed]

    def choose(self, subscribers: Mapping[str, Collection[str]]) -> list[str]:
        """This round's URIs, in reading order: round-robin over sessions, each URI once, at most `budget`."""
        round_no = self.cycles
        sessions = sorted((s for s, uris in subscribers.items() if uris), key=lambda s: (self._served_in.get(s, -1), s))
        queues: dict[str, list[str]] = {}
        chosen: list[str] = []
        taken: set[str] = set()
        depth = 0
        while len(chosen) < self.budget and sessions:
            still: list[str] = []
            for session in sessions:
                queue = queues.get(session)
                if queue is None:
                    # Only the sessions a round reaches are sorted: at most `budget` of them.
                    queue = sorted(subscribers[session], key=lambda u: (self._read_in.get(u, -1), u), reverse=True)
                    queues[session] = queue
                while queue and queue[-1] in taken:
                    queue.pop()
                if not queue:
                    continue
                uri = queue.pop()
                taken.add(uri)
                chosen.append(uri)
                if depth == 0:
                    self._served_in[session] = round_no
                if queue:
                    still.append(session)
                if len(chosen) >= self.budget:
                    break
            sessions = still
            depth += 1
        for uri in chosen:
            self._read_in[uri] = round_no
        return chosen

    async def _paced(self, uris: Sequence[str]) -> list[bool]:
        loop = asyncio.get_running_loop()
        start = loop.time()
        tasks: list[asyncio.Task[bool]] = []
        try:
            for index, uri in enumerate(uris):
                delay = start + index * self._gap - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                await self._limit.acquire()
                tasks.append(asyncio.create_task(self._one(uri)))
            return list(await asyncio.gather(*tasks))
        finally:
            for task in tasks:
                task.cancel()

    async def _one(self, uri: str) -> bool:
        try:
            self.reads += 1
            try:
                outcome = await self._read(uri)
            except Exception:  # a reader path that raises instead of reporting must not stop the polling
                logger.exception("Polling %s (%s) failed", uri, self._name)
                return False
        finally:
            self._limit.release()
        if not outcome.ok or outcome.contents is None:
            logger.info("Polling %s (%s): the read failed, nothing sent: %s", uri, self._name, outcome.error_message)
            return False
        digest = content_digest(outcome.contents)
        previous = self._digests.get(uri)
        self._digests[uri] = digest
        return previous is not None and previous != digest
