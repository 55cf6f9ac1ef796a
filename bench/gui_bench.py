"""GUI benchmarks: start-up, keystroke latency and event-loop stalls, each in an offscreen child process."""

from __future__ import annotations

import compileall
import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import PYTHON, REPO, Row, child_env, median
from bench.projects import many_resources_project, small_project
from bench.snippets_gen import big_json_reader, long_reader
from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project

STALL_GOAL = "< 100 ms"
STARTUP_GOAL = "< 1000 ms"
HUNG: list[str] = []


def missing_parts() -> str | None:
    """None when the studio window and the facade it needs are in the tree, else what is missing."""
    needed = [REPO / "studio" / "shell" / "main_window.py", REPO / "resources_qt" / "qt" / "__init__.py",
              REPO / "resources_qt" / "snippets" / "__init__.py"]
    absent = [str(p.relative_to(REPO)) for p in needed if not p.exists()]
    return f"{', '.join(absent)} not in the tree yet" if absent else None


def _env(home: Path) -> dict[str, str]:
    # A private home keeps the benchmark off the user's settings, recent files and recovery store.
    return child_env(QT_QPA_PLATFORM="offscreen", HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
                     XDG_DATA_HOME=str(home / "data"), XDG_CACHE_HOME=str(home / "cache"),
                     XDG_STATE_HOME=str(home / "state"), XDG_RUNTIME_DIR=str(home / "runtime"))


def _child(
    args: list[str], home: Path, timeout: float, *, module: str = "bench.gui_child"
) -> tuple[dict[str, Any], float]:
    """Run `module` (bench.gui_child unless told); returns its RESULT and the perf_counter taken just before it started.

    The child runs in its own process group so that a hang (at exit, say) can be ended together with
    the snippet workers it spawned; a RESULT printed before the hang still counts, and the hang is noted.
    """
    (home / "runtime").mkdir(parents=True, exist_ok=True, mode=0o700)
    started = time.perf_counter()
    proc = subprocess.Popen([PYTHON, "-m", module, *args], cwd=REPO, env=_env(home),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        HUNG.append(f"{args[0]} child did not exit within {timeout:.0f} s (killed)")
    for line in out.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:]), started
    tail = (err or "").strip().splitlines()[-8:]
    raise RuntimeError(f"gui child {args[0]} failed (exit {proc.returncode}): " + " | ".join(tail))


def _write_long_snippet_project(path: Path) -> Path:
    spec = ResourceSpec(name="long", uri="bench://long", mime_type="text/plain", reader=long_reader(2000))
    return save_project(Project(server=ServerSettings(name="keystroke"), resources=[spec]), path)


def _write_big_preview_project(path: Path) -> Path:
    spec = ResourceSpec(name="big", uri="bench://big.json", mime_type="application/json",
                        reader=big_json_reader(10.0))
    server = ServerSettings(name="preview", reader_timeout=60.0, memory_limit_mb=2048)
    return save_project(Project(server=server, resources=[spec]), path)


def _write_bytecode() -> bool:
    """Compile the studio's modules to `__pycache__`, as installing it does; True when all compiled.

    pip writes a wheel's bytecode at install and Python writes it on a module's first import, so a
    user's start reads it; with PYTHONDONTWRITEBYTECODE set (as in some shells and CI) nothing
    writes it, and each run compiled about 60 of the studio's modules from source (150-200 ms).
    """
    return all(compileall.compile_dir(REPO / package, quiet=2) for package in ("studio", "resources_qt", "bench"))


def cpu_yardstick_ms() -> float:
    """A fixed piece of pure-Python work, timed: how fast this machine is running right now.

    Start-up times on the 2-CPU bench machine spread from 530 to 940 ms with the same code; every
    phase (imports, building the window, loading the project, the first paint) moved together, and
    this loop, run beside them, spread 1.6x within the same minutes. So a slow start-up is told from a
    slow machine by this figure next to it.
    """
    started = time.perf_counter()
    total = 0
    for i in range(2_000_000):
        total += i * i % 7
    return (time.perf_counter() - started) * 1000


def startup(work: Path, quick: bool) -> Row:
    project = many_resources_project(work / "thousand.toml", 1000)
    compiled = _write_bytecode()
    # The first start reads PySide6's libraries and the fresh bytecode from disk: reported, not counted.
    cold, cold_started = _child([str(project)], work / "home-start-cold", 60, module="bench.gui_startup_child")
    cold_ms = (cold["shown_at"] - cold_started) * 1000
    times, yardsticks, rows = [], [], 0
    for i in range(3 if quick else 7):
        yardsticks.append(cpu_yardstick_ms())
        # Its own child module: the other modes' helpers would add their imports to the time measured.
        result, started = _child([str(project)], work / f"home-start-{i}", 60, module="bench.gui_startup_child")
        times.append((result["shown_at"] - started) * 1000)
        rows = result["catalogue_rows"]
    value = median(times)
    return Row("gui_startup_ms_1k", "GUI start-up, 1k-resource project", round(value, 0), "ms", STARTUP_GOAL,
               value < 1000,
               f"process start to main window exposed, {rows} resources loaded, "
               f"{'bytecode compiled first' if compiled else 'bytecode NOT all compiled'}; runs "
               f"{', '.join(f'{t:.0f}' for t in times)} ms, each after the CPU yardstick "
               f"({', '.join(f'{y:.0f}' for y in yardsticks)} ms: the machine's own speed at that moment); the "
               f"cold first start, not counted: {cold_ms:.0f} ms",
               extra={"gui_startup_cold_ms": round(cold_ms, 0), "gui_startup_slowest_ms": round(max(times), 0),
                      "gui_startup_yardstick_ms": round(median(yardsticks), 1)})


def keystroke(work: Path, quick: bool) -> Row:
    project = _write_long_snippet_project(work / "long.toml")
    result, _ = _child(["keystroke", str(project), str(100 if quick else 400)], work / "home-keys", 90)
    return Row("gui_keystroke_ms_2k", "keystroke in snippet editor, 2k lines", round(result["median_ms"], 2), "ms",
               "", None,
               f"{result['lines']} lines, {result['keystrokes']} keys mid-file: median {result['median_ms']:.2f}, "
               f"p95 {result['p95_ms']:.2f}, max {result['max_ms']:.1f} ms; longest stall in the 1.5 s after the "
               f"burst (debounced work) {result['after_burst_max_stall_ms']:.0f} ms",
               {"gui_keystroke_p95_ms_2k": round(result["p95_ms"], 2),
                "gui_after_typing_max_stall_ms_2k": round(result["after_burst_max_stall_ms"], 1)})


KEYSTROKE_GOAL = "< 16 ms"


def keystroke_completion(work: Path, quick: bool) -> Row:
    project = _write_long_snippet_project(work / "long-complete.toml")
    result, _ = _child(["keystroke-complete", str(project), str(8 if quick else 30)], work / "home-complete", 120)
    value = result["median_ms"]
    return Row("gui_keystroke_completion_ms_2k", "keystroke with completion, 2k lines", round(value, 2), "ms",
               KEYSTROKE_GOAL, value < 16,
               f"{result['lines']} lines, {result['keystrokes']} keys in {result['cycles']} words that trigger "
               f"completion ({result['popups']} popups shown): median {value:.2f}, p95 {result['p95_ms']:.2f}, "
               f"max {result['max_ms']:.1f} ms",
               {"gui_keystroke_completion_p95_ms_2k": round(result["p95_ms"], 2)})


def stall_completion(work: Path, quick: bool) -> Row:
    project = _write_long_snippet_project(work / "long-stall.toml")
    result, _ = _child(["keystroke-complete", str(project), str(8 if quick else 30)], work / "home-cstall", 120)
    value = result["max_stall_during_completion_ms"]
    answer = result["completion_ms_median"]
    return Row("gui_max_stall_ms_completion", "GUI max stall while completions compute, 2k lines",
               round(value, 1), "ms", STALL_GOAL, value < 100,
               f"5 ms heartbeat gaps overlapping the {result['completions']} request-to-answer windows "
               f"(median answer {answer or 0:.0f} ms, {result['popups']} popups); over the whole typing session "
               f"(incl. the debounced compile checks) max gap {result['max_stall_ms']:.0f} ms, "
               f"{result['stalls_over_100ms']} over 100 ms",
               {"gui_max_stall_ms_typing_session_2k": round(result["max_stall_ms"], 1)})


def stall_completion_editor(work: Path, quick: bool) -> Row:
    project = _write_long_snippet_project(work / "long-pane.toml")
    result, _ = _child(["keystroke-complete-pane", str(project), str(8 if quick else 30)], work / "home-pane", 120)
    value = result["max_stall_during_completion_ms"]
    return Row("gui_max_stall_ms_completion_editor", "editor alone: max stall while completing, 2k lines",
               round(value, 1), "ms", STALL_GOAL, value < 100,
               f"the same typing in a lone SnippetPane (no window, no project document): keystroke median "
               f"{result['median_ms']:.2f} ms, p95 {result['p95_ms']:.2f}; {result['completions']} answers "
               f"(median {result['completion_ms_median'] or 0:.0f} ms), {result['popups']} popups; whole-session max "
               f"gap {result['max_stall_ms']:.0f} ms",
               {"gui_keystroke_completion_editor_ms_2k": round(result["median_ms"], 2)})


def stall_load(work: Path, quick: bool) -> Row:
    project = small_project(work / "small.toml")
    seconds = 4.0 if quick else 10.0
    result, _ = _child(["stall-load", str(project), "16", str(seconds)], work / "home-load", 60)
    value = result["max_stall_ms"]
    return Row("gui_max_stall_ms_load", "GUI max stall, 16 clients reading", round(value, 1), "ms", STALL_GOAL,
               value < 100,
               f"{seconds:.0f} s of 16 clients: {result['reads']} reads ({result['rps']:.0f}/s), {result['errors']} "
               f"errors; gaps over 50 ms: {result['stalls_over_50ms']}, over 100 ms: {result['stalls_over_100ms']}",
               {"gui_load_reads_per_s": round(result["rps"], 1)})


def stall_preview(work: Path, quick: bool) -> Row:
    project = _write_big_preview_project(work / "big.toml")
    result, _ = _child(["stall-preview", str(project), "40"], work / "home-preview", 60)
    value = result["max_stall_ms"]
    detail = (f"{result['bytes'] / 1e6:.1f} MB previewed in {result['preview_ms']:.0f} ms "
              f"(reader in a worker); gaps over 100 ms: {result['stalls_over_100ms']}")
    if result.get("error"):
        detail += f"; preview error: {result['error']}"
    return Row("gui_max_stall_ms_preview_10mb", "GUI max stall, 10 MB JSON preview", round(value, 1), "ms",
               STALL_GOAL, value < 100, detail)


PREVIEW_GOAL = "< 15 ms"
PREVIEW_FIRST_GOAL = "< 300 ms"


def preview_latency(work: Path, quick: bool) -> list[Row]:
    """Read pressed to the content painted, for a small text resource: the project's first read, then later ones."""
    project = small_project(work / "preview-small.toml")
    reads = 20 if quick else 60
    result, _ = _child(["preview-latency", str(project), str(reads)], work / "home-preview-latency", 90)
    median_ms, first_ms = result["median_ms"], result["first_ms"]
    hand_off = median_ms - result["read_median_ms"]
    return [
        Row("preview_read_ms_median", "preview: Read to content painted, small text", round(median_ms, 1), "ms",
            PREVIEW_GOAL, median_ms < 15,
            f"median of {result['reads']} reads after the first: p95 {result['p95_ms']:.1f}, max "
            f"{result['max_ms']:.1f} ms; of the median, the read itself (resolve, worker, conversion) took "
            f"{result['read_median_ms']:.1f} ms and the hand-offs to the GUI and the painting "
            f"{hand_off:.1f} ms", {"preview_read_ms_p95": round(result["p95_ms"], 1)}),
        Row("preview_first_read_ms", "preview: first read of a project, small text", round(first_ms, 0), "ms",
            PREVIEW_FIRST_GOAL, first_ms < 300,
            f"window open and idle for 1 s, then Read: {first_ms:.0f} ms, of which the read itself "
            f"{result['first_read_ms']:.0f} ms (it includes waiting for the snippet worker)"),
    ]


def run(quick: bool) -> list[Row]:
    why = missing_parts()
    specs = [("gui_startup_ms_1k", "GUI start-up, 1k-resource project", STARTUP_GOAL, startup),
             ("gui_keystroke_ms_2k", "keystroke in snippet editor, 2k lines", "", keystroke),
             ("gui_keystroke_completion_ms_2k", "keystroke with completion, 2k lines", KEYSTROKE_GOAL,
              keystroke_completion),
             ("gui_max_stall_ms_completion", "GUI max stall while completions compute, 2k lines", STALL_GOAL,
              stall_completion),
             ("gui_max_stall_ms_completion_editor", "editor alone: max stall while completing, 2k lines",
              STALL_GOAL, stall_completion_editor),
             ("gui_max_stall_ms_load", "GUI max stall, 16 clients reading", STALL_GOAL, stall_load),
             ("gui_max_stall_ms_preview_10mb", "GUI max stall, 10 MB JSON preview", STALL_GOAL, stall_preview)]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench-gui-") as tmp:
        for key, label, goal, fn in specs:
            unit = "ms"
            if why:
                rows.append(Row.unavailable(key, label, unit, why, goal))
                continue
            try:
                rows.append(fn(Path(tmp), quick))
            except Exception as exc:
                rows.append(Row.unavailable(key, label, unit, f"failed: {exc}", goal))
        preview_keys = [("preview_read_ms_median", "preview: Read to content painted, small text", PREVIEW_GOAL),
                        ("preview_first_read_ms", "preview: first read of a project, small text",
                         PREVIEW_FIRST_GOAL)]
        try:
            if why:
                raise RuntimeError(why)
            rows.extend(preview_latency(Path(tmp), quick))
        except Exception as exc:
            reason = why or f"failed: {exc}"
            rows.extend(Row.unavailable(key, label, "ms", reason, goal) for key, label, goal in preview_keys)
    return rows
