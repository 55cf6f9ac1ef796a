"""`resource-studio connect TARGET` opens the window connected to that server (the Remote page shown)."""

from __future__ import annotations

import time

import pytest
from helpers.remote_servers import script_command
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from studio.cli import main
from studio.document.recovery import RECOVERY_DIR_ENV
from studio.preferences.settings import SETTINGS_ENV
from studio.shell.main_window import MainWindow


@pytest.fixture
def private_settings(tmp_path, monkeypatch):
    monkeypatch.setenv(SETTINGS_ENV, str(tmp_path / "settings.ini"))
    monkeypatch.setenv(RECOVERY_DIR_ENV, str(tmp_path / "recovery"))


def test_connect_opens_the_window_connected(qapp, private_settings) -> None:
    seen: dict[str, object] = {}
    deadline = time.monotonic() + 60

    def poll() -> None:
        windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        ready = windows and windows[0].remote.page.catalogue.model().rowCount() == 3
        if windows and (ready or time.monotonic() > deadline):
            window = windows[0]
            seen["page"] = window.current_page
            seen["server"] = window.remote.page.server_label.text()
            seen["rows"] = window.remote.page.catalogue.model().rowCount()
            window.close()
        else:
            QTimer.singleShot(50, poll)

    QTimer.singleShot(0, poll)
    assert main(["connect", script_command("sdk"), "--era", "handshake"]) == 0
    assert seen["page"] == "remote" and seen["rows"] == 3
    assert "remote-sdk 3.1" in str(seen["server"]) and "handshake" in str(seen["server"])


def test_connect_needs_a_target(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["connect"])
    assert "target" in capsys.readouterr().err
