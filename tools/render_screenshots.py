"""Render screenshots of the studio's main views into docs/screenshots/ (offscreen, or under Xvfb).

    python tools/render_screenshots.py [PROJECT] [--out docs/screenshots] [--size 1920x1080]

Opens the real window at 1280x800 (or --size; other sizes' shots are named main_window*_1920x1080.png)
on a project (the bundled example by default), previews a template, starts the HTTP server on a free
port, connects an SDK client that lists, reads and subscribes, then grabs every page of the window
(the Remote page connected to that server) in the light and the dark theme (and a template's Instances
tab with the builder's "Live data" group unfolded: main_window_live*.png). Settings and recovery files go
to a temporary folder, so the user's own are never touched.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _client_session(url: str, uris: list[str], done: threading.Event, stop: threading.Event) -> None:
    """A real client that lists, reads and subscribes, then stays connected until `stop` is set."""
    from mcp import Client

    async def main() -> None:
        async with Client(url, mode="legacy", read_timeout_seconds=15) as client:
            await client.list_resources()
            await client.list_resource_templates()
            for uri in uris:
                with contextlib.suppress(Exception):  # errors are part of the traffic worth showing
                    await client.read_resource(uri)
            if uris:
                with contextlib.suppress(Exception):  # the example may not enable subscriptions
                    await client.subscribe_resource(uris[0])
            done.set()
            # A trickle of reads while the pages are shot: the Server page's charts have seconds to show.
            for uri in itertools.cycle(uris or [""]):
                if stop.is_set():
                    break
                if uri:
                    with contextlib.suppress(Exception):
                        await client.read_resource(uri)
                await asyncio.sleep(0.2)

    loop = asyncio.SelectorEventLoop()
    try:
        loop.run_until_complete(main())
    except Exception as exc:
        print(f"client failed: {exc}", file=sys.stderr)
        done.set()
    finally:
        loop.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", nargs="?", help="project file (default: the bundled example)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"), help="output folder")
    parser.add_argument("--size", default="1280x800", help="window size, WIDTHxHEIGHT (default 1280x800)")
    options = parser.parse_args(argv)
    width, height = (int(part) for part in options.size.lower().split("x"))
    size_suffix = "" if (width, height) == (1280, 800) else f"_{width}x{height}"
    if not os.environ.get("DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    scratch = Path(tempfile.mkdtemp(prefix="studio-shots-"))
    os.environ["RESOURCE_STUDIO_SETTINGS"] = str(scratch / "settings.ini")
    os.environ["RESOURCE_STUDIO_RECOVERY_DIR"] = str(scratch / "recovery")

    from PySide6.QtCore import QCoreApplication, QEventLoop
    from PySide6.QtWidgets import QApplication, QWidget

    app = QApplication([sys.argv[0]])
    app.setApplicationName("Resource Studio")
    from studio.look.icons import icon
    from studio.shell.main_window import MainWindow, UnsavedChoice
    from studio.shell.project_files import bundled_example

    app.setWindowIcon(icon("app"))
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)

    def pump(seconds: float, until: Any = None) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
            if until is not None and until():
                return True
            time.sleep(0.01)
        return until is None

    def shoot(widget: QWidget, name: str) -> None:
        path = out / f"{name}{size_suffix}.png"
        widget.grab().save(str(path))
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")

    from studio.look.theme import apply_theme

    apply_theme(app, "light")  # one look whatever the machine's desktop uses
    window = MainWindow(ask_unsaved=lambda label: UnsavedChoice.DISCARD, ask_restore=lambda candidate: False)
    project = Path(options.project) if options.project else bundled_example()
    if project is None:
        print("no project given and no bundled example found", file=sys.stderr)
        return 1
    if options.project:
        window.open_project(project)
    else:
        window.open_example(project)
    window.resize(width, height)
    window.show()
    pump(0.5)

    document = window.document
    specs = list(document.project.resources)
    template = next((spec.name for spec in specs if spec.is_template), None)
    direct = [spec.uri for spec in specs if not spec.is_template]
    target = template or (document.names()[0] if document.names() else None)
    if target:
        window.catalogue.select(target)
        pump(0.3)
        window.commands.preview.trigger()
        preview = window.editor.preview
        pump(10.0, until=lambda: any(view.is_ready for view in preview.content_views())
             or preview.pages.currentWidget() is preview.error_view)  # fmt: skip
        pump(0.5)

    server = document.project.server
    if not (server.notifications and server.subscriptions):
        window.server_panel.notifications_check.setChecked(True)
        window.server_panel.subscriptions_check.setChecked(True)
    window.start_http("127.0.0.1", 0)
    started = pump(10.0, until=lambda: window.server_panel.is_running)
    stop = threading.Event()
    client = None
    if started:
        uris = direct[:2]
        template_spec = document.peek(template) if template else None
        if template_spec is not None and template_spec.sample_uris():
            uris.append(template_spec.sample_uris()[0])
        done = threading.Event()
        client = threading.Thread(target=_client_session, args=(window.server_panel.url, uris, done, stop),
                                  daemon=True)  # fmt: skip
        client.start()
        pump(15.0, until=done.is_set)
        pump(1.0, until=lambda: window.sessions.rowCount() > 0)
        pump(0.5)
        log = window.traffic_log
        for row in range(log.proxy.rowCount()):
            if "read" in str(log.proxy.index(row, 3).data()):
                log.table.selectRow(row)
                break
        pump(0.3)
    else:
        print("the server did not start; screenshots show it stopped", file=sys.stderr)


    def shoot_pages(suffix: str) -> None:
        window.show_page("editor")
        pump(0.4)
        shoot(window, f"main_window{suffix}")
        window.set_focus_mode(False)
        window.editor.set_builder_visible(True)
        pump(0.4)
        shoot(window, f"main_window_builder{suffix}")
        # Live data: the template's Instances tab beside the builder with its "Live data" group unfolded.
        if template:
            from studio.shell.resource_editor import INSTANCES_TAB

            window.editor.form.live.set_expanded(True)
            window.editor.snippet_tabs.setCurrentIndex(INSTANCES_TAB)
            pump(0.2)
            window.editor.form_scroll.ensureWidgetVisible(window.editor.form.live.box)
            pump(0.4)
            shoot(window, f"main_window_live{suffix}")
            window.editor.form.live.set_expanded(False)
            window.editor.snippet_tabs.setCurrentIndex(0)
        window.editor.set_builder_visible(False)
        for page in ("server", "traffic", "settings", "tests"):
            window.show_page(page)
            pump(0.4)
            shoot(window, f"main_window_{page}{suffix}")
        if remote_ready:
            window.show_page("remote")
            pump(0.4)
            shoot(window, f"main_window_remote{suffix}")
        window.show_page("editor")

    # Client mode: the Remote page connected to the studio's own server, with a read shown.
    remote_ready = False
    if started:
        page = window.remote.page
        window.connect_remote(window.server_panel.url)
        if pump(15.0, until=lambda: page.catalogue.model().rowCount() > 0) and direct:
            page.select_key(direct[0])
            window.read_remote(direct[0])
            remote_ready = pump(15.0, until=lambda: page.content_tabs.count() > 0)
        pump(0.5)

    # The Tests page shows a finished run of the example's tests.
    finished: list[tuple[int, int]] = []
    window.tests_view.run_finished.connect(lambda passed, failed: finished.append((passed, failed)))
    if window.tests_view.run_all():
        deadline = time.monotonic() + 60
        while not finished and time.monotonic() < deadline:
            pump(0.1)

    apply_theme(app, "light")
    pump(0.3)
    shoot_pages("")
    apply_theme(app, "dark")
    pump(0.3)
    shoot_pages("_dark")

    stop.set()
    if client is not None:
        client.join(5)
    window.shutdown()
    window.close()
    pump(0.2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
