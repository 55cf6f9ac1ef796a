"""Start the studio: the Qt application, the qasync loop for the GUI's async work, and the window."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

from resources_qt.address import parse_http_address

logger = logging.getLogger(__name__)

__all__ = ["GUI_SWITCH_INTERVAL", "THEME_CHOICES", "parse_http", "run_app"]

THEME_CHOICES = ("system", "light", "dark")

GUI_SWITCH_INTERVAL = 0.001
"""Seconds a thread holds the GIL before another that waits for it gets a turn, while the window is open.

Python's 5 ms default starved the GUI thread whenever a background thread of this process ran Python
(the preview preparing 10 MB of JSON): every call Qt makes back into Python (a timer, each line's
highlighting as a chunk of text goes in) waited its turn, and the window stalled 31-134 ms; with 1 ms,
16-35 ms over 8 runs (`bench.gui_bench`, 10 MB JSON preview)."""


def parse_http(value: str) -> tuple[str, int]:
    """`[HOST:]PORT` as (host, port); the host defaults to the loopback address."""
    return parse_http_address(value)


def run_app(
    project: str | None = None, http: str | None = None, stdio: bool = False, *, theme: str | None = None,
    remote: tuple[str, str, str] | None = None,
) -> int:
    """Open the studio window; with `http`, `stdio` or both, serve the project at once. Returns the exit code.

    With `stdio` the window serves the client that launched it (HTTP, started here or from the
    Server page, serves beside it from the same server); the studio keeps running when that client
    leaves, until the window is closed.

    `theme` ("system", "light", "dark") applies for this run only; without it the remembered theme is used.
    `remote` (target, token, era): connect to that server at once (`resource-studio connect`).
    """
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    endpoint = None
    if http:
        try:
            endpoint = parse_http(http)
        except ValueError as exc:
            print(f"resource-studio: {exc}", file=sys.stderr)
            return 2
    if project and not Path(project).is_file():
        print(f"resource-studio: no such project file: {project}", file=sys.stderr)
        return 2
    if theme is not None and theme not in THEME_CHOICES:
        print(f"resource-studio: --theme: expected one of {', '.join(THEME_CHOICES)}, got {theme!r}",
              file=sys.stderr)  # fmt: skip
        return 2

    from studio.system_libraries import platform_problem

    problem = platform_problem()
    if problem is not None:
        print(problem, file=sys.stderr)
        return 1

    import qasync
    from PySide6.QtWidgets import QApplication

    from resources_qt.qt.gc_guard import FREEZE_DELAY_MS, GuiThreadCollector
    from studio.look.icons import icon
    from studio.look.theme import apply_theme
    from studio.preferences.settings import StudioSettings
    from studio.shell.main_window import MainWindow

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName("Resource Studio")
    app.setOrganizationName("Resource Studio")
    app.setApplicationDisplayName("Resource Studio")
    app.setWindowIcon(icon("app"))
    app.setQuitOnLastWindowClosed(True)
    # The server and pool threads must never run a collection that frees a widget.
    collector = GuiThreadCollector(app)
    collector.install()
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(GUI_SWITCH_INTERVAL)

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    settings = StudioSettings()
    # A --theme is for this run: the remembered choice stays what the user picked in View > Theme.
    theme_name = theme or settings.theme()
    # Before any widget exists: applied to the built window, light and dark re-polished all of it
    # (25-30 ms, and the first paint another 20 ms later).
    apply_theme(app, theme_name)
    window = MainWindow(settings=settings)
    settings.setParent(window)
    window.set_theme(theme_name, remember=False)  # the View menu's mark; the theme is already on
    try:
        window.open_initial(Path(project) if project else None)
        window.show()
        collector.freeze_later(FREEZE_DELAY_MS)
        window.controller.server_started.connect(collector.freeze_after_first_start)
        if stdio:
            window.start_stdio()
        if endpoint is not None:
            window.start_http(*endpoint)
        if remote is not None:
            target, token, era = remote
            window.connect_remote(target, token=token, era=era)
        closed = asyncio.Event()
        app.aboutToQuit.connect(closed.set)
        with loop:
            loop.run_until_complete(closed.wait())
    finally:
        window.shutdown()
        collector.uninstall()  # and unfreezes: an in-process caller (a test, a script) gets its collector back
        sys.setswitchinterval(switch_interval)
        asyncio.set_event_loop(None)
    return 0
