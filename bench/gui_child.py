"""The GUI benchmarks' child process: `python -m bench.gui_child MODE PROJECT [ARGS]`, prints `RESULT {json}`.

Modes: startup (process start to main window exposed, through studio.cli.main; the benchmark itself
runs `bench.gui_startup_child`, which imports nothing else), keystroke (typing
into the snippet editor), keystroke-complete (typing words that trigger completion; -pane: in a lone
SnippetPane, without the window and its document), stall-load
(heartbeat while 16 clients read), stall-preview (heartbeat while
the preview shows 10 MB of JSON). Runs under QT_QPA_PLATFORM=offscreen with a private settings home.
"""

from __future__ import annotations

import asyncio
import cProfile
import io
import itertools
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QAction, QKeyEvent, QTextCursor
from PySide6.QtWidgets import QApplication, QPlainTextEdit

from bench.common import PYTHON, REPO, child_env, free_port
from bench.heartbeat import Heartbeat

PROFILE_ENV = "BENCH_PROFILE"
"""When set to a path, the measured section runs under cProfile and the top entries are written there."""


class _Profiled:
    """cProfile of the GUI thread over a block, when BENCH_PROFILE asks for it."""

    def __init__(self) -> None:
        self.path = os.environ.get(PROFILE_ENV)
        self.profile = cProfile.Profile() if self.path else None

    def __enter__(self) -> None:
        if self.profile is not None:
            self.profile.enable()

    def __exit__(self, *exc_info: object) -> None:
        if self.profile is None or self.path is None:
            return
        self.profile.disable()
        buffer = io.StringIO()
        stats = pstats.Stats(self.profile, stream=buffer).strip_dirs()
        stats.sort_stats("tottime").print_stats(30)
        stats.sort_stats("cumulative").print_stats(40)
        Path(self.path).write_text(buffer.getvalue(), encoding="utf-8")


def report(**values: Any) -> None:
    print("RESULT " + json.dumps(values), flush=True)


# -- helpers for the in-window modes ---------------------------------------------------------


def _open_window(project: str) -> Any:
    from studio.shell.main_window import MainWindow, UnsavedChoice

    window = MainWindow(
        ask_unsaved=lambda _text: UnsavedChoice.DISCARD,
        ask_restore=lambda _candidate: False,
        report_error=lambda title, text: print(f"error dialog: {title}: {text}", file=sys.stderr),
    )
    window.open_project(project, ask_to_save=False)
    window.show()
    return window


async def _settle(seconds: float) -> None:
    await asyncio.sleep(seconds)


def _run(coro_fn: Any, project: str, *args: Any) -> int:
    """The window on a qasync loop with the garbage-collection regime and GIL switch interval of
    `studio.app.run_app`.

    The studio collects on the GUI thread only (GuiThreadCollector) and freezes what start-up built;
    a bench without them would measure collections where the studio never runs them. It also hands the
    GIL round every `GUI_SWITCH_INTERVAL`, which decides how long a busy background thread keeps the GUI
    thread waiting.
    """
    import gc

    import qasync

    from resources_qt.qt.gc_guard import GuiThreadCollector
    from studio.app import GUI_SWITCH_INTERVAL

    app = QApplication(sys.argv[:1])
    collector = GuiThreadCollector(app)
    collector.install()
    sys.setswitchinterval(GUI_SWITCH_INTERVAL)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    window = _open_window(project)
    gc.freeze()
    window.controller.server_started.connect(collector.freeze_after_first_start)  # as run_app does
    try:
        with loop:
            loop.run_until_complete(coro_fn(app, window, *args))
    finally:
        window.shutdown()
        gc.unfreeze()
        collector.uninstall()
    return 0


def _run_pane(coro_fn: Any, project: str, *args: Any) -> int:
    """Like `_run`, with the project's first reader in a lone SnippetPane: the editor without the window."""
    import qasync

    from resources_qt.project import load_project
    from studio.code.snippet_pane import SnippetPane

    app = QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    pane = SnippetPane(heading="Reader", placeholder="", function="read", required=True,
                       object_name="snippetEditor")
    pane.load(load_project(project).resources[0].reader, key="bench")
    pane.resize(1000, 700)
    pane.show()
    with loop:
        loop.run_until_complete(coro_fn(app, pane, *args))
    return 0


# -- keystroke ----------------------------------------------------------------------------------


async def keystroke(app: QApplication, window: Any, count: int) -> None:
    await _settle(1.0)
    editor = window.findChild(QPlainTextEdit, "snippetEditor")
    if editor is None:
        raise RuntimeError("no widget named snippetEditor in the main window")
    lines = editor.blockCount()
    cursor = editor.textCursor()
    cursor.setPosition(editor.document().findBlockByNumber(lines // 2).position())
    cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock)
    editor.setTextCursor(cursor)
    editor.setFocus()
    times: list[float] = []
    keys = [(Qt.Key.Key_A, "a"), (Qt.Key.Key_Space, " "), (Qt.Key.Key_QuoteDbl, '"'), (Qt.Key.Key_Backspace, "")]
    for i in range(count):
        key, text = keys[i % len(keys)]
        start = time.perf_counter()
        for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            QApplication.sendEvent(editor, QKeyEvent(kind, key, Qt.KeyboardModifier.NoModifier, text))
        app.processEvents()  # layout and repaint of the edited block, as the event loop would do next
        times.append((time.perf_counter() - start) * 1000)
        if i % 25 == 24:
            await asyncio.sleep(0.02)  # let the debounced snippet check run now and then, as when typing
    heartbeat = Heartbeat(5)
    heartbeat.start()
    await asyncio.sleep(1.5)  # debounced follow-up work (diagnostics, document update) after the burst
    heartbeat.stop()
    ordered = sorted(times)
    report(lines=lines, median_ms=statistics.median(times), p95_ms=ordered[int(len(ordered) * 0.95) - 1],
           max_ms=ordered[-1], after_burst_max_stall_ms=heartbeat.max_stall_ms, keystrokes=count)


# -- keystroke with completion -----------------------------------------------------------------

COMPLETE_WORDS = ["helper_1", "value", "total", "scale", "label", "text", "ResourceContent", "list"]
NO_COMPLETION_ENV = "BENCH_NO_COMPLETION"
"""When set, the same typing runs with completion switched off (the baseline to compare with)."""


def _key(ch: str) -> Qt.Key:
    return Qt.Key.Key_Underscore if ch == "_" else Qt.Key(ord(ch.upper()))


def _press(editor: Any, key: Qt.Key, text: str) -> float:
    start = time.perf_counter()
    for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
        QApplication.sendEvent(editor, QKeyEvent(kind, key, Qt.KeyboardModifier.NoModifier, text))
    QApplication.processEvents()
    return (time.perf_counter() - start) * 1000


async def keystroke_complete(app: QApplication, window: Any, cycles: int) -> None:
    """Type words that trigger completion in the middle of the 2,000-line reader, pausing as a typist does.

    Each cycle types a 3-letter prefix, pauses past the trigger debounce (the worker starts jedi on the
    whole snippet), types three more letters while it computes, then deletes the word. A 5 ms heartbeat
    runs throughout: its longest gap is the longest the GUI was unresponsive while completions ran.
    """
    await _settle(1.0)
    editor = window.findChild(QPlainTextEdit, "snippetEditor")
    if editor is None or not hasattr(editor, "completion"):
        raise RuntimeError("no completing snippetEditor in the main window")
    editor.completion.enabled = not os.environ.get(NO_COMPLETION_ENV)
    if editor.completion.enabled:  # as when the user clicks into the editor before typing
        from studio.analysis.worker import CompletionWorker

        editor.completion.prepare()
        deadline = time.monotonic() + 30
        while not CompletionWorker.shared().ready and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
    lines = editor.blockCount()
    shown: list[int] = []
    editor.completion.shown.connect(lambda names: shown.append(len(names)))
    # When each request was made and answered: the heartbeat gaps inside these windows are the stalls
    # "while completions are computed".
    asked: dict[int, float] = {}
    windows: list[tuple[float, float]] = []
    editor.completion.requested.connect(lambda rid: asked.__setitem__(rid, time.perf_counter()))
    editor.completion.answered.connect(
        lambda rid: windows.append((asked.pop(rid, time.perf_counter()), time.perf_counter())))
    ticks: list[float] = []
    ticker = QTimer()
    ticker.setTimerType(Qt.TimerType.PreciseTimer)
    ticker.setInterval(5)
    ticker.timeout.connect(lambda: ticks.append(time.perf_counter()))
    block = editor.document().findBlockByNumber(lines // 2)
    while block.isValid() and not block.text().startswith("    total = value"):
        block = block.next()
    cursor = editor.textCursor()
    cursor.setPosition(block.position() + block.length() - 1)
    editor.setTextCursor(cursor)
    editor.setFocus()
    times = [_press(editor, Qt.Key.Key_Return, "\r")]
    heartbeat = Heartbeat(5)
    heartbeat.start()
    ticker.start()
    with _Profiled():
        for i in range(cycles):
            word = COMPLETE_WORDS[i % len(COMPLETE_WORDS)]
            for ch in word[:3]:
                times.append(_press(editor, _key(ch), ch))
                await asyncio.sleep(0.025)
            await asyncio.sleep(0.15)  # past the trigger pause: the worker is computing now
            for ch in word[3:]:
                times.append(_press(editor, _key(ch), ch))
                await asyncio.sleep(0.025)
            await asyncio.sleep(0.4)  # a pause after the word: the popup shows
            for _ in range(len(word)):
                times.append(_press(editor, Qt.Key.Key_Backspace, ""))
                await asyncio.sleep(0.01)
        await asyncio.sleep(1.0)  # answers still in flight, and the debounced snippet check
    heartbeat.stop()
    ticker.stop()
    during = [(b - a) * 1000 - 5 for a, b in itertools.pairwise(ticks)
              if any(a < end and b > start for start, end in windows)]
    ordered = sorted(times)
    report(lines=lines, keystrokes=len(times), median_ms=statistics.median(times),
           p95_ms=ordered[int(len(ordered) * 0.95) - 1], max_ms=ordered[-1], cycles=cycles,
           popups=len(shown), max_stall_ms=heartbeat.max_stall_ms, stalls_over_100ms=heartbeat.stalls_over(100),
           stalls_over_50ms=heartbeat.stalls_over(50), completions=len(windows),
           completion_ms_median=statistics.median([(e - s) * 1000 for s, e in windows]) if windows else None,
           max_stall_during_completion_ms=max(during, default=0.0))


# -- stalls -----------------------------------------------------------------------------------


async def _wait_serving(window: Any, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        url = getattr(window.controller, "url", None)
        if url and window.controller.is_running:
            return str(url)
        await asyncio.sleep(0.05)
    raise RuntimeError("the server did not start from the window")


async def stall_load(app: QApplication, window: Any, clients: int, seconds: float) -> None:
    window.start_http("127.0.0.1", free_port())
    url = await _wait_serving(window, 20)
    await _settle(1.0)
    heartbeat = Heartbeat(5)
    load = await asyncio.create_subprocess_exec(
        PYTHON, "-m", "bench.load_client", url, str(clients), str(seconds),
        cwd=str(REPO), env=child_env(), stdout=subprocess.PIPE,
    )
    heartbeat.start()
    with _Profiled():
        out, _ = await load.communicate()
    heartbeat.stop()
    await _settle(0.5)
    stats = json.loads(out.decode().strip().splitlines()[-1])
    report(max_stall_ms=heartbeat.max_stall_ms, stalls_over_100ms=heartbeat.stalls_over(100),
           stalls_over_50ms=heartbeat.stalls_over(50), **stats)


async def stall_preview(app: QApplication, window: Any, wait_s: float) -> None:
    await _settle(1.0)
    finished: list[float] = []
    outcomes: list[Any] = []

    def on_finished(outcome: Any) -> None:
        finished.append(time.perf_counter())
        outcomes.append(outcome)

    window.controller.preview_finished.connect(on_finished)
    heartbeat = Heartbeat(5)
    heartbeat.start()
    started = time.perf_counter()
    with _Profiled():
        _preview_action(window).trigger()
        deadline = time.monotonic() + wait_s
        while not finished and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        await asyncio.sleep(1.5)  # rendering that follows the outcome
    heartbeat.stop()
    if not finished:
        raise RuntimeError("the preview did not finish")
    outcome = outcomes[0]
    size = sum(len(c.data()) for c in (outcome.contents or []))
    report(max_stall_ms=heartbeat.max_stall_ms, preview_ms=(finished[0] - started) * 1000, bytes=size,
           error=outcome.error_message, stalls_over_100ms=heartbeat.stalls_over(100))


async def preview_latency(app: QApplication, window: Any, reads: int) -> None:
    """Press Read `reads + 1` times; each time from the click to the content painted in the preview.

    The first read is the project's first (its snippet worker runs the reader for the first time);
    the others are the steady state. "Painted" is the content view ready and repainted synchronously
    right after the outcome was shown, so the paint of the new content is inside the time.
    """
    from studio.preview.preview import PreviewPanel

    await _settle(1.0)  # as a user would: the window is up and idle before the first click
    panel = window.findChild(PreviewPanel)
    if panel is None:
        raise RuntimeError("no preview panel in the main window")
    done: list[float] = []
    read_ms: list[float] = []

    def on_finished(outcome: Any) -> None:
        # Connected after the window's own slot, so the panel has shown the outcome by now.
        view = panel.content_tabs.currentWidget()
        if view is None or not view.is_ready:
            return  # an error page, or content still being prepared: `rendered` follows
        view.repaint()
        done.append(time.perf_counter())
        read_ms.append(outcome.elapsed_ms)

    window.controller.preview_finished.connect(on_finished)
    times: list[float] = []
    texts: list[str] = []
    for _ in range(reads + 1):
        done.clear()
        start = time.perf_counter()
        panel.read_button.click()
        deadline = time.monotonic() + 30
        while not done and time.monotonic() < deadline:
            await asyncio.sleep(0.001)
        if not done:
            raise RuntimeError("the preview did not show the content")
        times.append((done[0] - start) * 1000)
        view = panel.content_tabs.currentWidget()
        texts.append(view.shown_text() if view is not None else "")
        await asyncio.sleep(0.05)  # a pause between clicks, as a user makes
    later = times[1:]
    report(first_ms=times[0], median_ms=statistics.median(later), p95_ms=sorted(later)[int(len(later) * 0.95) - 1],
           max_ms=max(later), reads=len(later), shown_chars=len(texts[-1]), first_read_ms=read_ms[0],
           read_median_ms=statistics.median(read_ms[1:]))


def _preview_action(window: Any) -> QAction:
    """The window's Read / Preview command, found as a user would: by its label."""
    actions: list[QAction] = window.findChildren(QAction)
    for action in actions:
        if "preview" in action.text().lower():
            return action
    raise RuntimeError("the main window has no Preview action")


def main(argv: list[str]) -> int:
    mode, project = argv[0], argv[1]
    if mode == "startup":
        from bench.gui_startup_child import startup

        return startup(project)
    if mode == "keystroke":
        return _run(keystroke, project, int(argv[2]))
    if mode == "keystroke-complete":
        return _run(keystroke_complete, project, int(argv[2]))
    if mode == "keystroke-complete-pane":
        return _run_pane(keystroke_complete, project, int(argv[2]))
    if mode == "stall-load":
        return _run(stall_load, project, int(argv[2]), float(argv[3]))
    if mode == "stall-preview":
        return _run(stall_preview, project, float(argv[2]))
    if mode == "preview-latency":
        return _run(preview_latency, project, int(argv[2]))
    raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
