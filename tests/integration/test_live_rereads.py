"""Watched files re-read the subscribed instances: `updated` only for those that changed, over real SDK clients."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from engine_support import MODES, connect, settle_legacy, wait_for
from helpers.live_project import Served, serve_live

from resources_qt.notifications import Updated

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

MARKER = "marker://flush"

TICKETS_PROJECT = """format = 1

[server]
name = "live-tickets"
notifications = true
subscriptions = true
reader_timeout = 30.0

[[resources]]
name = "ticket"
uri_template = "tickets://{id}"
mime_type = "application/json"
watch = { files = ["tickets"] }
instances = '''
def instances():
    return [{"id": p.stem} for p in sorted((PROJECT_DIR / "tickets").glob("*.json"))]
'''
reader = '''
import time

def read(uri, params):
    with open(PROJECT_DIR / "reads.log", "a") as log:
        log.write(uri + "\\n")
    while (PROJECT_DIR / "hold").exists():  # the tests hold reads here to make a change arrive meanwhile
        time.sleep(0.01)
    return (PROJECT_DIR / "tickets" / (params["id"] + ".json")).read_text()
'''

[[resources]]
name = "batches"
uri = "batches://tickets"
mime_type = "text/plain"
watch = { files = ["tickets"] }
reader = "def read(uri, params):\\n    return 'every batch of changes under tickets/ is a DataChanged of mine'\\n"
"""


class Inbox:
    """What one client received: updated URIs and list_changed counts."""

    def __init__(self) -> None:
        self.updated: list[str] = []
        self.list_changed = 0

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.updated.append(message.params.uri)
        elif isinstance(message, types.ResourceListChangedNotification):
            self.list_changed += 1


def _write_project(root: Path, tickets: int = 2) -> Path:
    (root / "tickets").mkdir()
    for number in range(1, tickets + 1):
        (root / "tickets" / f"{number}.json").write_text(f'{{"id": {number}, "status": "open"}}')
    path = root / "tickets.toml"
    path.write_text(TICKETS_PROJECT)
    return path


def _reads(root: Path) -> list[str]:
    log = root / "reads.log"
    return log.read_text().splitlines() if log.exists() else []


@asynccontextmanager
async def _subscriber(
    served: Served, mode: str, uris: list[str], *, baselines: int | None = None
) -> AsyncIterator[Inbox]:
    """A client in `mode` subscribed to `uris` and the marker, once the baselines (or `baselines` of them) are read."""
    inbox = Inbox()

    def baselined() -> bool:
        known = served.live.baselined_uris("ticket")
        return len(known) == baselines if baselines is not None else known >= set(uris)

    async with connect(served.url, mode, message_handler=inbox) as client:
        if mode == "legacy":
            await settle_legacy(client, served.server)
            for uri in [MARKER, *uris]:
                await client.subscribe_resource(uri)
            await wait_for(baselined)
            yield inbox
        else:
            async with client.listen(resources_list_changed=True, resource_subscriptions=[MARKER, *uris]):
                await wait_for(served.server.sessions)
                await wait_for(baselined)
                yield inbox


async def _flush(served: Served, inbox: Inbox) -> None:
    """Everything sent before the marker has arrived once the marker has."""
    await served.server.notify(Updated(MARKER))
    await wait_for(lambda: MARKER in inbox.updated)
    inbox.updated.remove(MARKER)


@pytest.mark.parametrize("mode", MODES)
async def test_a_watched_change_updates_only_the_instances_whose_content_changed(tmp_path: Path, mode: str) -> None:
    root = tmp_path
    with serve_live(_write_project(root)) as served:
        async with _subscriber(served, mode, ["tickets://1", "tickets://2"]) as inbox:
            # A new ticket changes the set of instances, not ticket 1 or 2.
            (root / "tickets" / "3.json").write_text('{"id": 3, "status": "open"}')
            await wait_for(lambda: len(served.changes("ticket")) == 1)
            await _flush(served, inbox)
            assert inbox.updated == [] and inbox.list_changed == 1
            assert served.changes("ticket")[0].uris == () and served.changes("ticket")[0].list_changed
            # Ticket 2 changes: its subscribers hear of it, ticket 1's do not.
            (root / "tickets" / "2.json").write_text('{"id": 2, "status": "closed"}')
            await wait_for(lambda: len(served.changes("ticket")) == 2)
            await _flush(served, inbox)
            assert inbox.updated == ["tickets://2"] and inbox.list_changed == 1
            # Ticket 1 is deleted: its read now fails, which is a change, and the set shrinks.
            (root / "tickets" / "1.json").unlink()
            await wait_for(lambda: len(served.changes("ticket")) == 3)
            await _flush(served, inbox)
            assert inbox.updated == ["tickets://2", "tickets://1"] and inbox.list_changed == 2
            # Written again with the same content: read again, unchanged, nothing sent.
            (root / "tickets" / "2.json").write_text('{"id": 2, "status": "closed"}')
            await wait_for(lambda: len(served.changes("ticket")) == 4)
            await _flush(served, inbox)
            assert inbox.updated == ["tickets://2", "tickets://1"] and inbox.list_changed == 2
    assert [change.uris for change in served.changes("ticket")] == [(), ("tickets://2",), ("tickets://1",), ()]


async def test_changes_arriving_during_a_reread_are_coalesced_into_one_more(tmp_path: Path) -> None:
    root = tmp_path
    with serve_live(_write_project(root)) as served:
        async with _subscriber(served, "legacy", ["tickets://1"]) as inbox:
            (root / "hold").touch()
            (root / "tickets" / "1.json").write_text('{"id": 1, "status": "pending"}')
            # The re-read of ticket 1 has started and is held; three more batches arrive meanwhile.
            await wait_for(lambda: len(_reads(root)) == 2)  # the baseline, then the re-read
            for number, status in enumerate(("waiting", "open again", "closed"), start=2):
                (root / "tickets" / "1.json").write_text(f'{{"id": 1, "status": "{status}"}}')
                await wait_for(lambda number=number: len(served.changes("batches")) == number)
            assert served.changes("ticket") == []
            (root / "hold").unlink()
            await wait_for(lambda: len(served.changes("ticket")) == 2)
            await _flush(served, inbox)
            # The held re-read saw the last write and told the subscriber; the one re-read for the three
            # batches that waited finds nothing newer, so nothing more is sent.
            assert inbox.updated == ["tickets://1"]
            assert len(_reads(root)) == 3
            changes = served.changes("ticket")
            assert [(change.uris, change.paths) for change in changes] == [
                (("tickets://1",), ("tickets/1.json",)), ((), ("tickets/1.json",))]


async def test_a_change_rereads_at_most_the_cap_and_tells_the_rest_unread(tmp_path: Path) -> None:
    root = tmp_path
    with serve_live(_write_project(root, tickets=3), reread_cap=2) as served:
        uris = ["tickets://1", "tickets://2", "tickets://3"]
        async with _subscriber(served, "2026-07-28", uris, baselines=2) as inbox:  # no more than the cap
            before = served.live.reread_reads("ticket")
            (root / "tickets" / "3.json").write_text('{"id": 3, "status": "closed"}')
            await wait_for(lambda: len(served.changes("ticket")) == 1)
            await _flush(served, inbox)
            assert served.live.reread_reads("ticket") - before == 2
            # Ticket 3 (its file changed) is read first and told (it had no baseline: past the cap); of the
            # two others one was read (unchanged), the one past the cap is told unread: spurious at worst,
            # never missed.
            assert sorted(inbox.updated)[-1] == "tickets://3" and len(inbox.updated) == 2


async def test_a_baseline_read_after_the_write_it_missed_does_not_hide_the_change(tmp_path: Path) -> None:
    root = tmp_path
    with serve_live(_write_project(root)) as served:
        inbox = Inbox()
        async with connect(served.url, "legacy", message_handler=inbox) as client:
            await settle_legacy(client, served.server)
            await client.subscribe_resource(MARKER)
            (root / "hold").touch()
            await client.subscribe_resource("tickets://1")
            await wait_for(lambda: len(_reads(root)) == 1)  # its baseline read is under way, held
            # Written after the subscription: the baseline, read after this, already holds it.
            (root / "tickets" / "1.json").write_text('{"id": 1, "status": "closed"}')
            await wait_for(lambda: len(served.changes("batches")) == 1)
            (root / "hold").unlink()
            await wait_for(lambda: len(served.changes("ticket")) == 1)
            await _flush(served, inbox)
            assert inbox.updated == ["tickets://1"]
