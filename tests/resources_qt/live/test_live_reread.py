"""ChangeRereader: after a watched change, which subscribed URIs changed, against a shared DigestBook."""

from __future__ import annotations

import time

import pytest

from resources_qt import Resources
from resources_qt.live.poll import ChangeRereader, DigestBook, DigestPoller
from resources_qt.server.reading import PreviewOutcome, preview_read

pytestmark = pytest.mark.anyio


class Tickets:
    """A real collection with one template reading `data`; reads are counted."""

    def __init__(self, count: int = 3) -> None:
        self.data = {str(n): f"ticket {n} open" for n in range(1, count + 1)}
        self.reads: list[str] = []
        self.resources = Resources()
        self.resources.register_template_resource("ticket", "tickets://{id}", "", "text/plain", self._reader)

    def _reader(self, uri: str, params: dict[str, str]) -> str:
        self.reads.append(uri)
        return self.data[params["id"]]  # a missing ticket raises: the read fails

    async def read(self, uri: str) -> PreviewOutcome:
        return await preview_read(self.resources, uri)


URIS = ["tickets://1", "tickets://2", "tickets://3"]


async def _baselined(tickets: Tickets, **options: int) -> ChangeRereader:
    rereader = ChangeRereader(tickets.read, name="ticket", book=DigestBook(), **options)
    assert await rereader.baseline(URIS) == 3
    assert await rereader.baseline(URIS) == 0  # known already: not read again
    return rereader


async def test_only_the_uris_whose_content_changed_are_reported() -> None:
    tickets = Tickets()
    rereader = await _baselined(tickets)
    written = time.time()
    tickets.data["2"] = "ticket 2 closed"
    told: list[str] = []

    async def notify(uri: str) -> None:
        told.append(uri)

    assert await rereader.reread(URIS, written=written, notify=notify) == ["tickets://2"]
    assert told == ["tickets://2"]
    assert await rereader.reread(URIS, written=time.time()) == []  # nothing changed since
    del tickets.data["3"]  # the file is gone: the read fails, which is a change, once
    assert await rereader.reread(URIS, written=time.time()) == ["tickets://3"]
    assert await rereader.reread(URIS, written=time.time()) == []


async def test_a_baseline_taken_after_the_write_is_not_trusted() -> None:
    tickets = Tickets()
    written = time.time()  # the change was written before the baseline was read
    rereader = await _baselined(tickets)
    assert sorted(await rereader.reread(URIS, written=written)) == URIS


async def test_a_uri_without_a_baseline_is_told_before_it_is_read_and_its_read_is_no_proof() -> None:
    tickets = Tickets()
    rereader = ChangeRereader(tickets.read, name="ticket", book=DigestBook())
    order: list[str] = []

    async def notify(uri: str) -> None:
        order.append(f"told {uri}")
        tickets.data["1"] = "ticket 1 written again"  # a later write, before this change's own read

    assert await rereader.reread(["tickets://1"], written=time.time(), notify=notify) == ["tickets://1"]
    assert order == ["told tickets://1"] and tickets.reads == ["tickets://1"]
    # The subscriber may have re-read before that read: the later write's change must still be told.
    assert await rereader.reread(["tickets://1"], written=time.time() - 1.0) == ["tickets://1"]


async def test_past_the_cap_uris_are_told_unread_and_the_changed_files_uri_is_read_first() -> None:
    tickets = Tickets(count=5)
    rereader = ChangeRereader(tickets.read, name="ticket", book=DigestBook(), cap=2)
    uris = [f"tickets://{n}" for n in range(1, 6)]
    assert await rereader.baseline(uris) == 2  # past the cap a baseline would buy nothing: not read
    assert rereader.book.uris() == {"tickets://1", "tickets://2"}
    tickets.reads.clear()
    written = time.time()
    tickets.data["4"] = "ticket 4 closed"
    changed = await rereader.reread(uris, written=written, paths=["tickets/4.json"])
    assert tickets.reads[0] == "tickets://4" and len(tickets.reads) == 2
    assert changed == ["tickets://4", *[uri for uri in uris if uri not in tickets.reads]]


async def test_a_change_polling_announced_is_not_announced_again_by_the_reread() -> None:
    tickets = Tickets()
    book = DigestBook()
    poller = DigestPoller(tickets.read, name="ticket", interval=1.0, rate=1000, book=book)
    rereader = ChangeRereader(tickets.read, name="ticket", book=book)
    subscribers = {"session": URIS}
    assert await poller.poll(subscribers) == []  # the baselines
    written = time.time()
    tickets.data["1"] = "ticket 1 closed"
    assert await poller.poll(subscribers) == ["tickets://1"]
    assert await rereader.reread(URIS, written=written) == []
    assert book.uris() == set(URIS)
    await rereader.reread(["tickets://2"], written=time.time())  # the others are no longer subscribed
    assert book.uris() == {"tickets://2"}
