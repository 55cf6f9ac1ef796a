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
