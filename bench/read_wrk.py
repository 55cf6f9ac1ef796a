"""resources/read under `wrk` (a C load generator, so the client is never the bottleneck): ours vs the peers.

`python -m bench.read_wrk [--quick]` prints the rows; `python bench/run.py --only wrk` writes them and
one table per era and mode into bench/results.md.

Both eras: handshake-era requests carry one session's id (initialize over
httpx first; none for a stateless peer), 2026-07-28 requests carry no
session, their version and client in `_meta` and the `Mcp-Method`/`Mcp-Name`
headers. At 1 and 16 connections, servers alternating A B C ... A B C, wrk
POSTs the same small text resource to each. Ours in three modes: the plain
resource (a snippet read in a worker process on every request), the same
reader declaring a cache hint (answered from the read cache within its TTL:
the peers have no server-side cache, so this row never stands in for the
plain one), and a second process with `serve --readers thread` (the trusted
mode: the reader in a thread of the server, no worker round trip, no
containment). The peers (`bench.peers`): the SDK's MCPServer and FastMCP
each in its production settings (JSON answers, stateless, uvicorn with
httptools and uvloop) and in its defaults, and a bare ASGI app answering a
fixed JSON body under the same uvicorn (the ceiling of any Python server on
this stack). Reported per level: reads/s, p50, p99, non-2xx/socket errors;
ratios are medians of per-round ratios. FastMCP runs only where the
`fastmcp` package is installed (the bench extra).
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench import roundtrip_floor
from bench.common import PYTHON, REPO, Row, child_env, free_port, median, stop_process, wait_for_port
from bench.peers import PEERS
from bench.projects import SMALL_READER
from bench.rpc_client import ACCEPT, PROTOCOL, RpcSession
from bench.sdk_server import SMALL_URI
from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project
from resources_qt.resource import CacheHint

LEVELS = (1, 16)
MODERN = "2026-07-28"
ERAS = ("legacy", MODERN)
HINTED_URI = "bench://small-hinted"
HINT_TTL_MS = 60_000

# Every request gets its own JSON-RPC id: concurrent requests of one session sharing an id collide in the
# transport (it keys a request's answer stream by id) and one of them is answered with an error.
_LUA_LEGACY = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "{accept}"
wrk.headers["Mcp-Protocol-Version"] = "{protocol}"
{session}local counter = 0
request = function()
  counter = counter + 1
  return wrk.format(nil, nil, nil, '{{"jsonrpc":"2.0","id":' .. counter .. ',"method":"resources/read",' ..
    '"params":{{"uri":"{uri}"}}}}')
end
"""

# 2026-07-28: no session; what initialize used to say travels in every request's _meta.
_LUA_MODERN = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "{accept}"
wrk.headers["Mcp-Protocol-Version"] = "{protocol}"
wrk.headers["Mcp-Method"] = "resources/read"
wrk.headers["Mcp-Name"] = "{uri}"
local counter = 0
request = function()
  counter = counter + 1
  return wrk.format(nil, nil, nil, '{{"jsonrpc":"2.0","id":' .. counter .. ',"method":"resources/read",' ..
    '"params":{{"uri":"{uri}","_meta":{{"io.modelcontextprotocol/protocolVersion":"{protocol}",' ..
    '"io.modelcontextprotocol/clientInfo":{{"name":"wrk","version":"1"}},' ..
    '"io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}')
end
"""


@dataclass
class WrkRun:
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()  # type: ignore[union-attr]
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def parse_wrk(output: str) -> WrkRun:
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))  # type: ignore[union-attr]
    p50 = _ms(re.search(r"\s50%\s+(\S+)", output).group(1))  # type: ignore[union-attr]
    p99 = _ms(re.search(r"\s99%\s+(\S+)", output).group(1))  # type: ignore[union-attr]
    errors = 0
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    if non2xx:
        errors += int(non2xx.group(1))
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output)
    if sock:
        errors += sum(int(n) for n in sock.groups())
    return WrkRun(rps, p50, p99, errors)


async def _session(url: str, uri: str) -> str | None:
    """A handshake-era session's id (None from a stateless server), after one read that must work."""
    async with httpx.AsyncClient(timeout=30.0) as http:
        session = RpcSession(http, url)
        await session.initialize("wrk")
        result = await session.read(uri)  # fails loudly if the server cannot answer at all
        assert result["contents"][0]["uri"] == uri
        return session.session_id


def _session_line(session: str | None) -> str:
    return "" if session is None else f'wrk.headers["Mcp-Session-Id"] = "{session}"\n'


def _check_modern(url: str, uri: str) -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "wrk", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": uri, "_meta": meta}})
    headers = {"content-type": "application/json", "accept": ACCEPT, "mcp-protocol-version": MODERN,
               "mcp-method": "resources/read", "mcp-name": uri}
    answer = httpx.post(url, content=body, headers=headers, timeout=30.0)
    answer.raise_for_status()
    assert answer.json()["result"]["contents"][0]["uri"] == uri, answer.text


def _wrk(url: str, script: Path, connections: int, seconds: float) -> WrkRun:
    duration = f"{max(1, round(seconds))}s"
    command = ["wrk", "-t", "1", "-c", str(connections), "-d", duration, "--latency", "-s", str(script), url]
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60, check=True)
    return parse_wrk(done.stdout)


def _bench_project(path: Path) -> Path:
    """The benchmark's small resource twice: plain, and declaring a cache hint."""
    specs = [
        ResourceSpec(name="small", uri=SMALL_URI, mime_type="text/plain", reader=SMALL_READER),
        ResourceSpec(name="small_hinted", uri=HINTED_URI, mime_type="text/plain", reader=SMALL_READER,
                     cache=CacheHint(HINT_TTL_MS)),
    ]
    project = Project(server=ServerSettings(name="studio-bench", subscriptions=True, notifications=True),
                      resources=specs)
    return save_project(project, path)


def start_server(
    workdir: Path, name: str, write_project: Callable[[Path], Path]
) -> tuple[subprocess.Popen[bytes], str]:
    """Start `name` on a free port: ours ("ours"; "threads" with `--readers thread`) serving the project
    `write_project` saves, or a peer of `bench.peers`. Returns the process and its /mcp URL."""
    port = free_port()
    if name in ("ours", "threads"):
        project = write_project(workdir / "project.toml")
        argv = [PYTHON, "-m", "studio", "serve", str(project), "--http", f"127.0.0.1:{port}"]
        if name == "threads":
            argv += ["--readers", "thread"]
    else:
        argv = [PYTHON, str(REPO / "bench" / "peers.py"), name, str(port)]
    log = (workdir / f"{name}.log").open("wb")
    proc = subprocess.Popen(argv, cwd=REPO, env=child_env(), stdout=subprocess.DEVNULL, stderr=log)
    wait_for_port(port, 30, proc)
    return proc, f"http://127.0.0.1:{port}/mcp"


MODES = {"ours": "process mode, plain (reader in a worker process)",
         "hinted": "process mode, hinted resource (read cache)",
         "threads": "thread mode (`--readers thread`)"}
"""Our series -> what it is."""
_SHORT = {"ours": "plain", "hinted": "hinted", "threads": "thread mode"}


def _peers() -> list[str]:
    names = ["ours", "sdk", "sdk-default"]
    try:
        import fastmcp  # noqa: F401
    except ImportError:
        pass
    else:
        names += ["fastmcp", "fastmcp-default"]
    return [*names, "asgi"]


def targets(names: list[str]) -> list[tuple[str, str, str]]:
    """(label, server, uri) for every measured series; "hinted" is ours serving the hinted resource, "threads"
    ours with `--readers thread`."""
    out = [("ours", "ours", SMALL_URI), ("hinted", "ours", HINTED_URI), ("threads", "threads", SMALL_URI)]
    return out + [(name, name, SMALL_URI) for name in names if name != "ours"]


def _check_bare(url: str) -> None:
    answer = httpx.post(url, content=b"{}", headers={"content-type": "application/json"}, timeout=30.0)
    answer.raise_for_status()


Runs = dict[str, dict[str, dict[int, list[WrkRun]]]]
"""era -> series label -> connections -> one run per round."""


def measure(quick: bool) -> tuple[Runs, list[str]]:
    seconds = 1.0 if quick else 5.0
    rounds = 2 if quick else 4
    names = _peers()
    series = targets(names)
    runs: Runs = {era: {label: {level: [] for level in LEVELS} for label, _, _ in series} for era in ERAS}
    with tempfile.TemporaryDirectory(prefix="bench-wrk-") as tmp:
        workdir = Path(tmp)
        procs: dict[str, subprocess.Popen[bytes]] = {}
        urls: dict[str, str] = {}
        scripts: dict[tuple[str, str], Path] = {}
        try:
            for name in [*names, "threads"]:
                procs[name], urls[name] = start_server(workdir, name, _bench_project)
            for label, server, uri in series:
                url = urls[server]
                session: str | None = None
                if server == "asgi":
                    _check_bare(url)
                else:
                    session = asyncio.run(_session(url, uri))
                    _check_modern(url, uri)
                for era, template, protocol in (("legacy", _LUA_LEGACY, PROTOCOL), (MODERN, _LUA_MODERN, MODERN)):
                    script = workdir / f"{label}-{era}.lua"
                    script.write_text(template.format(uri=uri, accept=ACCEPT, protocol=protocol,
                                                      session=_session_line(session)))
                    scripts[(label, era)] = script
                    _wrk(url, script, 2, 1.0)  # warm-up: imports, workers, first-call caches
            for _ in range(rounds):
                for level in LEVELS:
                    for era in ERAS:
                        for label, server, _uri in series:
                            run = _wrk(urls[server], scripts[(label, era)], level, seconds)
                            runs[era][label][level].append(run)
        finally:
            for proc in procs.values():
                stop_process(proc)
    return runs, names


def _ratio(a: list[WrkRun], b: list[WrkRun], attr: str) -> float:
    return median([getattr(x, attr) / getattr(y, attr) for x, y in zip(a, b, strict=True)])


def _suffix(era: str) -> str:
    return "" if era == "legacy" else "_2026"


def _era_name(era: str) -> str:
    return "handshake era" if era == "legacy" else "2026-07-28"


def run(quick: bool) -> list[Row]:
    if shutil.which("wrk") is None:
        why = "wrk is not installed (Debian package wrk)"
        return [Row.unavailable("wrk_read_rps_ratio_vs_sdk_c1", "reads/s vs SDK (wrk)", "x", why, ">= 0.8")]
    count = 1000 if quick else 3000
    # Measured before and after the wrk rounds: it swings with the machine, and a floor is the lower one.
    before = roundtrip_floor.floor_us(count)
    runs, names = measure(quick)
    after = roundtrip_floor.floor_us(count)
    floor = min(before, after)
    one_cpu = roundtrip_floor.floor_us(count, one_cpu=True)
    rows: list[Row] = []
    for era in ERAS:
        rows.extend(_era_rows(era, runs[era], names))
        rows.append(_budget_row(era, runs[era], floor, one_cpu=one_cpu))
    return rows


def _budget_row(era: str, runs: dict[str, dict[int, list[WrkRun]]], floor: float, *, one_cpu: float) -> Row:
    """The isolation round trip's price at one connection: a plain read against a hinted one.

    At one connection wrk waits for each answer, so a read's time is the inverse of the rate. The
    hinted resource is our whole stack without the reader (and so without the worker round trip); the
    thread mode runs the same reader in a thread of the server, set beside it. Informational: set
    against the floor of a bare Python process round trip measured in the same run
    (`bench.roundtrip_floor`).
    """
    sfx, shown = _suffix(era), _era_name(era)
    sdk = median([x.rps for x in runs["sdk"][1]])
    hinted = median([x.rps for x in runs["hinted"][1]])
    threads = median([x.rps for x in runs["threads"][1]])
    ours = median([x.rps for x in runs["ours"][1]])
    taken = 1e6 / ours - 1e6 / hinted
    against_threads = 1e6 / ours - 1e6 / threads
    allowed = 1e6 / (0.8 * sdk) - 1e6 / hinted
    detail = (f"1 connection: a plain read (the reader in a worker process) takes {1e6 / ours:.0f} us, a hinted one "
              f"(answered from the read cache: our stack without the reader) {1e6 / hinted:.0f} us: the isolation "
              f"round trip costs {taken:.0f} us a read. The same reader in a thread of the server (`--readers "
              f"thread`) takes {1e6 / threads:.0f} us ({against_threads:+.0f} us for the worker process instead: the "
              f"thread mode hands each read to a reader thread and back, the process mode's loop drives its worker "
              f"itself). 0.8x the SDK's {sdk:.0f} reads/s (production settings) would allow {allowed:.0f} us. The "
              f"bare floor of a Python process round trip on this machine (`bench.roundtrip_floor`, the lower of "
              f"before and after the wrk rounds): {floor:.0f} us; with both processes on one CPU (no wake-up crosses "
              f"CPUs): {one_cpu:.0f} us")
    return Row(key=f"wrk_isolation_price_us{sfx}",
               label=f"isolation round trip's price per read at 1 connection, plain - hinted ({shown}; floor "
                     f"{floor:.0f} us)",
               value=taken, unit="us", detail=detail,
               extra={f"round_trip_floor_us{sfx}": floor, f"round_trip_floor_one_cpu_us{sfx}": one_cpu,
                      f"round_trip_allowed_us{sfx}": allowed, f"round_trip_vs_threads_us{sfx}": against_threads})


def _rps(runs: dict[str, dict[int, list[WrkRun]]], label: str, level: int) -> float:
    return median([x.rps for x in runs[label][level]])


def _cell(runs: dict[str, dict[int, list[WrkRun]]], mode: str, peer: str, level: int) -> str:
    r = runs[peer][level]
    rps, p50, p99 = (median([getattr(x, a) for x in r]) for a in ("rps", "p50_ms", "p99_ms"))
    errors = sum(x.errors for x in r)
    ratio = "" if peer == mode else f"{_ratio(runs[mode][level], r, 'rps'):.2f}x"
    return f"{rps:,.0f} | {p50:.2f} | {p99:.2f} | {ratio} | {errors}"


def _table(era: str, runs: dict[str, dict[int, list[WrkRun]]], mode: str, peers: list[str]) -> str:
    """One era's table for one of our modes: it and every peer at 1 and 16 connections, with ratios."""
    lines = [f"### {_era_name(era)}: ours, {MODES[mode]}", "",
             "| server | 1 conn reads/s | p50 ms | p99 ms | ours ÷ it | errors "
             "| 16 conn reads/s | p50 ms | p99 ms | ours ÷ it | errors |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for label in [mode, *peers]:
        name = f"**ours, {MODES[mode]}**" if label == mode else PEERS[label]
        lines.append(f"| {name} | {_cell(runs, mode, label, 1)} | {_cell(runs, mode, label, 16)} |")
    return "\n".join(lines)


def _era_rows(era: str, runs: dict[str, dict[int, list[WrkRun]]], names: list[str]) -> list[Row]:
    sfx, shown = _suffix(era), _era_name(era)
    peers = [n for n in names if n != "ours"]
    extra: dict[str, float] = {}
    for level in LEVELS:
        for label in runs:
            r = runs[label][level]
            extra[f"wrk_rps_{label}_c{level}{sfx}"] = median([x.rps for x in r])
            extra[f"wrk_p50_ms_{label}_c{level}{sfx}"] = median([x.p50_ms for x in r])
            extra[f"wrk_p99_ms_{label}_c{level}{sfx}"] = median([x.p99_ms for x in r])
            extra[f"wrk_errors_{label}_c{level}{sfx}"] = sum(x.errors for x in r)
    tables = "\n\n".join(_table(era, runs, mode, peers) for mode in MODES)
    fast = "fastmcp" in names

    def ratio(mode: str, peer: str, level: int) -> float:
        return _ratio(runs[mode][level], runs[peer][level], "rps")

    rows: list[Row] = []
    # The goals of issue 28, against the peers in their production settings.
    goals: list[tuple[str, str, str, list[int], float]] = [
        ("wrk_read_rps_ratio_vs_sdk_c1", "ours", "sdk", [1], 0.8),
        ("wrk_read_rps_ratio_vs_sdk_c16", "ours", "sdk", [16], 1.0),
        ("wrk_read_rps_ratio_vs_fastmcp", "ours", "fastmcp", [1, 16], 1.2),
        ("wrk_hinted_read_rps_ratio_vs_sdk", "hinted", "sdk", [1, 16], 1.5),
        ("wrk_thread_read_rps_ratio_vs_sdk", "threads", "sdk", [1, 16], 1.2),
        ("wrk_thread_read_rps_ratio_vs_fastmcp", "threads", "fastmcp", [1, 16], 1.2),
    ]
    for key, mode, peer, levels, goal in goals:
        where = f"{levels[0]} conn" if len(levels) == 1 else "worse of 1/16"
        label = f"reads/s, ours {_SHORT[mode]} vs {PEERS[peer].split(',')[0]} production (wrk, {shown}, {where})"
        if peer == "fastmcp" and not fast:
            rows.append(Row.unavailable(key + sfx, label, "x", "fastmcp is not installed (pip install -e '.[bench]')",
                                        f">= {goal}"))
            continue
        worst = min(ratio(mode, peer, level) for level in levels)
        rows.append(Row(key=key + sfx, label=label, value=worst, unit="x", goal=f">= {goal}", met=worst >= goal,
                        markdown=tables if key == "wrk_read_rps_ratio_vs_sdk_c1" else "",
                        extra=extra if key == "wrk_read_rps_ratio_vs_sdk_c1" else {}))
    for peer in ("sdk-default", "asgi"):
        worst = min(ratio("ours", peer, level) for level in LEVELS)
        rows.append(Row(key=f"wrk_read_rps_ratio_vs_{peer.replace('-', '_')}{sfx}",
                        label=f"reads/s, ours (plain) vs {PEERS[peer]} (wrk, {shown}, worse of 1/16)",
                        value=worst, unit="x"))
    sdk_p99 = extra[f"wrk_p99_ms_sdk_c16{sfx}"]
    ours_p99 = extra[f"wrk_p99_ms_ours_c16{sfx}"]
    rows.append(Row(key=f"wrk_read_p99_ms_c16{sfx}", label=f"read p99 at 16 connections, ours plain (wrk, {shown})",
                    value=ours_p99, unit="ms", goal=f"<= SDK production ({sdk_p99:.2f} ms)", met=ours_p99 <= sdk_p99))
    scaling = extra[f"wrk_rps_ours_c16{sfx}"] / extra[f"wrk_rps_ours_c1{sfx}"]
    rows.append(Row(key=f"wrk_read_scaling_16_vs_1{sfx}", label=f"reads/s at 16 vs 1 connection, ours (wrk, {shown})",
                    value=scaling, unit="x", goal=">= 0.95", met=scaling >= 0.95))
    return rows


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="2 rounds of 1 s per cell instead of 4 of 5 s")
    args = parser.parse_args(argv)
    for row in run(quick=args.quick):
        print(row.key, row.value, row.goal, row.met)
        if row.markdown:
            print(row.markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
