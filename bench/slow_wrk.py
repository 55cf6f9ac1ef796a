"""Slow readers under `wrk`: 1 ms of blocking and of awaited I/O per read, ours vs the peers at 16 connections.

A third reader awaits 20 ms, as a call to an upstream API would: there the reads a server overlaps set the
pace, not its CPU (no goal of the issue; it shows what the shared workers of the process mode and the thread
mode's async lane are for).

`python -m bench.slow_wrk [--quick]` prints the rows; `python bench/run.py --only slow` writes them into
bench/results.md.

The goal of issue 28, point 2: a reader that waits 1 ms on I/O reads at least as fast as the SDK's at 16
connections in both eras. The SDK and FastMCP run a sync reader in anyio's thread pool and await an async
one on their loop; ours runs it in a worker process (`workers = "auto"`, the default: the pool grows while
reads queue) and, with `--readers thread`, in the server's reader threads. Same wrk scripts and rounds as
`bench.read_wrk` (interleaved servers, medians of per-round ratios), the peers in their production settings.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import tempfile
from pathlib import Path

from bench.common import Row, median, stop_process
from bench.read_wrk import (
    _LUA_LEGACY,
    _LUA_MODERN,
    ERAS,
    MODERN,
    WrkRun,
    _check_modern,
    _era_name,
    _ratio,
    _session,
    _session_line,
    _suffix,
    _wrk,
    start_server,
)
from bench.rpc_client import ACCEPT, PROTOCOL
from bench.slow_readers import (
    API_READER,
    API_SECONDS,
    API_URI,
    ASYNC_READER,
    ASYNC_URI,
    IO_SECONDS,
    SYNC_READER,
    SYNC_URI,
)
from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project

CONNECTIONS = 16
READERS = {"sync": SYNC_URI, "async": ASYNC_URI, "api": API_URI}
GOALS = ("sync", "async")
"""The readers with a goal in issue 28 (1 ms of I/O); "api" is shown beside them."""
SERVERS = {"ours": "ours, process mode (workers auto)", "threads": "ours, thread mode (`--readers thread`)",
           "sdk": "SDK MCPServer, production", "fastmcp": "FastMCP, production"}


def _project(path: Path) -> Path:
    specs = [ResourceSpec(name="slow_sync", uri=SYNC_URI, mime_type="text/plain", reader=SYNC_READER),
             ResourceSpec(name="slow_async", uri=ASYNC_URI, mime_type="text/plain", reader=ASYNC_READER),
             ResourceSpec(name="slow_api", uri=API_URI, mime_type="text/plain", reader=API_READER)]
    return save_project(Project(server=ServerSettings(name="studio-slow-bench"), resources=specs), path)


def _servers() -> list[str]:
    try:
        import fastmcp  # noqa: F401
    except ImportError:
        return ["ours", "threads", "sdk"]
    return list(SERVERS)


Runs = dict[str, dict[str, dict[str, list[WrkRun]]]]
"""era -> reader -> server -> one run per round."""


def measure(quick: bool) -> tuple[Runs, list[str]]:
    seconds = 1.0 if quick else 5.0
    rounds = 2 if quick else 4
    names = _servers()
    runs: Runs = {era: {reader: {name: [] for name in names} for reader in READERS} for era in ERAS}
    with tempfile.TemporaryDirectory(prefix="bench-slow-") as tmp:
        workdir = Path(tmp)
        procs: dict[str, subprocess.Popen[bytes]] = {}
        urls: dict[str, str] = {}
        scripts: dict[tuple[str, str, str], Path] = {}
        try:
            for name in names:
                procs[name], urls[name] = start_server(workdir, name, _project)
            for name in names:
                for reader, uri in READERS.items():
                    session = asyncio.run(_session(urls[name], uri))
                    _check_modern(urls[name], uri)
                    for era, template, protocol in (("legacy", _LUA_LEGACY, PROTOCOL), (MODERN, _LUA_MODERN, MODERN)):
                        script = workdir / f"{name}-{reader}-{era}.lua"
                        script.write_text(template.format(uri=uri, accept=ACCEPT, protocol=protocol,
                                                          session=_session_line(session)))
                        scripts[(name, reader, era)] = script
                        # Warm-up at full load, so "auto" has grown its workers before anything is counted.
                        _wrk(urls[name], script, CONNECTIONS, 2.0)
            for _ in range(rounds):
                for era in ERAS:
                    for reader in READERS:
                        for name in names:
                            runs[era][reader][name].append(
                                _wrk(urls[name], scripts[(name, reader, era)], CONNECTIONS, seconds))
        finally:
            for proc in procs.values():
                stop_process(proc)
    return runs, names


def _table(runs: Runs, names: list[str]) -> str:
    lines = [f"### Slow readers ({IO_SECONDS * 1000:g} ms of I/O per read; api awaits {API_SECONDS * 1000:g} ms), "
             f"{CONNECTIONS} connections", "",
             "| era | reader | server | reads/s | p50 ms | p99 ms | ours (process) ÷ it | errors |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for era in ERAS:
        for reader in READERS:
            for name in names:
                r = runs[era][reader][name]
                ratio = "" if name == "ours" else f"{_ratio(runs[era][reader]['ours'], r, 'rps'):.2f}x"
                lines.append(f"| {_era_name(era)} | {reader} | {SERVERS[name]} | {median([x.rps for x in r]):,.0f} | "
                             f"{median([x.p50_ms for x in r]):.2f} | {median([x.p99_ms for x in r]):.2f} | {ratio} | "
                             f"{sum(x.errors for x in r)} |")
    return "\n".join(lines)


def run(quick: bool) -> list[Row]:
    if shutil.which("wrk") is None:
        return [Row.unavailable("slow_read_rps_ratio_vs_sdk", "slow reads/s vs SDK (wrk)", "x",
                                "wrk is not installed (Debian package wrk)", ">= 1.0")]
    runs, names = measure(quick)
    rows: list[Row] = []
    markdown = _table(runs, names)
    for era in ERAS:
        for reader in READERS:
            for mode in ("ours", "threads"):
                per = runs[era][reader]
                extra = {f"slow_rps_{name}_{reader}{_suffix(era)}": median([x.rps for x in per[name]])
                         for name in names}
                ratio = _ratio(per[mode], per["sdk"], "rps")
                first = not rows
                label = "process mode" if mode == "ours" else "thread mode"
                wait = f"{reader} reader with {IO_SECONDS * 1000:g} ms I/O" if reader in GOALS else (
                    f"async reader awaiting {API_SECONDS * 1000:g} ms (an upstream API)")
                least = 1.0 if mode == "ours" else 1.2
                rows.append(Row(key=f"slow_{reader}_read_rps_ratio_vs_sdk_{mode}{_suffix(era)}",
                                label=f"reads/s, {wait}, ours {label} vs SDK production (wrk, {_era_name(era)}, "
                                      f"{CONNECTIONS} conn)",
                                value=ratio, unit="x", goal=f">= {least}" if reader in GOALS else "",
                                met=ratio >= least if reader in GOALS else None,
                                markdown=markdown if first else "", extra=extra))
    return rows


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="2 rounds of 1 s per cell instead of 4 of 5 s")
    args = parser.parse_args(argv)
    rows = run(quick=args.quick)
    for row in rows:
        print(row.key, f"{row.value:.2f}" if row.value is not None else None, row.goal, row.met)
    if rows and rows[0].markdown:
        print(rows[0].markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
