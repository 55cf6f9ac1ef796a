"""Snippet pool fairness (issue 10, point 3): a fast read among 32 slow ones, lateness, and the fast path.

Run: `python -m bench.fairness_bench [--slow 32] [--sleep 3] [--timeout 5] [--fast-reads 300]`.
Prints one JSON object: the fast read's latency while 32 slow reads of another
resource run or wait (goal: under 100 ms), the latest answer relative to its
timeout (goal: under timeout + 1 s), and the median / p99 of one small read
at a time on an idle pool (the common path, which must not get slower).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from concurrent.futures import Future
from typing import Any

from bench.common import Row
from resources_qt.content import ResourceContent
from resources_qt.snippets import SnippetPool

FAST = "def read(uri, params):\n    return 'fine'\n"


def _slow(seconds: float) -> str:
    return f"import time\ndef read(uri, params):\n    time.sleep({seconds})\n    return 'slow'\n"


def _p(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered)) - 1))]


def fast_path(pool: SnippetPool, reads: int) -> dict[str, float]:
    """One small read at a time on an idle pool: milliseconds per read."""
    for _ in range(20):  # warm: the snippet is loaded in every worker
        pool.submit_read(key="fast", source=FAST, uri="t://fast", params={}).result(30)
    samples = []
    for _ in range(reads):
        started = time.perf_counter()
        pool.submit_read(key="fast", source=FAST, uri="t://fast", params={}).result(30)
        samples.append((time.perf_counter() - started) * 1000)
    return {"fast_path_median_ms": statistics.median(samples), "fast_path_p99_ms": _p(samples, 99)}


def fairness(pool: SnippetPool, *, slow: int, sleep: float, timeout: float) -> dict[str, Any]:
    """Fire `slow` slow reads of one resource, then one fast read of another; time both."""
    answered: dict[int, float] = {}

    def note(index: int) -> Any:
        return lambda _f: answered.setdefault(index, time.monotonic())

    submitted = time.monotonic()
    futures: list[Future[list[ResourceContent]]] = []
    for i in range(slow):
        future = pool.submit_read(key="slow", source=_slow(sleep), uri=f"t://slow/{i}", params={}, timeout=timeout)
        future.add_done_callback(note(i))
        futures.append(future)
    time.sleep(0.5)  # let the slow reads take their workers and fill the queue
    started = time.perf_counter()
    pool.submit_read(key="fast", source=FAST, uri="t://fast", params={}).result(30)
    fast_ms = (time.perf_counter() - started) * 1000
    outcomes = {"ok": 0, "timeout": 0, "other": 0}
    for future in futures:
        try:
            future.result(timeout + 30)
            outcomes["ok"] += 1
        except Exception as exc:
            outcomes["timeout" if "timed out" in str(exc) else "other"] += 1
    latest = max(answered.values()) - submitted
    return {
        "fast_among_slow_ms": fast_ms,
        "fast_goal_met": fast_ms < 100,
        "latest_answer_s": latest,
        "timeout_s": timeout,
        "lateness_goal_met": latest < timeout + 1.0,
        "slow_outcomes": outcomes,
    }


def run(quick: bool) -> list[Row]:
    """The rows bench/run.py reports: a fast read among 32 slow ones, and the latest answer vs its timeout."""
    with SnippetPool(workers=2, timeout=5.0, memory_limit_mb=512) as pool:
        pool.wait_ready(60)
        fast = fast_path(pool, 100 if quick else 300)
        found = fairness(pool, slow=32, sleep=3.0, timeout=5.0)
    extra = {key: float(value) for key, value in fast.items()}
    detail = f"32 slow reads (3 s) of one resource, 2 workers, timeout 5 s; slow outcomes {found['slow_outcomes']}"
    return [
        Row("fair_fast_among_slow_ms", "fast read among 32 slow ones", found["fast_among_slow_ms"], "ms",
            "< 100 ms", bool(found["fast_goal_met"]), detail, extra),
        Row("fair_latest_answer_s", "latest answer, timeout 5 s", found["latest_answer_s"], "s",
            "< 6 s", bool(found["lateness_goal_met"])),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--slow", type=int, default=32)
    parser.add_argument("--sleep", type=float, default=3.0)
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--fast-reads", type=int, default=300)
    args = parser.parse_args(argv)
    with SnippetPool(workers=args.workers, timeout=args.timeout, memory_limit_mb=512) as pool:
        pool.wait_ready(60)
        result: dict[str, Any] = {"workers": args.workers, **fast_path(pool, args.fast_reads)}
        result.update(fairness(pool, slow=args.slow, sleep=args.sleep, timeout=args.timeout))
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
