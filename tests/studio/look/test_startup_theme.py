"""The theme is applied before the window is built: the same look as applying it to a built window, without
the re-polish; applying it again changes nothing."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from studio.app import run_app
from studio.document.recovery import RECOVERY_DIR_ENV
from studio.look.theme import apply_theme, current_theme, is_dark
from studio.preferences.settings import SETTINGS_ENV
from studio.shell.main_window import MainWindow

WAIT_MS = 15_000


@pytest.fixture
def app(qapp):
    """The application; whatever a test applies, the platform's look is back afterwards."""
    yield qapp
    apply_theme(qapp, "system")


@pytest.mark.parametrize("name", ["light", "dark"])
def test_applying_the_same_theme_again_keeps_the_style_and_palette(app, name):
    apply_theme(app, name)
    style, palette = app.style(), app.palette()
    apply_theme(app, name)
    assert app.style() is style and app.palette() == palette and current_theme(app) == name
    other = "dark" if name == "light" else "light"
    apply_theme(app, other)  # a switch still switches
    assert is_dark(app.palette()) == (other == "dark") and current_theme(app) == other


def _window_image(make_window, project_file, qtbot, *, theme_first: str | None, theme_after: str | None) -> QImage:
    if theme_first is not None:
        apply_theme(QApplication.instance(), theme_first)
    window = make_window()
    if theme_after is not None:
        window.set_theme(theme_after, remember=False)
    window.open_project(project_file)
    window.resize(1100, 700)
    window.show()
    qtbot.waitExposed(window)
    window.catalogue.select("ticket")
    QApplication.processEvents()
    image = window.grab().toImage()
    window.close()
    return image


@pytest.mark.parametrize("name", ["light", "dark"])
def test_a_window_built_in_a_theme_looks_like_one_switched_to_it(app, make_window, project_file, qtbot, name):
    apply_theme(app, "system")
    switched = _window_image(make_window, project_file, qtbot, theme_first=None, theme_after=name)
    apply_theme(app, "system")
    built_in = _window_image(make_window, project_file, qtbot, theme_first=name, theme_after=name)
    assert built_in.size() == switched.size()
    width, height = built_in.width(), built_in.height()
    colours = {built_in.pixel(x, y) for x in range(0, width, 23) for y in range(0, height, 23)}
    assert len(colours) > 5  # a rendered window, not a blank image
    assert built_in == switched


@pytest.fixture
def private_settings(tmp_path, monkeypatch):
    monkeypatch.setenv(SETTINGS_ENV, str(tmp_path / "settings.ini"))
    monkeypatch.setenv(RECOVERY_DIR_ENV, str(tmp_path / "recovery"))


def test_run_app_opens_the_window_in_the_theme_asked_for(app, project_file, private_settings):
    seen: dict[str, object] = {}

    def look() -> None:
        windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        if not windows:
            QTimer.singleShot(20, look)
            return
        window = windows[0]
        marked = window.commands.theme_actions["dark"].isChecked()
        seen.update(theme=current_theme(), dark=is_dark(QApplication.palette()), marked=marked,
                    remembered=window.settings.theme())  # fmt: skip
        window.close()

    QTimer.singleShot(0, look)
    assert run_app(str(project_file), theme="dark") == 0
    # This run only: what View > Theme remembers is untouched.
    assert seen == {"theme": "dark", "dark": True, "marked": True, "remembered": "system"}
