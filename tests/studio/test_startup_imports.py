"""The window's first paint must not wait for the SDK's client and server stack (checked in fresh processes)."""

from __future__ import annotations

import os
import subprocess
import sys

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
        "studio.widgets.preview", "studio.widgets.content_view", "studio.widgets.snippet_output",
        "studio.widgets.renderers", "resources_qt.project",
    ) == "[]"


def test_the_main_window_module_imports_without_the_sdk_stack() -> None:
    assert _sdk_modules_after_importing("studio.main_window") == "[]"
