"""DigestPoller: each subscribed URI read once a round, within the read budget, fairly across sessions."""

from __future__ import annotations

import itertools

import pytest

from resources_qt import Resources
from resources_qt.live.poll import POLL_READS_PER_SECOND, DigestPoller
from resources_qt.server.reading import PreviewOutcome, preview_read

pytestmark = pytest.mark.anyio


class Counted:
    """A real collection with one template whose reads are counted; `poll://victim` changes on every read."""

    def __init__(self) -> None:
        self.reads: list[str] = []
        self.ticks = itertools.count()
        self.resources = Resources()
        self.resources.register_template_resource("counter", "poll://{id}", "", "text/plain", self._reader)

    def _reader(self, uri: str, params: dict[str, str]) -> str:
        self.reads.append(uri)
        return f"{params['id']} {next(self.ticks)}" if params["id"] == "victim" else params["id"]

    async def read(self, uri: str) -> PreviewOutcome:
        return await preview_read(self.resources, uri)


def _uris(prefix: str, count: int) -> list[str]:
    return [f"poll://{prefix}{i}" for i in range(count)]


async def test_a_uri_many_sessions_hold_is_read_once_a_round() -> None:
    data = Counted()
    poller = DigestPoller(data.read, name="counter", interval=1.0, rate=1000)
    shared = _uris("s", 20)
    subscribers = {f"session-{n}": shared for n in range(10)}
    for _ in range(3):
        await poller.poll(subscribers)
    assert poller.round_reads == [20, 20, 20]
    assert sorted(data.reads) == sorted(shared * 3)


async def test_a_round_reads_at_most_its_budget_and_the_lone_subscriber_first() -> None:
    data = Counted()
    poller = DigestPoller(data.read, name="counter", interval=0.1, rate=500)  # 50 reads a round
    subscribers: dict[str, list[str]] = {f"crowd-{n}": _uris(f"c{n}-", 100) for n in range(10)}
    subscribers["victim"] = ["poll://victim"]
    changed: list[list[str]] = []
    for _ in range(6):
        data.reads.clear()
        changed.append(await poller.poll(subscribers))
        assert len(data.reads) == poller.budget == 50
        # The first pass takes one URI of each session: the victim's is among the first 11 read.
        assert "poll://victim" in data.reads[:11]
    # Its content changes at every read: an update every round after the baseline.
    assert [c.count("poll://victim") for c in changed] == [0, 1, 1, 1, 1, 1]


async def test_uris_past_the_budget_are_read_in_rotation() -> None:
    data = Counted()
    poller = DigestPoller(data.read, name="counter", interval=0.1, rate=300)  # 30 reads a round
    subscribers = {"a": _uris("a", 40), "b": _uris("b", 40), "c": _uris("a", 40)}  # c holds a's URIs too
    rounds = 0
    while set(data.reads) != set(_uris("a", 40) + _uris("b", 40)):
        await poller.poll(subscribers)
        rounds += 1
    # Each session's turn is a third of the budget (10 a round): b's 40 URIs take 4 rounds, while a and c,
    # who share theirs, have them read twice in that time. No URI is read twice in one round.
    assert rounds == 4 and poller.round_reads == [30, 30, 30, 30]
    assert data.reads.count("poll://b0") == 1 and {data.reads.count(u) for u in _uris("a", 40)} == {2}


async def test_memory_follows_the_subscriptions() -> None:
    data = Counted()
    poller = DigestPoller(data.read, name="counter", interval=1.0)
    await poller.poll({"a": _uris("a", 5)})
    assert await poller.poll({}) == [] and poller.round_reads == [5]
    await poller.poll({"b": ["poll://b0"]})
    assert data.reads[-1] == "poll://b0" and poller.budget == POLL_READS_PER_SECOND
