"""The Qt binding in use keeps None alive through many void calls (PySide6 6.12 on 3.11 did not)."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from resources_qt.qt.compat import guard_none_refcount


def test_void_calls_do_not_drain_none(qtbot: QtBot) -> None:
    label = QLabel()
    qtbot.addWidget(label)
    guarded = guard_none_refcount()
    before = sys.getrefcount(None)
    for _ in range(20_000):
        label.setText("x")
    after = sys.getrefcount(None)
    # Either the binding is sound, or the guard gave None far more headroom
    # than any session can drain.
    assert before - after < 1_000 or (guarded and after > 1 << 39)


def test_the_pyside_version_is_read_from_its_wheel_as_importlib_metadata_reads_it() -> None:
    from importlib import metadata

    from resources_qt.qt.compat import _pyside_version

    expected = tuple(int(part) for part in metadata.version("PySide6-Essentials").split(".")[:2])
    assert _pyside_version() == expected


def test_the_guard_imports_neither_importlib_metadata_nor_ctypes() -> None:
    # Both cost start-up time (10-17 ms and 3 ms) on every start; the guard needs them only on 6.12 / < 3.12.
    import subprocess

    code = ("import sys, resources_qt; before = set(sys.modules); import resources_qt.qt.compat as c; "
            "c.guard_none_refcount(); new = set(sys.modules) - before; "
            "print(sorted({'importlib.metadata', 'ctypes'} & new))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
