"""`workers = "auto"`: the pool grows while reads wait for a worker, up to its cap, and shrinks back when idle."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.pools import MEMORY_MB
from helpers.waiting import eventually

from resources_qt.errors import ValidationError
from resources_qt.project import ServerSettings
from resources_qt.project.settings_table import setting
from resources_qt.snippets import SnippetPool, dispatch
from resources_qt.snippets.pool_limits import auto_cap, worker_bounds


def _waiting_reader(go: Path, started: Path) -> str:
    return (
        "import os, time\n"
        "def read(uri, params):\n"
        f"    with open({str(started)!r}, 'a') as f:\n"
        "        f.write('s')\n"
        f"    while not os.path.exists({str(go)!r}):\n"
        "        time.sleep(0.01)\n"
        "    return 'done'\n"
    )


def test_an_auto_pool_grows_while_reads_wait_and_shrinks_back_when_idle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dispatch, "_SURGE_IDLE_SECONDS", 1.0)  # spares retire after 1 s idle, not 10
    go, started = tmp_path / "go", tmp_path / "started"
    source = _waiting_reader(go, started)
    with SnippetPool(workers="auto", timeout=120, memory_limit_mb=MEMORY_MB) as pool:
        assert pool.wait_ready(60)
        assert pool.workers == 2 and pool.max_workers == auto_cap()
        cap = min(pool.max_workers, 6)  # enough to see it grow on any machine, few enough to start quickly
        pool.configure(resource_concurrency=64)
        reads = [pool.submit_read(key="slow", source=source, uri=f"t://{i}", params={}) for i in range(cap + 2)]
        # Every read waits until `go` exists: the pool grows while they queue, one spare at a time.
        eventually(lambda: started.exists() and len(started.read_text()) >= cap, 120,
                   what=f"{cap} reads running at once")
        assert len(pool.worker_pids()) >= cap > 2
        go.touch()
        assert [r.result(60)[0].text for r in reads] == ["done"] * (cap + 2)
        eventually(lambda: len(pool.worker_pids()) == 2, 60, what="the idle pool back to two workers")


def test_a_number_of_workers_keeps_that_many_and_as_many_spares_at_most() -> None:
    assert worker_bounds(3) == (3, 6)
    low, high = worker_bounds("auto")
    assert low == 2 and high == auto_cap() and 2 <= high <= 64
    with SnippetPool(workers=1, timeout=5, memory_limit_mb=MEMORY_MB) as pool:
        assert pool.workers == 1 and pool.max_workers == 2
        pool.configure(workers="auto")
        assert pool.workers == 2 and pool.max_workers == auto_cap()
        pool.configure(workers=3)
        assert pool.workers == 3 and pool.max_workers == 6


def test_auto_is_the_default_and_the_only_word_workers_takes() -> None:
    row = setting("workers")
    assert ServerSettings().workers == "auto" == row.default
    assert row.problem("auto") is None and row.problem(4) is None
    assert row.problem("many") == 'workers must be "auto" or a number between 1 and 64, not \'many\''
    assert row.problem(0) == "workers must be between 1 and 64, not 0"
    with pytest.raises(ValidationError) as caught:
        SnippetPool(workers="many")  # type: ignore[arg-type]
    assert caught.value.field == "workers"


def test_reads_per_resource_follow_the_pool_unless_set() -> None:
    row = setting("resource_concurrency")
    assert ServerSettings().resource_concurrency == "auto" == row.default
    assert row.problem("many") == 'resource_concurrency must be "auto" or a number between 1 and 64, not \'many\''
    with SnippetPool(workers="auto", timeout=5, memory_limit_mb=MEMORY_MB) as pool:
        # Half of what "auto" may grow to: a slow resource overlaps its reads, the others keep the rest.
        assert pool.resource_concurrency == max(2, auto_cap() // 2)
        pool.configure(workers=3)
        assert pool.resource_concurrency == 3  # a number of workers: that many
        pool.configure(resource_concurrency=5)
        assert pool.resource_concurrency == 5
        pool.configure(resource_concurrency="auto")
        assert pool.resource_concurrency == 3
