"""Start cost of the studio's helper processes (a snippet worker, the analysis helper), against an earlier tree.

Each helper process imports what it runs: the snippet worker its modules, the analysis helper (jedi completions
and compile checks) its own and, at its first compile check, what that needs. This times a fresh interpreter
doing exactly that, alternating the current tree and the tree of an earlier commit (`BEFORE`, checked out with
`git worktree`), and counts the modules.
Run alone: `python bench/helper_start_bench.py [--rounds N] [--before REV]`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import Row, median

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "93fa84f"
"""The last commit before the app was grouped by feature (the worker and the completion process as they were)."""

_CHECK = "; {module}._check({{'id': 0, 'source': 'def read(uri, params):\\n    return 1\\n', 'function': 'read'}})"

# (what, module in the current tree, module in the BEFORE tree, what the probe does after the import)
HELPERS = (
    ("snippet worker", "resources_qt.snippets.worker", "resources_qt.snippets.worker", ""),
    # Its first compile check is what pulled in QtWidgets and the document before.
    ("analysis helper", "studio.analysis.helper_process", "studio.widgets.completion_process", _CHECK),
)

_PROBE = (
    "import sys, time; t = time.perf_counter(); import {module}{then}; "
    "print(__import__('json').dumps({{'ms': (time.perf_counter() - t) * 1000, "
    "'modules': len(sys.modules), 'qt': any(m.startswith('PySide6') for m in sys.modules), "
    "'ours': sum(1 for m in sys.modules if m.startswith(('resources_qt', 'studio')))}}))"
)


def _probe(tree: Path, module: str, then: str) -> dict[str, float]:
    env = {"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin", "QT_QPA_PLATFORM": "offscreen"}
    code = _PROBE.format(module=module, then=then.format(module=module))
    done = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    data: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return data


def _checkout(rev: str, into: Path) -> Path | None:
    try:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(into), rev],
                       check=True, capture_output=True, timeout=120)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return into


def _remove(tree: Path) -> None:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], capture_output=True,
                   timeout=120, check=False)  # fmt: skip


def measure(rounds: int, before: str) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="helper-start-") as scratch:
        old = _checkout(before, Path(scratch) / "before")
        rows: list[Row] = []
        try:
            for what, module, old_module, then in HELPERS:
                key = what.replace(" ", "_")
                now: list[dict[str, float]] = []
                before_runs: list[dict[str, float]] = []
                for _ in range(rounds):  # alternating, so a slow moment hits both
                    now.append(_probe(ROOT, module, then))
                    if old is not None:
                        before_runs.append(_probe(old, old_module, then))
                ms = median([r["ms"] for r in now])
                first_now = now[0]
                detail = (f"{int(first_now['ours'])} of our modules, {int(first_now['modules'])} in all, "
                          f"Qt loaded: {bool(first_now['qt'])}")  # fmt: skip
                if before_runs:
                    first = before_runs[0]
                    old_ms = median([r["ms"] for r in before_runs])
                    detail += (f"; at {before}: {old_ms:.0f} ms, {int(first['ours'])} of ours, "
                               f"{int(first['modules'])} in all, Qt loaded: {bool(first['qt'])}")  # fmt: skip
                    rows.append(Row(f"{key}_import_ratio", f"{what}: import time, now / before", old_ms / ms, "x",
                                    goal=">= 1x (no slower)", met=old_ms / ms >= 1.0, detail=detail))  # fmt: skip
                rows.append(Row(f"{key}_import_ms", f"{what}: start-up imports (median of {rounds})", ms, "ms",
                                detail=detail))  # fmt: skip
        finally:
            if old is not None:
                _remove(old)
    return rows


def run(quick: bool) -> list[Row]:
    return measure(3 if quick else 9, BEFORE)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--before", default=BEFORE)
    options = parser.parse_args()
    for row in measure(options.rounds, options.before):
        print(f"{row.key}: {row.value:.2f} {row.unit}  ({row.detail})")
