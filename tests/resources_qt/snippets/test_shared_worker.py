"""One shared worker process driven by a loop: what the pool's scheduling relies on, call by call."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import Future
from typing import Any

from helpers.pools import MEMORY_MB
from helpers.waiting import eventually_async

from resources_qt.snippets.dispatch import Dispatcher
from resources_qt.snippets.pool_limits import Limits
from resources_qt.snippets.process import WorkerProcess
from resources_qt.snippets.protocol import ReadCall, Reply, source_digest
from resources_qt.snippets.shared_worker import Running, SharedWorker
from resources_qt.snippets.slot import Job

SLEEPER = "import asyncio\nasync def read(uri, params):\n    await asyncio.sleep(30)\n    return 'late'\n"


def _core() -> Dispatcher:
    limits = Limits(workers=1, timeout=10.0, memory_limit_mb=MEMORY_MB, output_limit=65536, max_queued_reads=16,
                    resource_concurrency=None, max_processes=0, max_file_size_mb=0)
    return Dispatcher(limits, prelude="")


def _job(n: int) -> Job[Reply]:
    call = ReadCall(key="sleeper", digest=source_digest(SLEEPER), source=SLEEPER, prelude_digest=source_digest(""),
                    prelude="", uri=f"t://{n}", params={}, mime_type="")
    future: Future[Reply] = Future()
    return Job(call, 10.0, time.monotonic() + 10.0, future, lambda reply: reply)


def test_a_call_cancelled_as_it_is_sent_is_let_go_of_at_once() -> None:
    """Sent and cancelled back to back, the worker may cancel its task before its first step: it answers
    still, so the call leaves the worker now, not at its deadline with the worker killed as blocked."""
    core = _core()
    config, generation = core.worker_config(concurrent=True)
    process = WorkerProcess(config=config, name="test-shared")
    process.start()
    left: list[Running] = []
    ended: list[Any] = []

    async def main() -> int | None:
        worker = SharedWorker(process, asyncio.get_running_loop(), generation=generation, core=core,
                              finished=lambda _worker, running: left.append(running), ended=ended.append)
        worker.start(1, _job(1))  # loads the snippet, so the next calls start at once
        for n in range(2, 22):
            worker.start(n, _job(n))
            worker.cancel(n)
        await eventually_async(lambda: len(left) == 20, 5, what="every cancelled call let go of")
        worker.cancel(1)
        await eventually_async(lambda: len(left) == 21, 5, what="the first call let go of")
        worker.close("the test ended")
        return process.pid

    try:
        assert asyncio.run(main()) is not None
        assert ended == []  # never killed
    finally:
        process.kill()
