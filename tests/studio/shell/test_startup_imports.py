"""The window's first paint must not wait for the SDK's client and server stack (checked in fresh processes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_CHECK = """
import sys
import {modules}
loaded = sorted(m for m in sys.modules if m == "mcp" or m.startswith(("mcp.client", "mcp.server")))
print(loaded)
"""


def _sdk_modules_after_importing(*modules: str) -> str:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run([sys.executable, "-c", _CHECK.format(modules=", ".join(modules))], capture_output=True,
                            text=True, timeout=60, check=False, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_preview_and_content_widgets_import_without_the_sdk_stack() -> None:
    assert _sdk_modules_after_importing(
        "studio.preview.preview", "studio.preview.content_view", "studio.preview.snippet_output",
        "studio.preview.renderers", "resources_qt.project",
    ) == "[]"


def test_the_main_window_module_imports_without_the_sdk_stack() -> None:
    assert _sdk_modules_after_importing("studio.shell.main_window") == "[]"


_WINDOW = """
import json, sys, time
from pathlib import Path
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication
from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project
from resources_qt.project.model import WatchSpec
from studio.shell.main_window import MainWindow, UnsavedChoice
from studio.document.recovery import RecoveryStore
from studio.preferences.settings import StudioSettings

app = QApplication([])
home = Path(sys.argv[1])
reader = "def read(uri, params):\\n    return 'hi'\\n"
path = save_project(Project(server=ServerSettings(name="first paint", workers=1), resources=[
    ResourceSpec(name="plain", uri="demo://plain", mime_type="text/plain", reader=reader),
    ResourceSpec(name="polled", uri="demo://polled", mime_type="text/plain", reader=reader,
                 watch=WatchSpec(interval=30.0)),
    ResourceSpec(name="item", uri_template="demo://items/{id}", mime_type="text/plain", reader=reader),
    ResourceSpec(name="broken", uri="", mime_type="text/plain", reader=reader),
]), home / "first.toml")
errors = []
window = MainWindow(settings=StudioSettings(home / "settings.ini"), recovery=RecoveryStore(home / "recovery"),
                    ask_unsaved=lambda label: UnsavedChoice.DISCARD, ask_restore=lambda candidate: False,
                    report_error=lambda title, message: errors.append(title))
window.open_project(path, ask_to_save=False)
ctl = window.controller
before = {"mcp": "mcp" in sys.modules, "models": "mcp_types" in sys.modules,
          "served": window.sync.served_names(), "held": window.sync.held_back(),
          "watching": ctl.watching(), "running": ctl.is_running, "built": ctl.engine_built}
# An edit re-lists the resource on the GUI thread: comparing listings must not load the SDK's models.
from dataclasses import replace
plain = window.document.spec("plain")
window.document.update_resource("plain", replace(plain, reader=plain.reader + "# edited\\n", title="Plain"))
before["models after an edit"] = "mcp_types" in sys.modules
at_expose = {}


class Exposed(QObject):
    def eventFilter(self, watched, event):
        if (not at_expose and event.type() == QEvent.Type.Expose and watched is window.windowHandle()
                and watched.isExposed()):
            at_expose.update(mcp="mcp" in sys.modules, models="mcp_types" in sys.modules, built=ctl.engine_built,
                             tomlkit="tomlkit" in sys.modules)
        return False


app.installEventFilter(watch := Exposed())
window.show()  # the first expose schedules the warm-up
app.processEvents()


def wait(condition):
    deadline = time.monotonic() + 30
    while not condition() and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.01)


wait(lambda: window._warmed_up)  # the window's own flag: the warm-up ran
warmed = {"mcp": "mcp" in sys.modules, "built": ctl.engine_built, "at_expose": at_expose}
window.start_http("127.0.0.1", 0)
wait(lambda: window.server_control.running)
after = {"mcp": "mcp" in sys.modules, "built": ctl.engine_built, "running": ctl.is_running,
         "served": window.sync.served_names(), "watching": ctl.watching()}
window.shutdown()
print(json.dumps({"before": before, "warmed": warmed, "after": after, "errors": errors}))
"""


def test_the_window_with_a_project_is_up_and_warmed_up_before_the_sdk_loads(tmp_path: Path) -> None:
    # About 3 s: a fresh interpreter has to import Qt, the window and then the SDK (the point of the test).
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run([sys.executable, "-c", _WINDOW, str(tmp_path)], capture_output=True, text=True,
                            timeout=60, check=False, env=env)  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    # Constructed, project opened and served: what the window reads answers without the engine.
    # Nor its models (mcp_types, pydantic: about 0.3 s): nothing before the first paint needs them.
    assert report["before"] == {"mcp": False, "models": False, "models after an edit": False,
                                "served": ["item", "plain", "polled"], "held": ["broken"],
                                "watching": {"polled": "interval"}, "running": False, "built": False}  # fmt: skip
    # The warm-up after the first paint starts the workers only; the first start builds the engine.
    # tomlkit (which edits a changed table in place) waits for the first save that needs it.
    assert report["warmed"] == {"mcp": False, "built": False,
                                "at_expose": {"mcp": False, "models": False, "built": False, "tomlkit": False}}
    assert report["after"] == {"mcp": True, "built": True, "running": True, "served": ["item", "plain", "polled"],
                               "watching": {"polled": "interval"}}  # fmt: skip
    assert report["errors"] == []


def test_the_tests_page_imports_without_the_sdk_stack() -> None:
    # Built on Ctrl+5: the first opening must not stall for the SDK, which only a run needs.
    assert _sdk_modules_after_importing(
        "studio.tests_page.tests_view", "studio.tests_page.tests_model", "resources_qt.qt.tests_runner",
    ) == "[]"
