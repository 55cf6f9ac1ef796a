"""Re-reading subscribed URIs: interval polling (fair, within a read budget) and after a watched file changed."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence

from resources_qt.content import ResourceContent
from resources_qt.server.reading import PreviewOutcome

__all__ = [
    "FILE_REREAD_CAP",
    "FILE_REREAD_CONCURRENCY",
    "POLL_READS_PER_SECOND",
    "ChangeRereader",
    "DigestBook",
    "DigestPoller",
    "content_digest",
    "outcome_digest",
]

logger = logging.getLogger(__name__)

POLL_READS_PER_SECOND = 250
"""Polling reads one resource starts per second at most (interval x this per round, spread over the round)."""

FILE_REREAD_CAP = 2000
"""Subscribed URIs of one resource re-read after one watched change at most; any more are sent `updated` unread."""

FILE_REREAD_CONCURRENCY = 8
"""Re-reads (and subscription baselines) of one resource in flight at once."""

Reader = Callable[[str], Awaitable[PreviewOutcome]]
Notify = Callable[[str], Awaitable[None]]

_HISTORY = 32
_LIKELY_STEMS = 64
"""Changed file names looked for in URIs to read those first (a heuristic for latency only)."""


def content_digest(contents: Sequence[ResourceContent]) -> str:
    """A digest of everything a client would receive for a read (texts, blobs, MIME types, meta)."""
    payload = json.dumps([c.to_dict() for c in contents], sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def outcome_digest(outcome: PreviewOutcome) -> str:
    """`content_digest` of a read, or of its error (code and message): a read that starts failing changed."""
    if outcome.ok and outcome.contents is not None:
        return content_digest(outcome.contents)
    payload = json.dumps(["error", outcome.error_code, outcome.error_message])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class DigestBook:
    """The digest of each subscribed URI of one resource, as its subscribers last had it.

    Shared by polling and by file re-reads, so a change one of them announced
    is not announced again by the other. An entry is confirmed (`taken` None)
    when it came from a comparison that sent `updated` whenever it differed;
    a baseline (the first read after a subscription, or a first poll) keeps
    the time it was taken: a baseline taken after a write may already hold
    that write, so a change written before it cannot trust it.
    """

    def __init__(self) -> None:
        self._entries: dict[str, tuple[str, float | None]] = {}

    def __contains__(self, uri: object) -> bool:
        return uri in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def uris(self) -> set[str]:
        return set(self._entries)

    def entry(self, uri: str) -> tuple[str, float | None] | None:
        """(digest, when the baseline was taken or None once confirmed), or None."""
        return self._entries.get(uri)

    def confirm(self, uri: str, digest: str) -> None:
        self._entries[uri] = (digest, None)

    def baseline(self, uri: str, digest: str, taken: float, *, replace: bool = False) -> None:
        """Record a read nobody compared (time.time() when it finished); kept only where there is no entry,
        unless `replace`."""
        if replace:
            self._entries[uri] = (digest, taken)
        else:
            self._entries.setdefault(uri, (digest, taken))

    def forget(self, uri: str) -> None:
        self._entries.pop(uri, None)

    def keep_only(self, uris: Collection[str]) -> None:
        """Forget the URIs no longer subscribed: the memory follows the subscriptions."""
        for gone in set(self._entries) - set(uris):
            del self._entries[gone]


class ChangeRereader:
    """After a watched change: re-read a resource's subscribed URIs and find those whose content changed.

    At most `cap` URIs are read per change (any more are reported changed
    unread: a spurious `updated` is harmless, a missing one is not), at most
    `concurrency` at once, URIs naming a changed file first. A URI counts as
    changed when its digest differs from the book's, when it has no entry,
    or when its entry is a baseline taken at or after `written` (the time of
    the change's earliest write: such a baseline may already hold it). Reads
    that fail count by their error, so a URI whose file was deleted changes once.
    `baseline(uris)` reads the subscribed URIs not in the book yet (at most
    `cap` known in all), so a later change can tell what changed.
    """

    def __init__(
        self,
        read: Reader,
        *,
        name: str,
        book: DigestBook,
        cap: int = FILE_REREAD_CAP,
        concurrency: int = FILE_REREAD_CONCURRENCY,
    ) -> None:
        self._read = read
        self._name = name
        self.book = book
        self.cap = max(1, cap)
        self._limit = asyncio.Semaphore(max(1, concurrency))
        self.reads = 0
        """Re-reads and baselines made so far (the bench and the tests count them)."""
        self.rounds: list[float] = []
        """Seconds the last re-reads took (the latest 32)."""

    async def baseline(self, uris: Iterable[str]) -> int:
        """Read the URIs the book has no digest for yet, up to `cap` known in all; returns how many were read.

        Past the cap a change tells a URI unread anyway, so its baseline would buy nothing: the reads a
        flood of subscriptions causes, and the book, stay bounded.
        """
        room = max(0, self.cap - len(self.book))
        missing = [uri for uri in uris if uri not in self.book][:room]
        await asyncio.gather(*(self._baseline_one(uri) for uri in missing))
        return len(missing)

    async def reread(
        self, uris: Sequence[str], *, written: float, paths: Sequence[str] = (), notify: Notify | None = None
    ) -> list[str]:
        """The URIs of `uris` whose content changed; `notify(uri)` is awaited for each as soon as it is known."""
        self.book.keep_only(uris)
        ordered = _likely_first(uris, paths)
        read, unread = ordered[: self.cap], ordered[self.cap :]
        if unread:
            logger.info("%s: %d subscribed URIs are past the re-read cap (%d): sent updated unread",
                        self._name, len(unread), self.cap)
        for uri in unread:
            self.book.forget(uri)
            if notify is not None:
                await notify(uri)
        started = time.perf_counter()

        async def one(uri: str) -> bool:
            previous = self.book.entry(uri)
            if previous is None or (previous[1] is not None and previous[1] >= written):
                # Changed whatever the read says (nothing to trust to compare with): told at once (a cold
                # pool must not delay it), then read as a baseline: the subscriber may have re-read before
                # this read, which can already hold a later write.
                if notify is not None:
                    await notify(uri)
                digest = await self._fetch(uri)
                if digest is None:
                    self.book.forget(uri)
                else:
                    self.book.baseline(uri, digest, time.time(), replace=True)
                return True
            changed = await self._reread_one(uri, previous[0])
            if changed and notify is not None:
                await notify(uri)
            return changed

        results = await asyncio.gather(*(one(uri) for uri in read))
        self.rounds = [*self.rounds[-(_HISTORY - 1) :], time.perf_counter() - started]
        return [uri for uri, changed in zip(read, results, strict=True) if changed] + unread

    async def _fetch(self, uri: str) -> str | None:
        async with self._limit:
            self.reads += 1
            try:
                outcome = await self._read(uri)
            except Exception:  # a reader path that raises instead of reporting must not stop the watching
                logger.exception("Re-reading %s (%s) failed", uri, self._name)
                return None
        if not outcome.ok:
            logger.info("Re-reading %s (%s) after a change: %s", uri, self._name, outcome.error_message)
        return outcome_digest(outcome)

    async def _baseline_one(self, uri: str) -> None:
        digest = await self._fetch(uri)
        if digest is not None:
            self.book.baseline(uri, digest, time.time())

    async def _reread_one(self, uri: str, old: str) -> bool:
        """Read `uri` again and compare with its trusted digest `old`."""
        digest = await self._fetch(uri)
        if digest is None:
            self.book.forget(uri)
            return True
        self.book.confirm(uri, digest)
        return digest != old


def _likely_first(uris: Sequence[str], paths: Sequence[str]) -> list[str]:
    """`uris` with those naming a changed file's stem first (`tickets/3.json` -> `tickets://3`), else as given."""
    stems = {stem for stem in (path.rsplit("/", 1)[-1].split(".", 1)[0] for path in paths[:_LIKELY_STEMS]) if stem}
    if not stems:
        return list(uris)
    likely = [uri for uri in uris if any(uri.endswith(stem) or f"{stem}/" in uri for stem in stems)]
    if not likely:
        return list(uris)
    chosen = set(likely)
    return likely + [uri for uri in uris if uri not in chosen]


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
        book: DigestBook | None = None,
    ) -> None:
        self._read = read
        self._name = name
        self._digests = book if book is not None else DigestBook()
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
        self._digests.keep_only(wanted)
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
        previous = self._digests.entry(uri)
        if previous is None:
            self._digests.baseline(uri, digest, time.time())
            return False
        if previous[0] == digest:
            return False
        self._digests.confirm(uri, digest)
        return True
