"""Fixtures for the editing widgets: a document over a small project with both kinds of resources."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

import studio.widgets  # noqa: F401 - applies the PySide6/Python 3.11 None refcount workaround first
from resources_qt.project import Project, loads_project
from studio.document import ProjectDocument

PROJECT_TOML = '''
format = 1

[server]
name = "Widget tests"

[[resources]]
name = "readme"
title = "Read me"
uri = "docs://readme"
mime_type = "text/markdown"
reader = """def read(uri, params):
    return "# Hello"
"""

[[resources]]
name = "config"
uri = "docs://config"
mime_type = "application/json"
reader = """def read(uri, params):
    return {"a": 1}
"""

[[resources]]
name = "notes"
uri_template = "notes://{folder}/{id}"
mime_type = "application/json"
samples = ["notes://work/42", "notes://home/7"]
completions = { folder = ["work", "home", "archive"] }
reader = """def read(uri, params):
    return params
"""
'''


@dataclass
class Outcome:
    """Shaped like the facade's PreviewOutcome (the widgets only read these fields)."""

    uri: str
    resource_name: str | None = None
    is_template: bool = False
    template: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    contents: list[Any] | None = None
    error_code: int | None = None
    error_message: str | None = None
    error_data: Any = None
    elapsed_ms: float = 1.5


@pytest.fixture
def project() -> Project:
    return loads_project(PROJECT_TOML)


@pytest.fixture
def document(project: Project) -> ProjectDocument:
    return ProjectDocument(project)
