"""Fixtures for the editing widgets: a document over a small project with both kinds of resources."""

from __future__ import annotations

from typing import Any

import pytest

import studio.widgets  # noqa: F401 - applies the PySide6/Python 3.11 None refcount workaround first
from resources_qt.project import Project, loads_project
from resources_qt.server.reading import PreviewOutcome
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


def Outcome(
    uri: str,
    resource_name: str | None = None,
    is_template: bool = False,
    template: str | None = None,
    params: dict[str, Any] | None = None,
    contents: list[Any] | None = None,
    elapsed_ms: float = 1.5,
    **error: Any,
) -> PreviewOutcome:
    """The engine's real PreviewOutcome, with defaults for the fields a test does not care about."""
    return PreviewOutcome(
        uri=uri,
        resource_name=resource_name,
        is_template=is_template,
        template=template,
        params=params or {},
        contents=contents,
        elapsed_ms=elapsed_ms,
        **error,
    )


@pytest.fixture
def project() -> Project:
    return loads_project(PROJECT_TOML)


@pytest.fixture
def document(project: Project) -> ProjectDocument:
    return ProjectDocument(project)
