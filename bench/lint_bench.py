"""`resource-studio lint` of the 1,000-resource project: the whole run, process start to exit (goal < 10 s)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import PYTHON, REPO, Row, child_env, median
from bench.projects import many_resources_project

RESOURCES = 1000
GOAL_S = 10.0


def run_once(project: Path) -> tuple[float, float, int]:
    """(wall, CPU, reads) of `python -m resources_qt.lint.cli PROJECT --format json`, start to exit.

    CPU time (the run and its snippet workers, user + system) is what the lint costs whatever else the
    machine is doing; wall time is what the goal is about. Raises unless every resource was read.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [PYTHON, "-m", "resources_qt.lint.cli", str(project), "--format", "json"],
        capture_output=True, text=True, cwd=REPO, env=child_env(), timeout=120, check=False,
    )
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"lint failed (exit {done.returncode}): {done.stderr.strip()[-300:]}")
    report = json.loads(done.stdout)
    if report["reads"] < RESOURCES or report["counts"]["error"]:
        raise RuntimeError(f"lint read {report['reads']} URIs with {report['counts']} findings")
    return elapsed, cpu, int(report["reads"])


def run(quick: bool) -> list[Row]:
    label = f"resource-studio lint, {RESOURCES:,}-resource project"
    with tempfile.TemporaryDirectory() as directory:
        project = many_resources_project(Path(directory) / "thousand.toml", RESOURCES)
        try:
            runs = [run_once(project) for _ in range(1 if quick else 3)]
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            return [Row.unavailable("lint_run_s_1k", label, "s", str(exc), f"< {GOAL_S:g} s")]
    times = [wall for wall, _cpu, _reads in runs]
    value = median(times)
    cpu = median([cpu for _wall, cpu, _reads in runs])
    detail = (
        f"process start to exit, legacy era, {runs[0][2]:,} reads (every resource's URI and the templates' "
        "samples) through the engine over HTTP and the SDK client; runs " + ", ".join(f"{t:.2f}" for t in times)
        + f" s; CPU (run + workers) median {cpu:.2f} s; load average {os.getloadavg()[0]:.1f}"
    )
    return [Row("lint_run_s_1k", label, round(value, 2), "s", f"< {GOAL_S:g} s", value < GOAL_S, detail,
                {"lint_run_cpu_s_1k": round(cpu, 2)})]


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        print(f"{row.label}: {row.value} {row.unit} (goal {row.goal}, met: {row.met}) - {row.detail}")
