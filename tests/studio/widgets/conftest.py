"""Fixtures for the editing widgets: a document over a small project with both kinds of resources."""

from __future__ import annotations

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



@pytest.fixture
def project() -> Project:
    return loads_project(PROJECT_TOML)


@pytest.fixture
def document(project: Project) -> ProjectDocument:
    return ProjectDocument(project)
