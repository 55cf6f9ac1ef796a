"""No worker outlives its parent: neither a parent that forgets close() nor one killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers.waiting import holds_within

ROOT = Path(__file__).resolve().parents[3]

PARENT = textwrap.dedent(
    """\
    import sys, time
    from resources_qt.snippets import SnippetPool

    if __name__ == "__main__":
        pool = SnippetPool(workers=2)
        source = "def read(uri, params):\\n    return 'x'\\n"
        pool.submit_read(key="k", source=source, uri="t://x", params={}).result(60)
        busy = "import time\\ndef read(uri, params):\\n    time.sleep(60)\\n"
        pool.submit_read(key="busy", source=busy, uri="t://busy", params={})
        time.sleep(0.3)
        print(" ".join(str(pid) for pid in pool.worker_pids()), flush=True)
        if sys.argv[1] == "wait":
            time.sleep(60)
        # "exit": leave without close(); the finalizer must clean up.
    """
)


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def _start(tmp_path: Path, mode: str) -> tuple[subprocess.Popen[str], list[int]]:
    script = tmp_path / "parent.py"
    script.write_text(PARENT, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    parent = subprocess.Popen(
        [sys.executable, str(script), mode], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
    )
    assert parent.stdout is not None
    pids = [int(pid) for pid in parent.stdout.readline().split()]
    assert len(pids) >= 2
    return parent, pids


def _gone(pids: list[int], within: float) -> bool:
    return holds_within(lambda: not any(_running(pid) for pid in pids), within, interval=0.1)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_workers_end_when_the_parent_exits_without_close(tmp_path: Path) -> None:
    parent, pids = _start(tmp_path, "exit")
    with parent:
        assert parent.wait(60) == 0
    assert _gone(pids, 10)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_workers_end_when_the_parent_is_killed(tmp_path: Path) -> None:
    parent, pids = _start(tmp_path, "wait")
    with parent:
        assert all(_running(pid) for pid in pids)
        parent.send_signal(signal.SIGKILL)
    assert _gone(pids, 10)
