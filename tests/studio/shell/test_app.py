"""`resource-studio` opening the window: --http serves at once, --stdio serves the launching client."""

from __future__ import annotations

import asyncio
import gc
import os
import re
import sys
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project
from studio.app import GUI_SWITCH_INTERVAL, parse_http, run_app
from studio.document.recovery import RECOVERY_DIR_ENV
from studio.preferences.settings import SETTINGS_ENV
from studio.shell.main_window import MainWindow
from studio.shell.project_files import bundled_example

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def project_file(tmp_path: Path) -> Path:
    project = Project(
        server=ServerSettings(name="App Test"),
        resources=[ResourceSpec(name="hello", uri="hello://world", mime_type="text/plain",
                                reader="def read(uri, params):\n    return 'hi from the studio'\n")],
    )  # fmt: skip
    return save_project(project, tmp_path / "app.toml")


@pytest.fixture
def private_settings(tmp_path, monkeypatch):
    monkeypatch.setenv(SETTINGS_ENV, str(tmp_path / "settings.ini"))
    monkeypatch.setenv(RECOVERY_DIR_ENV, str(tmp_path / "recovery"))


def test_parse_http():
    assert parse_http("8765") == ("127.0.0.1", 8765)
    assert parse_http("0.0.0.0:9000") == ("0.0.0.0", 9000)
    assert parse_http("[::1]:9000") == ("::1", 9000)
    for bad in ("", "host:", "x:70000", "port"):
        with pytest.raises(ValueError, match="--http"):
            parse_http(bad)


def test_the_bundled_example_is_found_and_loads():
    example = bundled_example()
    assert example is not None and example.name == "support_desk.toml"
    from resources_qt.project import load_project

    assert load_project(example).resources


def test_run_app_rejects_a_missing_project(tmp_path, capsys):
    assert run_app(str(tmp_path / "missing.toml")) == 2
    assert "no such project file" in capsys.readouterr().err


def test_run_app_serves_http_at_once_and_shuts_down_on_close(qapp, project_file, private_settings):
    seen: dict[str, object] = {}
    deadline = time.monotonic() + 20

    def poll() -> None:
        windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        ready = windows and windows[0].server_panel.is_running and gc.get_freeze_count() > 0
        if windows and (ready or time.monotonic() > deadline):
            window = windows[0]
            seen["url"] = window.server_panel.url
            seen["title"] = window.windowTitle()
            seen["window"] = window
            seen["frozen"] = gc.get_freeze_count()
            seen["switch"] = sys.getswitchinterval()
            window.close()
        else:
            QTimer.singleShot(50, poll)

    QTimer.singleShot(0, poll)
    before = sys.getswitchinterval()
    assert run_app(str(project_file), http="127.0.0.1:0") == 0
    assert str(seen["url"]).startswith("http://127.0.0.1:") and "app.toml" in str(seen["title"])
    assert not seen["window"].controller.is_running
    assert seen["frozen"] > 0 and gc.get_freeze_count() == 0  # start-up objects frozen while the app ran
    # The GUI thread gets the GIL back quickly while the window is open; the caller's interval after it.
    assert seen["switch"] == GUI_SWITCH_INTERVAL and sys.getswitchinterval() == before


# About 6 s: a real studio process (Qt, the SDK, a snippet worker); when the stdio client leaves the window
# stays open, so the SDK's client ends it. One process covers --stdio alone and HTTP beside it.
def test_a_studio_launched_over_stdio_serves_http_beside_it(project_file, tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT),
               RESOURCE_STUDIO_SETTINGS=str(tmp_path / "s.ini"), RESOURCE_STUDIO_RECOVERY_DIR=str(tmp_path / "r"))
    params = StdioServerParameters(command=sys.executable, env=env, cwd=str(ROOT),
                                   args=["-m", "studio", str(project_file), "--stdio", "--http", "127.0.0.1:0"])
    log = tmp_path / "studio.log"

    async def session() -> tuple[str, str]:
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="legacy", read_timeout_seconds=30) as client:
                over_stdio = await client.read_resource("hello://world")
                deadline = time.monotonic() + 30
                while not (found := re.search(r"Serving (http://\S+/mcp)", log.read_text())):
                    assert time.monotonic() < deadline, log.read_text()
                    await asyncio.sleep(0.05)
                async with Client(found.group(1), mode="2026-07-28", read_timeout_seconds=30) as over_http:
                    read = await over_http.read_resource("hello://world")
                return over_stdio.contents[0].text, read.contents[0].text

    assert asyncio.run(asyncio.wait_for(session(), 60)) == ("hi from the studio", "hi from the studio")
