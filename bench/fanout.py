"""Fan-out: from notify(Updated(uri)) to the last of N subscribed legacy sessions receiving it."""

from __future__ import annotations

import asyncio
import subprocess
import time

from bench.common import PYTHON, REPO, Row, child_env, median, stop_process
from bench.inproc import direct_collection, serving
from resources_qt.notifications import Updated

URI = "docs://library/doc000000"


def measure(count: int, rounds: int) -> tuple[list[float], list[float], float]:
    """Per round: ms to the last receiver and to the first; plus the seconds the sessions took to open."""
    with serving(direct_collection(10), subscriptions=True) as server:
        opened = time.perf_counter()
        proc = subprocess.Popen(
            [PYTHON, "-m", "bench.fanout_client", server.url, str(count), str(rounds), URI],
            cwd=REPO, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
            if line != "ready":
                raise RuntimeError(f"fan-out client failed: {line!r} {proc.stderr.read() if proc.stderr else ''}")
            setup_s = time.perf_counter() - opened
            subscribed = sum(1 for s in server.sessions() if URI in s.subscriptions)
            if subscribed != count:
                raise RuntimeError(f"only {subscribed} of {count} sessions are subscribed")
            last, first = [], []
            for r in range(rounds):
                time.sleep(0.3)  # let the previous round's traffic settle
                sent_at = time.perf_counter()
                asyncio.run(server.notify(Updated(URI)))
                parts = proc.stdout.readline().split()
                if len(parts) != 4 or parts[:2] != ["round", str(r)]:
                    raise RuntimeError(f"unexpected fan-out client output {parts!r}")
                last.append((float(parts[2]) - sent_at) * 1000)
                first.append((float(parts[3]) - sent_at) * 1000)
            # Measured: the client's goodbye to 1,000 sessions may take longer than is worth waiting for.
        finally:
            stop_process(proc)
    return last, first, setup_s


def run(quick: bool) -> list[Row]:
    try:
        import resources_qt.server  # noqa: F401
    except ImportError as exc:
        return [Row.unavailable("fanout_ms_1000", "fan-out to 1,000 sessions", "ms", str(exc))]
    count = 200 if quick else 1000
    last, first, setup_s = measure(count, 3 if quick else 5)
    value = median(last)
    label = f"fan-out to {count:,} sessions"
    detail = (f"{count} legacy sessions with GET streams (opened in {setup_s:.1f} s); median of "
              f"{len(last)} rounds, last receiver {', '.join(f'{v:.0f}' for v in last)} ms, first receiver "
              f"{median(first):.1f} ms")
    if quick:
        detail += "; --quick uses 200 sessions"
    return [Row("fanout_ms_1000", label, round(value, 1), "ms", "", None, detail,
                {"fanout_sessions": count, "fanout_first_ms": round(median(first), 2)})]
