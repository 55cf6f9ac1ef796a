"""The worker's supervisor: orphans a snippet leaves stay below it, are reaped when they end, and die with it."""

from __future__ import annotations

import os
import sys

import pytest
from helpers.waiting import eventually
from snippet_support import read_text

from resources_qt.snippets import SnippetPool

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="child subreapers are Linux's")

# A double fork: the intermediate process exits at once, so `sleep` is an orphan from its start.
_ORPHAN = """\
import os, subprocess, sys

def read(uri, params):
    code = ("import subprocess; p = subprocess.Popen(['sleep', '%s'], start_new_session=True, "
            "stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid)")
    done = subprocess.run([sys.executable, "-c", code % params["seconds"]], capture_output=True, text=True,
                          check=True)
    return f"{done.stdout.strip()} {os.getpid()} {os.getppid()}"
"""


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of `pid`, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return fields[0], int(fields[1])


def _running(pid: int) -> bool:
    found = _stat(pid)
    return found is not None and found[0] not in ("Z", "X")


def _children(parent: int) -> list[tuple[int, str]]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _stat(int(entry))) is not None and stat[1] == parent:
            found.append((int(entry), stat[0]))
    return found


def test_an_orphan_stays_below_the_supervisor_and_ends_with_the_pool() -> None:
    pool = SnippetPool(workers=1, timeout=10.0)
    sleep = 0
    try:
        answer = read_text(pool, _ORPHAN, params={"seconds": "600"})
        sleep, worker, supervisor = (int(part) for part in answer.split())
        assert pool.worker_pids() == [worker]
        # Re-parented to the worker's supervisor (its parent), not to init: the pool can still reach it.
        stat = _stat(sleep)
        assert stat is not None and stat[1] == supervisor
        pool.close()
        eventually(lambda: not _running(sleep), 10, what="the orphaned sleep ending with the pool")
    finally:
        pool.close()
        if sleep and _running(sleep):
            os.kill(sleep, 9)


def test_orphans_that_end_are_reaped_while_the_worker_lives() -> None:
    # The supervisor reaps what it adopted; otherwise each short-lived orphan would stay a zombie
    # (counted against max_processes) for as long as the worker lives.
    with SnippetPool(workers=1, timeout=10.0) as pool:
        pids = [int(read_text(pool, _ORPHAN, params={"seconds": "0"}).split()[0]) for _ in range(5)]
        worker = pool.worker_pids()[0]
        worker_stat = _stat(worker)
        assert worker_stat is not None
        supervisor = worker_stat[1]
        eventually(lambda: all(_stat(pid) is None for pid in pids), 10, what="the orphans reaped")
        assert all(state != "Z" for _, state in _children(supervisor))
