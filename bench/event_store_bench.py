"""Memory of the sessions' event stores: N real sessions with open GET streams, measured with tracemalloc.

Usage: python -m bench.event_store_bench [--sessions N] [--uri-length L]

A fan-out client process (bench.fanout_client) opens N handshake-era sessions
subscribed to one URI, each reading its GET stream. After a warm-up round the
in-process server's allocations are traced while every store fills up with
SESSION_EVENTS_PER_STREAM more notifications; once all have been delivered,
what is still allocated by the store or by the SDK's building of the message
(the objects a store of messages keeps) is what the stores hold. Everything
else still allocated then (the idle tasks' waiters, ~400 B per event here)
is the sessions' own state, not the stores'. The figure at the session cap
(10,000 sessions) is extrapolated from N, plus an empty store's own cost.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import subprocess
import sys
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import PYTHON, REPO, child_env, stop_process
from bench.inproc import direct_collection, serving
from resources_qt.notifications import Updated
from resources_qt.server.event_store import SESSION_EVENTS_PER_STREAM, SESSION_STREAMS, BoundedEventStore

SESSION_CAP = 10_000
_FRAMES = 40
_KEPT = [tracemalloc.Filter(True, "*/event_store.py", all_frames=True),
         tracemalloc.Filter(True, "*/jsonrpc_dispatcher.py", all_frames=True)]
"""Allocations made by a store, or while the SDK built a message (which a store of messages keeps)."""


def _empty_store_bytes(count: int = 2000) -> float:
    """What one session's store costs before it keeps anything (it exists from the session's start)."""
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    stores = [BoundedEventStore(per_stream=SESSION_EVENTS_PER_STREAM, max_streams=SESSION_STREAMS,
                                keep_responses=False, listening=lambda: True) for _ in range(count)]
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    del stores
    return used / count


def measure(sessions: int, uri: str) -> float:
    """Bytes one store keeps after SESSION_EVENTS_PER_STREAM notifications about `uri`, over `sessions` sessions."""
    rounds = 1 + SESSION_EVENTS_PER_STREAM
    with serving(direct_collection(1), subscriptions=True) as server:
        proc = subprocess.Popen(
            [PYTHON, "-m", "bench.fanout_client", server.url, str(sessions), str(rounds), uri],
            cwd=REPO, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
            if line != "ready":
                raise RuntimeError(f"fan-out client failed: {line!r} {proc.stderr.read() if proc.stderr else ''}")

            def round_trip(number: int) -> None:
                asyncio.run(server.notify(Updated(uri)))
                parts = proc.stdout.readline().split() if proc.stdout else []
                if parts[:2] != ["round", str(number)]:
                    raise RuntimeError(f"unexpected fan-out client output {parts!r}")

            round_trip(0)  # warm-up: every store has started its stream, every lazy structure exists
            gc.collect()
            tracemalloc.start(_FRAMES)
            for number in range(1, rounds):
                round_trip(number)
            gc.collect()
            kept = sum(stat.size for stat in tracemalloc.take_snapshot().filter_traces(_KEPT).statistics("filename"))
            tracemalloc.stop()
        finally:
            stop_process(proc)  # type: ignore[arg-type]
    return kept / sessions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--uri-length", type=int, default=len("docs://library/doc000000"))
    args = parser.parse_args()
    uri = "docs://library/doc000000"
    if args.uri_length > len(uri):
        uri = "docs://library/" + "x" * (args.uri_length - len("docs://library/"))
    empty = _empty_store_bytes()
    per_session = measure(args.sessions, uri)
    at_cap = (empty + per_session) * SESSION_CAP
    print(f"{args.sessions} sessions, {SESSION_EVENTS_PER_STREAM} notifications each with a {len(uri)}-character URI")
    print(f"  kept per session: {empty:,.0f} B empty store + {per_session:,.0f} B of events")
    print(f"  at {SESSION_CAP:,} sessions: {at_cap / 1e6:,.0f} MB")


if __name__ == "__main__":
    main()
