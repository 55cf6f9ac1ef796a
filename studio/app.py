"""Start the studio: the Qt application, the qasync loop for the GUI's async work, and the window."""

from __future__ import annotations

import asyncio
import logging
import sys
from importlib import resources
from pathlib import Path

logger = logging.getLogger(__name__)

from resources_qt.address import parse_http_address

__all__ = ["DEFAULT_EXAMPLE", "bundled_example", "parse_http", "run_app"]

DEFAULT_EXAMPLE = "support_desk.toml"
_SOURCE_EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def bundled_example(name: str = DEFAULT_EXAMPLE) -> Path | None:
    """The example project shipped in the `resource_studio_examples` data package, if present."""
    candidates: list[Path] = []
    try:
        candidates.append(Path(str(resources.files("resource_studio_examples"))) / name)
    except (ModuleNotFoundError, TypeError):
        pass
    candidates.append(_SOURCE_EXAMPLES / name)  # a checkout that is not pip-installed
    return next((path for path in candidates if path.is_file()), None)


def parse_http(value: str) -> tuple[str, int]:
    """`[HOST:]PORT` as (host, port); the host defaults to the loopback address."""
    return parse_http_address(value)


def run_app(project: str | None = None, http: str | None = None, stdio: bool = False) -> int:
    """Open the studio window; with `http` or `stdio`, serve the project at once. Returns the exit code."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    endpoint = None
    if http:
        try:
            endpoint = parse_http(http)
        except ValueError as exc:
            print(f"resource-studio: {exc}", file=sys.stderr)
            return 2
    if http and stdio:
        print("resource-studio: choose one of --http and --stdio (the window serves one transport at a time)",
              file=sys.stderr)  # fmt: skip
        return 2
    if project and not Path(project).is_file():
        print(f"resource-studio: no such project file: {project}", file=sys.stderr)
        return 2

    import qasync
    from PySide6.QtWidgets import QApplication

    from resources_qt.qt.gc_guard import GuiThreadCollector
    from studio.icons import icon
    from studio.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("Resource Studio")
    app.setOrganizationName("Resource Studio")
    app.setApplicationDisplayName("Resource Studio")
    app.setWindowIcon(icon("app"))
    app.setQuitOnLastWindowClosed(True)
    # The server and pool threads must never run a collection that frees a widget.
    collector = GuiThreadCollector(app)
    collector.install()

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    window = MainWindow()
    try:
        window.open_initial(Path(project) if project else None)
        window.show()
        if stdio:
            window.start_stdio()
        if endpoint is not None:
            window.start_http(*endpoint)
        closed = asyncio.Event()
        app.aboutToQuit.connect(closed.set)
        with loop:
            loop.run_until_complete(closed.wait())
    finally:
        window.shutdown()
        collector.uninstall()
        asyncio.set_event_loop(None)
    return 0
