"""resources/read under `wrk` (a C load generator, so the client is never the bottleneck): ours vs SDK vs FastMCP.

Each server gets one handshake-era session (initialize over httpx), then wrk
POSTs the same `resources/read` with that session's id at 1 and 16
connections, servers alternating A B C A B C. Reported per level: reads/s,
p50, p99, non-2xx/socket errors; ratios are medians of per-round ratios.
FastMCP runs only where the `fastmcp` package is installed (the bench extra).
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.common import PYTHON, REPO, Row, child_env, free_port, median, stop_process, wait_for_port
from bench.projects import small_project
from bench.rpc_client import ACCEPT, PROTOCOL, RpcSession
from bench.sdk_server import SMALL_URI

LEVELS = (1, 16)

_FASTMCP_SERVER = """
import sys
import uvicorn
from fastmcp import FastMCP

mcp = FastMCP("fastmcp-bench")

@mcp.resource("bench://small", name="small", mime_type="text/plain")
def small() -> str:
    return "hello from the benchmark resource\\n"

uvicorn.run(mcp.http_app(path="/mcp"), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
"""

# Every request gets its own JSON-RPC id: concurrent requests of one session sharing an id collide in the
# transport (it keys a request's answer stream by id) and one of them is answered with an error.
_LUA = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "{accept}"
wrk.headers["Mcp-Protocol-Version"] = "{protocol}"
wrk.headers["Mcp-Session-Id"] = "{session}"
local counter = 0
request = function()
  counter = counter + 1
  return wrk.format(nil, nil, nil, '{{"jsonrpc":"2.0","id":' .. counter .. ',"method":"resources/read",' ..
    '"params":{{"uri":"{uri}"}}}}')
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


async def _session(url: str) -> str:
    async with httpx.AsyncClient(timeout=30.0) as http:
        session = RpcSession(http, url)
        await session.initialize("wrk")
        result = await session.read(SMALL_URI)  # fails loudly if the server cannot answer at all
        assert result["contents"][0]["uri"] == SMALL_URI
        assert session.session_id is not None
        return session.session_id


def _wrk(url: str, script: Path, connections: int, seconds: float) -> WrkRun:
    duration = f"{max(1, round(seconds))}s"
    command = ["wrk", "-t", "1", "-c", str(connections), "-d", duration, "--latency", "-s", str(script), url]
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60, check=True)
    return parse_wrk(done.stdout)


def _start(workdir: Path, name: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    if name == "ours":
        project = small_project(workdir / "small.toml")
        argv = [PYTHON, "-m", "studio", "serve", str(project), "--http", f"127.0.0.1:{port}"]
    elif name == "sdk":
        argv = [PYTHON, str(REPO / "bench" / "sdk_server.py"), str(port)]
    else:
        (workdir / "fastmcp_server.py").write_text(_FASTMCP_SERVER, encoding="utf-8")
        argv = [PYTHON, str(workdir / "fastmcp_server.py"), str(port)]
    log = (workdir / f"{name}.log").open("wb")
    proc = subprocess.Popen(argv, cwd=REPO, env=child_env(), stdout=subprocess.DEVNULL, stderr=log)
    wait_for_port(port, 30, proc)
    return proc, f"http://127.0.0.1:{port}/mcp"


def _peers() -> list[str]:
    names = ["ours", "sdk"]
    try:
        import fastmcp  # noqa: F401
    except ImportError:
        pass
    else:
        names.append("fastmcp")
    return names


def measure(quick: bool) -> tuple[dict[str, dict[int, list[WrkRun]]], list[str]]:
    seconds = 3.0 if quick else 6.0
    rounds = 2 if quick else 4
    names = _peers()
    runs: dict[str, dict[int, list[WrkRun]]] = {name: {level: [] for level in LEVELS} for name in names}
    with tempfile.TemporaryDirectory(prefix="bench-wrk-") as tmp:
        workdir = Path(tmp)
        procs = {}
        scripts = {}
        try:
            for name in names:
                procs[name], url = _start(workdir, name)
                session = asyncio.run(_session(url))
                script = workdir / f"{name}.lua"
                script.write_text(_LUA.format(uri=SMALL_URI, accept=ACCEPT, protocol=PROTOCOL, session=session))
                scripts[name] = (url, script)
                _wrk(url, script, 2, 1.0)  # warm-up: imports, workers, first-call caches
            for _ in range(rounds):
                for level in LEVELS:
                    for name in names:
                        url, script = scripts[name]
                        runs[name][level].append(_wrk(url, script, level, seconds))
        finally:
            for proc in procs.values():
                stop_process(proc)
    return runs, names


def _ratio(a: list[WrkRun], b: list[WrkRun], attr: str) -> float:
    return median([getattr(x, attr) / getattr(y, attr) for x, y in zip(a, b, strict=True)])


def run(quick: bool) -> list[Row]:
    if shutil.which("wrk") is None:
        why = "wrk is not installed (Debian package wrk)"
        return [Row.unavailable("wrk_read_rps_ratio_vs_sdk", "reads/s vs SDK (wrk)", "x", why, ">= 1.5")]
    runs, names = measure(quick)
    rows: list[Row] = []
    details = []
    worst_sdk = min(_ratio(runs["ours"][level], runs["sdk"][level], "rps") for level in LEVELS)
    extra: dict[str, float] = {}
    for level in LEVELS:
        for name in names:
            r = runs[name][level]
            extra[f"wrk_rps_{name}_c{level}"] = median([x.rps for x in r])
            extra[f"wrk_p50_ms_{name}_c{level}"] = median([x.p50_ms for x in r])
            extra[f"wrk_p99_ms_{name}_c{level}"] = median([x.p99_ms for x in r])
            extra[f"wrk_errors_{name}_c{level}"] = sum(x.errors for x in r)
        details.append(
            f"{level} connection(s): "
            + ", ".join(
                f"{name} {extra[f'wrk_rps_{name}_c{level}']:.0f} rps p50 {extra[f'wrk_p50_ms_{name}_c{level}']:.2f} ms "
                f"p99 {extra[f'wrk_p99_ms_{name}_c{level}']:.2f} ms errors {extra[f'wrk_errors_{name}_c{level}']:.0f}"
                for name in names
            )
        )
    scaling = extra["wrk_rps_ours_c16"] / extra["wrk_rps_ours_c1"]
    rows.append(Row(key="wrk_read_rps_ratio_vs_sdk", label="reads/s vs SDK MCPServer (wrk, worse of 1/16)",
                    value=worst_sdk, unit="x", goal=">= 1.5", met=worst_sdk >= 1.5,
                    detail="; ".join(details), extra=extra))
    if "fastmcp" in names:
        worst_fast = min(_ratio(runs["ours"][level], runs["fastmcp"][level], "rps") for level in LEVELS)
        rows.append(Row(key="wrk_read_rps_ratio_vs_fastmcp", label="reads/s vs FastMCP (wrk, worse of 1/16)",
                        value=worst_fast, unit="x", goal=">= 1.2", met=worst_fast >= 1.2))
    else:
        rows.append(Row.unavailable("wrk_read_rps_ratio_vs_fastmcp", "reads/s vs FastMCP (wrk)", "x",
                                    "fastmcp is not installed (pip install 'mcp-resource-studio[bench]')", ">= 1.2"))
    best_p99 = min(extra[f"wrk_p99_ms_{n}_c16"] for n in names if n != "ours")
    rows.append(Row(key="wrk_read_p99_ms_c16", label="read p99 at 16 connections, ours (wrk)",
                    value=extra["wrk_p99_ms_ours_c16"], unit="ms", goal=f"<= best peer ({best_p99:.2f} ms)",
                    met=extra["wrk_p99_ms_ours_c16"] <= best_p99))
    rows.append(Row(key="wrk_read_scaling_16_vs_1", label="reads/s at 16 vs 1 connection, ours (wrk)",
                    value=scaling, unit="x", goal=">= 0.95", met=scaling >= 0.95))
    return rows


if __name__ == "__main__":
    for row in run(quick=True):
        print(row)
