"""Run every benchmark: `python bench/run.py [--quick] [--json PATH] [--only NAME ...]`.

Prints a table, writes bench/results.md (machine, versions, figures, analysis) and, with --json, a
flat JSON object of the headline keys plus supporting figures. With --only, results.md keeps what it
says of the other suites and replaces (or adds, at the top) the section of the suites run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import Row, versions

BENCH = Path(__file__).resolve().parent
SUITES: dict[str, str] = {
    "read": "bench.read_http",
    "wrk": "bench.read_wrk",
    "slow": "bench.slow_wrk",
    "templates": "bench.templates_bench",
    "list": "bench.list_bench",
    "fanout": "bench.fanout",
    "gui": "bench.gui_bench",
    "tests": "bench.tests_bench",
    "fairness": "bench.fairness_bench",
    "bus": "bench.bus_bench",
    "live": "bench.live_bench",
    "instances": "bench.instances_bench",
    "helpers": "bench.helper_start_bench",
    "lint": "bench.lint_bench",
    "auth": "bench.auth_bench",
    "observability": "bench.metrics_bench",
}


def _runner(module: str) -> Callable[[bool], list[Row]]:
    import importlib

    return importlib.import_module(module).run  # type: ignore[no-any-return]


def _format(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit == "x":
        return f"{value:.2f}x" if value < 100 else f"{value:.0f}x"
    return f"{value:,.2f} {unit}" if value < 10 else f"{value:,.0f} {unit}" if value >= 1000 else f"{value:.1f} {unit}"


def _verdict(row: Row) -> str:
    if row.met is None:
        return "-" if row.value is not None else "not available"
    return "met" if row.met else "MISSED"


def table(rows: list[Row]) -> list[str]:
    head = ["benchmark", "key", "value", "goal", "verdict"]
    body = [[r.label, r.key, _format(r.value, r.unit), r.goal or "-", _verdict(r)] for r in rows]
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)) for line in [head, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


REGENERATE = "`.venv/bin/python bench/run.py` (every suite, about 31 minutes on 2 CPUs)"

_BEGIN, _END = "<!-- suites {} -->", "<!-- end of suites {} -->"


def section(rows: list[Row], info: dict[str, str], *, suites: list[str], quick: bool, seconds: float,
            notes: list[str]) -> str:
    """What --only writes into results.md for `suites`, between markers the next such run replaces."""
    name = " ".join(suites)
    command = f"python bench/run.py --only {name}{' --quick' if quick else ''}"
    out = [_BEGIN.format(name), f"## {name} (`{command}`)", "",
           (f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC in {seconds:.0f} s; MCP SDK {info['mcp_sdk']}, "
            f"uvicorn {info['uvicorn']}, Python {info['python']}, {info['cpus']} CPUs."
            + (" **--quick on a machine shared with other jobs: indicative only.**" if quick else "")), "",
           "| benchmark | key | value | goal | verdict |", "| --- | --- | --- | --- | --- |"]
    for r in rows:
        out.append(f"| {r.label} | `{r.key}` | {_format(r.value, r.unit)} | {r.goal or '-'} | {_verdict(r)} |")
    out += ["", *[r.markdown + "\n" for r in rows if r.markdown]]
    details = [f"- **{r.key}**: {r.detail}" for r in rows if r.detail]
    out += details + ([""] if details else []) + [f"- note: {n}" for n in notes]
    out.append(_END.format(name))
    return "\n".join(out) + "\n"


def merge(previous: str, part: str, suites: list[str]) -> str:
    """`previous` results.md with the section of `suites` replaced by `part` (added after the header if new)."""
    name = " ".join(suites)
    begin, end = _BEGIN.format(name), _END.format(name)
    if begin in previous and end in previous:
        head, rest = previous.split(begin, 1)
        return head + part.rstrip("\n") + rest.split(end, 1)[1]
    if "Regenerate this file" not in previous:
        title, _, body = previous.partition("\n")
        previous = f"{title}\n\nRegenerate this file with one line: {REGENERATE}.\n{body}"
    lines = previous.splitlines(keepends=True)
    cut = next((i for i, line in enumerate(lines) if line.startswith("Machine:")), min(len(lines), 4)) + 1
    return "".join(lines[:cut]) + "\n" + part + "".join(lines[cut:])


def markdown(rows: list[Row], info: dict[str, str], quick: bool, seconds: float, notes: list[str]) -> str:
    out = ["# Benchmark results", "", f"Regenerate this file with one line: {REGENERATE}.", "",
           (f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC with `python bench/run.py"
           f"{' --quick' if quick else ''}` in {seconds:.0f} s."), "",
           (f"Machine: {info['cpus']} CPUs, {info['platform']} ({info['machine']}); Python {info['python']}, "
           f"Qt {info['qt']} (PySide6 {info['pyside6']}), MCP SDK {info['mcp_sdk']}, uvicorn {info['uvicorn']}, "
           f"httpx {info['httpx']}."), "",
           ("Side-by-side figures alternate the two systems (A B A B) in one run and report the median of the "
           "per-pair ratios; other helpers' test runs shared this machine, so absolute times are noisy."), "",
           "| benchmark | key | value | goal | verdict |", "| --- | --- | --- | --- | --- |"]
    for r in rows:
        out.append(f"| {r.label} | `{r.key}` | {_format(r.value, r.unit)} | {r.goal or '-'} | {_verdict(r)} |")
    out += ["", *[r.markdown + "\n" for r in rows if r.markdown]]
    out += ["", "## Details", ""]
    for r in rows:
        if r.detail:
            out.append(f"- **{r.key}**: {r.detail}")
    if notes:
        out += ["", "## Run notes", "", *[f"- {n}" for n in notes]]
    analysis = BENCH / "analysis.md"
    if analysis.exists():
        out += ["", analysis.read_text(encoding="utf-8").strip()]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller counts; under 4 minutes on 2 cores")
    parser.add_argument("--json", metavar="PATH", help="also write a flat JSON object of the figures")
    parser.add_argument("--only", nargs="*", choices=sorted(SUITES), help="run only these suites")
    parser.add_argument("--no-write", action="store_true", help="do not rewrite bench/results.md")
    parser.add_argument("--nodelay-experiment", action="store_true",
                        help="serve ours with TCP_NODELAY (bench/serve_nodelay.py); implies --no-write")
    args = parser.parse_args(argv)
    if args.nodelay_experiment:
        from bench import read_http

        read_http.NODELAY_EXPERIMENT = True
        args.no_write = True
    info = versions()
    started = time.perf_counter()
    rows: list[Row] = []
    notes: list[str] = []
    for name, module in SUITES.items():
        if args.only and name not in args.only:
            continue
        t0 = time.perf_counter()
        print(f"... {name}", flush=True)
        try:
            rows.extend(_runner(module)(args.quick))
        except Exception as exc:
            notes.append(f"suite {name} failed: {type(exc).__name__}: {exc}")
            print(f"    failed: {exc}", flush=True)
        print(f"    {time.perf_counter() - t0:.1f} s", flush=True)
    from bench import gui_bench

    notes += gui_bench.HUNG
    seconds = time.perf_counter() - started
    print("\n".join(table(rows)))
    for note in notes:
        print(f"note: {note}")
    print(f"total {seconds:.0f} s")
    if not args.no_write:
        results = BENCH / "results.md"
        if args.only:
            part = section(rows, info, suites=list(args.only), quick=args.quick, seconds=seconds, notes=notes)
            previous = results.read_text(encoding="utf-8") if results.exists() else "# Benchmark results\n"
            results.write_text(merge(previous, part, list(args.only)), encoding="utf-8")
        else:
            results.write_text(markdown(rows, info, args.quick, seconds, notes), encoding="utf-8")
    if args.json:
        flat: dict[str, object] = {r.key: r.value for r in rows}
        for r in rows:
            flat.update({k: v for k, v in r.extra.items() if k not in flat})
        flat.update({"cpus": int(info["cpus"]), "python": info["python"], "qt": info["qt"],
                     "mcp_sdk": info["mcp_sdk"], "quick": args.quick, "seconds": round(seconds, 1)})
        Path(args.json).write_text(json.dumps(flat, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
