"""Live data end to end: instances listed and read, watched files and polling notifying real SDK clients."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from engine_support import MODES, connect, settle_legacy, wait_for
from helpers.live_project import Served, serve_live, write_notes_project

from resources_qt.live import InstancesFailed
from resources_qt.notifications import Updated
from resources_qt.project import load_project, save_project

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

MARKER = "marker://flush"
"""A URI no resource serves: what the tests send to know everything before it has arrived."""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    with serve_live(write_notes_project(tmp_path)) as running:
        yield running


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


async def _all_resources(client: Any) -> list[Any]:
    items: list[Any] = []
    cursor: str | None = None
    while True:
        page = await client.list_resources(cursor=cursor, cache_mode="bypass")
        items.extend(page.resources)
        cursor = page.next_cursor
        if cursor is None:
            return items


async def _flush(served: Served, *inboxes: Inbox) -> None:
    """Send a marker every client subscribed to; once it arrives, everything sent before it has too."""
    await served.server.notify(Updated(MARKER))
    await wait_for(lambda: all(MARKER in box.updated for box in inboxes))
    for box in inboxes:
        box.updated.remove(MARKER)


@pytest.mark.parametrize("mode", MODES)
async def test_instances_are_listed_and_read_through_the_template(served: Served, mode: str) -> None:
    async with connect(served.url, mode) as client:
        listed = await _all_resources(client)
        templates = await client.list_resource_templates(cursor=None, cache_mode="bypass")
        read = await client.read_resource("notes://a.md", cache_mode="bypass")
    by_uri = {r.uri: r for r in listed}
    assert set(by_uri) == {"notes-index://all", "notes://a.md", "notes://b.md"}
    assert by_uri["notes://a.md"].name == "note (a.md)" and by_uri["notes://a.md"].title == "a"
    assert by_uri["notes://a.md"].mime_type == "text/markdown"
    assert [t.uri_template for t in templates.resource_templates] == ["notes://{+path}"]
    assert read.contents[0].text == "# A\n"
    assert not served.changes("note")  # listing sends nothing by itself


async def test_pagination_is_correct_across_instances(tmp_path: Path) -> None:
    path = write_notes_project(tmp_path)
    for i in range(7):
        (tmp_path / "notes" / f"n{i}.md").write_text(str(i))
    path.write_text(path.read_text().replace('name = "live-notes"', 'name = "live-notes"\npage_size = 2'))
    with serve_live(path) as served:
        async with connect(served.url, "legacy") as client:
            listed = await _all_resources(client)
    uris = [r.uri for r in listed]
    assert len(uris) == len(set(uris)) == 10
    assert uris[0] == "notes-index://all"


async def test_a_raising_instances_snippet_leaves_the_rest_of_the_list(tmp_path: Path) -> None:
    extra = '''
[[resources]]
name = "broken"
uri_template = "broken://{id}"
instances = """
def instances():
    raise RuntimeError("the database is down")
"""
reader = "def read(uri, params):\\n    return 'x'\\n"

[[resources]]
name = "malformed"
uri_template = "bad://{id}"
instances = "def instances():\\n    return [{'nope': 1}]\\n"
reader = "def read(uri, params):\\n    return 'x'\\n"

[[resources]]
name = "slow"
uri_template = "slow://{id}"
instances = "import time\\ndef instances():\\n    time.sleep(30)\\n"
reader = "def read(uri, params):\\n    return 'x'\\n"
'''
    path = write_notes_project(tmp_path, extra=extra)
    path.write_text(path.read_text().replace("reader_timeout = 5.0", "reader_timeout = 1.0"))
    with serve_live(path) as served:
        async with connect(served.url, "2026-07-28") as client:
            listed = await _all_resources(client)
        failures = [e for e in served.events if isinstance(e, InstancesFailed)]
    assert {r.uri for r in listed} == {"notes-index://all", "notes://a.md", "notes://b.md"}
    messages = {e.resource: e.message for e in failures}
    assert "the database is down" in messages["broken"]
    assert "unknown key(s) nope" in messages["malformed"]
    assert "instances() timed out after 1 s" in messages["slow"]


async def test_editing_a_watched_file_updates_each_subscriber_once_and_nobody_else(served: Served) -> None:
    a, b, c = Inbox(), Inbox(), Inbox()
    async with connect(served.url, "legacy", message_handler=a) as ca, \
            connect(served.url, "legacy", message_handler=b) as cb, \
            connect(served.url, "legacy", message_handler=c) as cc:
        for client in (ca, cb, cc):
            await settle_legacy(client, served.server)
            await client.subscribe_resource(MARKER)
        await ca.subscribe_resource("notes://a.md")
        await cb.subscribe_resource("notes://a.md")
        await cb.subscribe_resource("notes-index://all")
        await cc.subscribe_resource("notes://b.md")
        await wait_for(lambda: served.live.baselined_uris("note") == {"notes://a.md", "notes://b.md"})

        # In place: several writes in one burst are one change.
        with (served.root / "notes" / "a.md").open("w") as handle:
            for line in ("# A\n", "more\n", "and more\n"):
                handle.write(line)
                handle.flush()
        await wait_for(lambda: served.changes("note"))
        await _flush(served, a, b, c)
        # The subscribed URIs are read again: only the one whose content changed is told.
        assert a.updated == ["notes://a.md"] and b.updated == ["notes://a.md"] and c.updated == []
        assert served.changes("index") == []

        # Atomic rename: a temporary file renamed over the watched one is one change.
        a.updated.clear(), b.updated.clear(), c.updated.clear()
        temporary = served.root / ".index.txt.tmp"
        temporary.write_text("a b c\n")
        os.replace(temporary, served.root / "index.txt")
        await wait_for(lambda: served.changes("index"))
        await _flush(served, a, b, c)
        assert b.updated == ["notes-index://all"] and a.updated == [] and c.updated == []
        assert len(served.changes("index")) == 1


async def test_adding_an_instance_sends_list_changed_once_and_listing_sends_none(served: Served) -> None:
    inbox = Inbox()
    async with connect(served.url, "legacy", message_handler=inbox) as client:
        await settle_legacy(client, served.server)
        await client.subscribe_resource(MARKER)
        await _all_resources(client)
        (served.root / "notes" / "c.md").write_text("# C\n")
        await wait_for(lambda: inbox.list_changed == 1)
        listed = await _all_resources(client)
        await _all_resources(client)
        await _flush(served, inbox)
    assert "notes://c.md" in {r.uri for r in listed}
    assert inbox.list_changed == 1
    # Changing a note's text leaves the set as it is: no list_changed.
    (served.root / "notes" / "c.md").write_text("# C again\n")
    await wait_for(lambda: len(served.changes("note")) == 2)
    assert [c.list_changed for c in served.changes("note")] == [True, False]


async def test_adding_an_instance_reaches_a_listen_stream(served: Served) -> None:
    async with connect(served.url, "2026-07-28") as client:
        async with client.listen(resources_list_changed=True, resource_subscriptions=["notes://a.md"]) as sub:
            await wait_for(served.server.sessions)
            (served.root / "notes" / "c.md").write_text("# C\n")
            events = []
            async for event in sub:
                events.append(event)
                if any(type(e).__name__ == "ResourcesListChanged" for e in events):
                    break
        listed = await _all_resources(client)
    assert "notes://c.md" in {r.uri for r in listed}
    assert [c.list_changed for c in served.changes("note")] == [True]


POLLED = """
[[resources]]
name = "counter"
uri = "poll://counter"
mime_type = "text/plain"
watch = { interval = 0.2 }
reader = '''
def read(uri, params):
    root = PROJECT_DIR
    with (root / "reads.log").open("a") as log:
        log.write("read\\n")
    return (root / "value.txt").read_text()
'''
"""


def _reads(root: Path) -> int:
    log = root / "reads.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.mark.parametrize("mode", MODES)
async def test_polling_sends_updated_only_when_the_content_changed(tmp_path: Path, mode: str) -> None:
    (tmp_path / "value.txt").write_text("1")
    path = write_notes_project(tmp_path, extra=POLLED)
    with serve_live(path) as served:
        inbox = Inbox()
        async with connect(served.url, mode, message_handler=inbox) as client:
            if mode == "legacy":
                await settle_legacy(client, served.server)
                await client.subscribe_resource("poll://counter")
                await client.subscribe_resource(MARKER)
                await _polled_then_changed(served, tmp_path, inbox)
            else:
                # The stream's notifications reach the client's message handler too.
                async with client.listen(resource_subscriptions=["poll://counter", MARKER]):
                    await wait_for(served.server.sessions)
                    await _polled_then_changed(served, tmp_path, inbox)
        assert [c.uris for c in served.changes("counter")] == [("poll://counter",)]


async def _polled_then_changed(served: Served, root: Path, inbox: Inbox) -> None:
    # Several intervals with the same content: reads happen, nothing is sent.
    await wait_for(lambda: _reads(root) >= 4)
    assert served.changes("counter") == []
    await _flush(served, inbox)
    assert inbox.updated == []
    (root / "value.txt").write_text("2")
    await wait_for(lambda: served.changes("counter"))
    await _flush(served, inbox)
    assert inbox.updated == ["poll://counter"]
    # The content stays "2" for several more intervals: nothing more.
    reads = _reads(root)
    await wait_for(lambda: _reads(root) >= reads + 3)
    await _flush(served, inbox)
    assert inbox.updated == ["poll://counter"]


async def test_nothing_is_polled_without_subscribers(tmp_path: Path) -> None:
    (tmp_path / "value.txt").write_text("1")
    path = write_notes_project(tmp_path, extra=POLLED)
    with serve_live(path) as served:
        async with connect(served.url, "legacy") as client:
            await settle_legacy(client, served.server)
            await client.subscribe_resource("notes://a.md")  # another resource's subscription
            # The poll loop of "counter" runs several times (its read count stays 0).
            before = served.live.poll_cycles("counter")
            await wait_for(lambda: served.live.poll_cycles("counter") >= before + 4)
            assert served.live.poll_reads("counter") == 0 and _reads(tmp_path) == 0
            await client.subscribe_resource("poll://counter")
            await wait_for(lambda: _reads(tmp_path) >= 1)
            await client.unsubscribe_resource("poll://counter")
            settled = served.live.poll_reads("counter")
            cycles = served.live.poll_cycles("counter")
            await wait_for(lambda: served.live.poll_cycles("counter") >= cycles + 3)
            assert served.live.poll_reads("counter") <= settled + 1  # at most one poll already under way


async def test_the_notes_example_lists_its_notes_and_hears_a_new_one(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[2] / "examples"
    shutil.copytree(examples / "notes", tmp_path / "notes")
    shutil.copy(examples / "notes.toml", tmp_path / "notes.toml")
    with serve_live(tmp_path / "notes.toml") as served:
        inbox = Inbox()
        async with connect(served.url, "legacy", message_handler=inbox) as client:
            await settle_legacy(client, served.server)
            listed = {r.uri: r.title for r in await _all_resources(client)}
            assert listed == {
                "notes://groceries.md": "Groceries",
                "notes://projects/resource-studio.md": "Resource studio",
                "notes://welcome.md": "Welcome",
                "notes://index": "Note index",
            }
            (tmp_path / "notes" / "ideas.md").write_text("# Ideas\n")
            await wait_for(lambda: inbox.list_changed == 1)
            listed = {r.uri for r in await _all_resources(client)}
            read = await client.read_resource("notes://ideas.md", cache_mode="bypass")
    assert "notes://ideas.md" in listed and read.contents[0].text == "# Ideas\n"


async def test_switched_off_capabilities_send_nothing_and_poll_nothing(tmp_path: Path) -> None:
    (tmp_path / "value.txt").write_text("1")
    path = write_notes_project(tmp_path, extra=POLLED)
    path.write_text(path.read_text().replace("notifications = true\nsubscriptions = true\n", ""))
    with serve_live(path) as served:
        assert not served.server.enable_resource_subscriptions
        async with connect(served.url, "2026-07-28") as client:
            listed = await _all_resources(client)  # instances are listed whatever the switches say
            (served.root / "notes" / "c.md").write_text("# C\n")
            await wait_for(lambda: served.changes("note"))
            cycles = served.live.poll_cycles("counter")
            await wait_for(lambda: served.live.poll_cycles("counter") >= cycles + 3)
    assert {r.uri for r in listed} >= {"notes://a.md", "notes://b.md"}
    # Nobody may subscribe, so nobody is told; the new note is not announced either.
    assert served.changes("note")[0].uris == () and not served.changes("note")[0].list_changed
    assert served.live.poll_reads("counter") == 0 and _reads(tmp_path) == 0


# -- watched folders: deleted and made again, symbolic links, patterns refused at load ------------------


async def test_a_watched_folder_deleted_and_made_again_is_watched_again(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="resources_qt.live.watch_files")
    inbox = Inbox()
    notes = served.root / "notes"
    async with connect(served.url, "legacy", message_handler=inbox) as client:
        await settle_legacy(client, served.server)
        await client.subscribe_resource(MARKER)
        await client.subscribe_resource("notes://a.md")
        shutil.rmtree(notes)
        await wait_for(lambda: "notes://a.md" in inbox.updated)
        before = len(served.changes("note"))
        notes.mkdir()
        (notes / "a.md").write_text("# A is back\n")
        # What the folder holds when it is watched again is announced (it may predate the watch).
        await wait_for(lambda: any("notes/a.md" in c.paths for c in served.changes("note")[before:]))
        # Logged from the watch thread, which may still be at it when the change is out.
        await wait_for(lambda: any(r.levelno == logging.WARNING and "disappeared" in r.getMessage()
                                   for r in caplog.records))  # fmt: skip
        await wait_for(lambda: any(r.levelno == logging.INFO and "is back" in r.getMessage() for r in caplog.records))
        await _flush(served, inbox)
        inbox.updated.clear()
        (notes / "a.md").write_text("# A, edited after it came back\n")
        await wait_for(lambda: inbox.updated == ["notes://a.md"])
        read = await client.read_resource("notes://a.md", cache_mode="bypass")
    assert read.contents[0].text == "# A, edited after it came back\n"


def _inotify_watches() -> int:
    """inotify watches this process holds (every watcher's), from /proc."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{fd}", encoding="ascii") as info:
                count += sum(1 for line in info if line.startswith("inotify wd:"))
        except OSError:  # closed meanwhile
            continue
    return count


LINKED = """
[[resources]]
name = "table"
uri = "table://all"
mime_type = "text/plain"
watch = { files = ["data/**/*.csv", "flag.txt"] }
reader = "def read(uri, params):\\n    return 'x'\\n"
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/fdinfo"), reason="counts inotify watches in /proc (Linux)")
async def test_a_link_out_of_the_project_is_neither_watched_nor_matched(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    for i in range(40):
        (outside / f"d{i}").mkdir(parents=True)
    project.mkdir()
    (project / "data").symlink_to(outside, target_is_directory=True)
    path = write_notes_project(project, extra=LINKED)
    baseline = _inotify_watches()
    with serve_live(path) as served:
        # The project folder and notes/; a recursive watch of data/ placed one per outside folder (41 more).
        assert _inotify_watches() - baseline <= 2
        assert any("data is a symbolic link" in r.getMessage() for r in caplog.records)
        (outside / "d0" / "x.csv").write_text("1")
        (outside / "y.csv").write_text("1")
        (project / "flag.txt").write_text("seen")
        await wait_for(lambda: any("flag.txt" in c.paths for c in served.changes("table")))
        paths = {p for c in served.changes("table") for p in c.paths}
    assert paths == {"flag.txt"}


def test_serve_refuses_a_pattern_the_matcher_cannot_take_in_one_line(tmp_path: Path) -> None:
    extra = LINKED.replace('"data/**/*.csv"', '"data/[z-a].csv"')
    path = write_notes_project(tmp_path, extra=extra)
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "[z-a]" in text)
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-m", "studio", "serve", str(path), "--http", "0"], capture_output=True,
                          text=True, check=False, env=env, cwd=root, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"notes.toml:{line}:" in lines[0]
    assert "watch.files: the pattern 'data/[z-a].csv' has the set [z-a], whose range z-a runs backwards" in lines[0]


def _slow_first_listing(root: Path) -> Path:
    """The notes project whose first listing (live data's seed) takes 1.5 s to answer after it has looked."""
    path = write_notes_project(root)
    project = load_project(path)
    note = next(spec for spec in project.resources if spec.name == "note")
    note.instances = (
        "import time\n\ndef instances():\n"
        "    first = not (PROJECT_DIR / 'listed-once').exists()\n"
        "    (PROJECT_DIR / 'listed-once').touch()\n"
        "    folder = PROJECT_DIR / 'notes'\n"
        "    found = [{'path': p.relative_to(folder).as_posix()} for p in sorted(folder.rglob('*.md'))]\n"
        "    if first:\n        time.sleep(1.5)\n"
        "    return found\n"
    )
    project.server.workers = 2  # the change's listing runs beside the seed's, not behind it
    return save_project(project, path)


async def test_a_new_instance_while_the_seed_listing_is_slow_to_answer_is_announced(tmp_path: Path) -> None:
    # The seed saw a and b; the listing for the change saw c and ended first. The seed must neither overwrite
    # it nor leave the change recorded without an announcement (a CI run under load lost a list_changed so).
    with serve_live(_slow_first_listing(tmp_path)) as served:
        inbox = Inbox()
        async with connect(served.url, "legacy", message_handler=inbox) as client:
            await settle_legacy(client, served.server)
            await client.subscribe_resource(MARKER)
            await wait_for((tmp_path / "listed-once").exists)
            (tmp_path / "notes" / "c.md").write_text("# C\n")
            await wait_for(lambda: inbox.list_changed >= 1)
            assert "notes://c.md" in {r.uri for r in await _all_resources(client)}
            await _flush(served, inbox)
        assert inbox.list_changed == 1
