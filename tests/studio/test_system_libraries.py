"""A missing system library of Qt's X11 plugin is one line naming it and its package, not a Qt abort."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from studio.system_libraries import debian_package, missing_libraries, platform_problem

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc to build a library with a gap")


def build_plugin_missing(folder: Path, soname: str) -> Path:
    """A real shared library `libqxcb.so` that links against `soname`, which is then removed."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "gone.c").write_text("int gone(void) { return 7; }\n")
    (folder / "plugin.c").write_text("int gone(void);\nint plugin(void) { return gone(); }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(folder / soname), f"-Wl,-soname,{soname}",
                    str(folder / "gone.c")], check=True)  # fmt: skip
    plugin = folder / "libqxcb.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(plugin), str(folder / "plugin.c"), f"-L{folder}",
                    f"-l:{soname}"], check=True)  # fmt: skip
    (folder / soname).unlink()
    return plugin


def test_the_first_missing_library_is_named_with_its_debian_package(tmp_path: Path) -> None:
    plugin = build_plugin_missing(tmp_path / "platforms", "libxcb-gonetest.so.0")
    assert missing_libraries(plugin) == ["libxcb-gonetest.so.0"]
    problem = platform_problem({"QT_QPA_PLATFORM": "xcb", "QT_QPA_PLATFORM_PLUGIN_PATH": str(plugin.parent)})
    assert problem is not None and "libxcb-gonetest.so.0 is missing" in problem
    assert "apt-get install libxcb-gonetest0 " in problem
    assert debian_package("libxkbcommon-x11.so.0") == "libxkbcommon-x11-0"
    assert debian_package("libEGL.so.1") == "libegl1"


def test_a_loadable_plugin_or_another_platform_is_no_problem(tmp_path: Path) -> None:
    assert platform_problem({"QT_QPA_PLATFORM": "offscreen"}) is None
    assert platform_problem({"QT_QPA_PLATFORM": "xcb"}) is None  # this machine has the libraries (CI installs them)


def test_the_studio_says_it_in_one_line_and_exits_without_a_traceback(tmp_path: Path) -> None:
    plugin = build_plugin_missing(tmp_path / "platforms", "libxcb-gonetest.so.0")
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "QT_QPA_PLATFORM_PLUGIN_PATH": str(plugin.parent),
           "RESOURCE_STUDIO_SETTINGS": str(tmp_path / "settings.ini"),
           "RESOURCE_STUDIO_RECOVERY_DIR": str(tmp_path / "recovery")}  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "studio"], env=env, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "libxcb-gonetest.so.0 is missing" in lines[0], done.stderr
    assert "Traceback" not in done.stderr
