"""ThreadReaders in process: hot reload, per-call output, the project folder, closing, how many threads run."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.remote_servers import wait_for

from resources_qt.errors import ReaderFailedError
from resources_qt.project import Project, ResourceSpec, ServerSettings
from resources_qt.snippets import SnippetOutput, SnippetPool, bind_project, thread_core
from resources_qt.snippets.binding import create_readers
from resources_qt.snippets.namespace import HELPERS
from resources_qt.snippets.pool_limits import auto_cap
from resources_qt.snippets.threads import ThreadReaders


@pytest.fixture
def readers() -> Iterator[ThreadReaders]:
    folder = HELPERS["PROJECT_DIR"]
    pool = ThreadReaders(workers=2, timeout=5.0, output_limit=64)
    try:
        yield pool
    finally:
        pool.close()
        from resources_qt.snippets.namespace import set_project_dir

        set_project_dir(folder)  # the test process's snippets keep their folder


def _read(pool: ThreadReaders, source: str, uri: str = "demo://x", key: str = "x") -> str:
    contents = pool.submit_read(key=key, source=source, uri=uri, params={}).result(10)
    assert contents[0].text is not None
    return contents[0].text


def test_an_edited_snippet_and_prelude_take_effect_on_the_next_read(readers: ThreadReaders) -> None:
    readers.set_prelude("WORD = 'one'\n")
    assert _read(readers, "def read(uri, params):\n    return WORD\n") == "one"
    assert _read(readers, "def read(uri, params):\n    return WORD + '!'\n") == "one!"
    before = readers.prelude_digest
    readers.set_prelude("WORD = 'two'\n")
    assert readers.prelude_digest != before
    assert _read(readers, "def read(uri, params):\n    return WORD + '!'\n") == "two!"


def test_what_a_read_prints_goes_to_its_listeners_not_to_stdout(
    readers: ThreadReaders, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[SnippetOutput] = []
    readers.add_read_output_listener(seen.append)
    source = (
        "import sys\ndef read(uri, params):\n    print('x' * 100)\n    print('err', file=sys.stderr)\n"
        "    return 'ok'\n"
    )
    assert _read(readers, source, uri="demo://loud", key="loud") == "ok"
    print("the server's own line")  # not a read: it reaches the stdout it always did
    captured = capsys.readouterr()
    assert captured.out == "the server's own line\n" and captured.err == ""
    assert len(seen) == 1 and (seen[0].key, seen[0].uri) == ("loud", "demo://loud")
    assert seen[0].chunks[0] == ("stdout", "x" * 64)  # the 64-byte budget
    assert "41 more bytes were dropped" in seen[0].text  # 36 x, a newline, 'err' and a newline past it
    assert all(stream in ("stdout", "stderr") for stream, _ in seen[0].chunks)


def test_output_of_one_read_never_lands_in_another_running_at_once(readers: ThreadReaders) -> None:
    seen: dict[str, str] = {}
    readers.add_read_output_listener(lambda out: seen.__setitem__(out.uri, out.text))
    gate = threading.Barrier(2)
    readers.set_prelude(f"import threading\nGATE = __import__('{__name__}').GATES\n")
    GATES.append(gate)
    source = "def read(uri, params):\n    GATE[-1].wait(5)\n    print(uri[-1])\n    return 'ok'\n"
    one = readers.submit_read(key="a", source=source, uri="demo://1", params={})
    two = readers.submit_read(key="b", source=source, uri="demo://2", params={})
    assert one.result(10)[0].text == two.result(10)[0].text == "ok"
    assert seen == {"demo://1": "1\n", "demo://2": "2\n"}


GATES: list[threading.Barrier] = []


def test_project_dir_names_the_configured_folder(readers: ThreadReaders, tmp_path: Path) -> None:
    readers.configure(project_dir=tmp_path)
    assert readers.project_dir == str(tmp_path)
    assert _read(readers, "def read(uri, params):\n    return str(PROJECT_DIR)\n") == str(tmp_path)


def test_closing_fails_what_waits_and_refuses_new_calls() -> None:
    pool = ThreadReaders(workers=1, timeout=5.0)
    started, release = threading.Event(), threading.Event()
    pool.set_prelude(f"RELEASE = __import__('{__name__}').RELEASE\n")
    RELEASE[:] = [started, release]
    source = "def read(uri, params):\n    RELEASE[0].set()\n    RELEASE[1].wait(5)\n    return 'a'\n"
    running = pool.submit_read(key="a", source=source, uri="demo://a", params={})
    assert started.wait(10)
    waiting = pool.submit_read(key="b", source="def read(uri, params):\n    return 'b'\n", uri="demo://b", params={})
    pool.close()
    release.set()
    assert running.result(10)[0].text == "a"  # a running snippet finishes; it cannot be stopped
    with pytest.raises(ReaderFailedError, match="closed"):
        waiting.result(10)
    with pytest.raises(ReaderFailedError, match="closed"):
        pool.submit_read(key="c", source="def read(uri, params):\n    return 'c'\n", uri="demo://c",
                         params={}).result(10)


RELEASE: list[threading.Event] = []


def test_create_readers_follows_the_setting_and_binds_like_the_pool(tmp_path: Path) -> None:
    spec = ResourceSpec(name="hi", uri="demo://hi", mime_type="text/plain",
                        reader="def read(uri, params):\n    return 'hi'\n")
    project = Project(server=ServerSettings(readers="thread", workers=1), resources=[spec])
    threaded = create_readers(project)
    process = create_readers(project, readers="process")
    try:
        assert isinstance(threaded, ThreadReaders) and isinstance(process, SnippetPool)
        resource = bind_project(project, threaded).get("hi")
        assert resource is not None
        import asyncio

        contents = asyncio.run(resource.read("demo://hi"))
        assert contents[0].text == "hi"
    finally:
        threaded.close()
        process.close()
    assert sys.stdout is not None


def test_auto_grows_while_reads_queue_and_its_spares_end_when_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(thread_core, "SPARE_IDLE_SECONDS", 0.2)
    pool = ThreadReaders(workers="auto", timeout=10.0)
    most = auto_cap()
    try:
        pool.start()
        kept = pool.threads()
        assert kept == pool.workers < most
        # Every read waits for all the others: they are answered only if `most` threads run them at once.
        gate = threading.Barrier(most)
        GATES.append(gate)
        pool.set_prelude(f"GATE = __import__('{__name__}').GATES\n")
        source = "def read(uri, params):\n    GATE[-1].wait(8)\n    return 'ok'\n"
        # One key each: "auto" lets one resource take only half the threads there may be.
        futures = [pool.submit_read(key=f"io{i}", source=source, uri=f"demo://{i}", params={}) for i in range(most)]
        assert [f.result(10)[0].text for f in futures] == ["ok"] * most
        assert pool.threads() == most
        wait_for(lambda: pool.threads() == kept, what="the spare threads ended once idle")
    finally:
        pool.close()


def test_a_fixed_number_of_threads_is_never_exceeded() -> None:
    pool = ThreadReaders(workers=2, timeout=10.0)
    release = threading.Event()
    RELEASE[:] = [release]
    pool.set_prelude(f"RELEASE = __import__('{__name__}').RELEASE\n")
    try:
        source = "def read(uri, params):\n    RELEASE[0].wait(8)\n    return 'ok'\n"
        futures = [pool.submit_read(key="io", source=source, uri=f"demo://{i}", params={}) for i in range(6)]
        wait_for(lambda: pool.queued() == 4, what="two reads running, four queued")
        assert pool.threads() == 2
        release.set()
        assert [f.result(10)[0].text for f in futures] == ["ok"] * 6
    finally:
        pool.close()


def test_answered_reads_leave_the_deadline_heap_at_its_next_wake(readers: ThreadReaders) -> None:
    # Left in until each deadline passed, answered reads woke the deadline thread once per read under load.
    source = "def read(uri, params):\n    return 'ok'\n"
    assert readers.submit_read(key="x", source=source, uri="demo://long", params={}, timeout=60).result(10)
    assert readers.submit_read(key="x", source=source, uri="demo://short", params={}, timeout=0.05).result(10)
    core = readers._core
    wait_for(lambda: not core.deadlines, what="the deadline heap empty long before the 60 s read's deadline")


def test_the_deadline_heap_holds_a_bounded_share_of_answered_reads(readers: ThreadReaders) -> None:
    # Popped in one burst under the lock when the first deadline passed, 20,000 answered reads stalled every
    # read for 220 ms.
    source = "def read(uri, params):\n    return 'ok'\n"
    for n in range(500):
        assert readers.submit_read(key="x", source=source, uri=f"demo://{n}", params={}, timeout=60).result(10)
    assert len(readers._core.deadlines) <= thread_core._HEAP_SLACK + 3
