"""Fixtures for the studio's window tests: an isolated window factory, a project file, SDK clients."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.studio_client import BackgroundClient
from helpers.widget_project import PROJECT_TOML

from resources_qt.project import Project, ResourceSpec, ServerSettings, loads_project, save_project
from studio.document.document import ProjectDocument
from studio.document.recovery import RecoveryStore
from studio.preferences.settings import StudioSettings
from studio.shell.main_window import MainWindow, UnsavedChoice

WAIT_MS = 15_000


def desk_project() -> Project:
    return Project(
        server=ServerSettings(name="Test Desk", notifications=True, subscriptions=True, reader_timeout=10.0),
        prelude="GREETING = 'hello'\n",
        resources=[
            ResourceSpec(
                name="readme",
                title="Read me",
                uri="docs://readme",
                mime_type="text/markdown",
                reader="def read(uri, params):\n    return f'# {GREETING} from {uri}'\n",
            ),
            ResourceSpec(
                name="ticket",
                uri_template="tickets://{id}",
                mime_type="application/json",
                samples=["tickets://7"],
                completions={"id": ["7", "8"]},
                reader="def read(uri, params):\n    return {'id': params['id'], 'status': 'open'}\n",
            ),
        ],
    )


@pytest.fixture
def project_file(tmp_path: Path) -> Path:
    return save_project(desk_project(), tmp_path / "desk.toml")


@pytest.fixture
def connect(qtbot):
    """Connects background SDK clients; disconnects them at the end whatever happened."""
    clients: list[BackgroundClient] = []

    def make(url: str) -> BackgroundClient:
        client = BackgroundClient(url)
        clients.append(client)
        connected = client.start()
        qtbot.waitUntil(connected.done, timeout=WAIT_MS)
        connected.result()
        return client

    yield make
    for client in clients:
        left = client.close()
        qtbot.waitUntil(left.done, timeout=WAIT_MS)
        client.join()


@pytest.fixture
def make_window(qtbot, tmp_path):
    windows: list[MainWindow] = []
    errors: list[tuple[str, str]] = []

    def make(**options) -> MainWindow:
        options.setdefault("ask_unsaved", lambda label: UnsavedChoice.DISCARD)
        options.setdefault("ask_restore", lambda candidate: False)
        options.setdefault("report_error", lambda title, message: errors.append((title, message)))
        window = MainWindow(
            settings=StudioSettings(tmp_path / "settings.ini"), recovery=RecoveryStore(tmp_path / "recovery"), **options
        )
        window.errors = errors
        qtbot.addWidget(window)
        windows.append(window)
        return window

    yield make
    for window in windows:
        window.shutdown()


@pytest.fixture
def project() -> Project:
    """The widget tests' small project (both kinds of resources)."""
    return loads_project(PROJECT_TOML)


@pytest.fixture
def document(project: Project) -> ProjectDocument:
    return ProjectDocument(project)
