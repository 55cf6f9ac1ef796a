"""`resource-studio test` on a generated 200-test project: the whole run, process start to exit (goal < 5 s)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import PYTHON, REPO, Row, child_env, median

TESTS = 200
RESOURCES = 20
GOAL_S = 5.0


def generate_project(tests: int = TESTS, resources: int = RESOURCES) -> str:
    """A project of `resources` resources (half templates) and `tests` [[tests]] with mixed expectations."""
    parts = ['format = 1\n\nprelude = \'\'\'\nDATA = {str(i): {"id": str(i), "n": i} for i in range(1000)}\n\'\'\'\n',
             '[server]\nname = "Bench tests"\nworkers = 2\n']
    for r in range(resources):
        if r % 2:
            parts.append(
                f'[[resources]]\nname = "item_{r}"\nuri_template = "bench://{r}/items/{{id}}"\n'
                f'mime_type = "application/json"\nreader = \'\'\'\ndef read(uri, params):\n'
                f'    return {{"resource": {r}, **DATA[params["id"]]}}\n\'\'\'\n'
            )
        else:
            parts.append(
                f'[[resources]]\nname = "page_{r}"\nuri = "bench://{r}/page"\nmime_type = "text/plain"\n'
                f'reader = \'\'\'\ndef read(uri, params):\n    return "page {r}\\n" * 20\n\'\'\'\n'
            )
    for t in range(tests):
        r = t % resources
        if r % 2:
            parts.append(
                f'[[tests]]\nname = "item {t}"\nuri = "bench://{r}/items/{t}"\n'
                f'expect = {{ resource = "item_{r}", mime_type = "application/json", '
                f'json = {{ id = "{t}", n = {t} }} }}\n'
            )
        else:
            parts.append(
                f'[[tests]]\nname = "page {t}"\nuri = "bench://{r}/page"\n'
                f'expect = {{ mime_type = "text/plain", contains = "page {r}", '
                f"matches = '^page \\d+', contents = 1 }}\n"
            )
    return "\n".join(parts)


def run_once(project: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of `python -m resources_qt.testing.cli`, start to exit; raises unless all passed.

    CPU time (the run and its snippet workers, user + system) is what the run costs whatever else
    the machine is doing; wall time is what the goal is about.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [PYTHON, "-m", "resources_qt.testing.cli", str(project), "--no-samples"],
        capture_output=True, text=True, cwd=REPO, env=child_env(), timeout=120, check=False,
    )
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    last = done.stdout.rstrip("\n").splitlines()[-1:] or [""]
    if done.returncode != 0 or last[0] != f"{TESTS} passed, 0 failed":
        raise RuntimeError(f"test run failed (exit {done.returncode}): {last[0] or done.stderr.strip()[-300:]}")
    return elapsed, cpu


def run(quick: bool) -> list[Row]:
    label = f"resource-studio test, {TESTS} tests"
    with tempfile.TemporaryDirectory() as directory:
        project = Path(directory) / "bench_tests.toml"
        project.write_text(generate_project(), encoding="utf-8")
        try:
            runs = [run_once(project) for _ in range(1 if quick else 5)]
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            return [Row.unavailable("tests_run_s_200", label, "s", str(exc), f"< {GOAL_S:g} s")]
    times = [wall for wall, _cpu in runs]
    value = median(times)
    cpu = median([cpu for _wall, cpu in runs])
    detail = (
        "process start to exit, --no-samples, legacy era; runs " + ", ".join(f"{t:.2f}" for t in times)
        + f" s; CPU (run + workers) median {cpu:.2f} s; load average {os.getloadavg()[0]:.1f}"
    )
    return [Row("tests_run_s_200", label, round(value, 2), "s", f"< {GOAL_S:g} s", value < GOAL_S, detail,
                {"tests_run_cpu_s_200": round(cpu, 2)})]


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        print(f"{row.label}: {row.value} {row.unit} (goal {row.goal}, met: {row.met}) - {row.detail}")
