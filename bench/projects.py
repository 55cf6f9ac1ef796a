"""Project files the benchmarks serve or open, written with the core's own save_project."""

from __future__ import annotations

from pathlib import Path

from bench.sdk_server import SMALL_TEXT, SMALL_URI
from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project

SMALL_READER = f"def read(uri, params):\n    return {SMALL_TEXT!r}\n"


def small_project(path: Path) -> Path:
    """One small text resource whose reader is a snippet (the same text the SDK baseline returns)."""
    spec = ResourceSpec(name="small", uri=SMALL_URI, mime_type="text/plain", reader=SMALL_READER)
    project = Project(server=ServerSettings(name="studio-bench", subscriptions=True, notifications=True),
                      resources=[spec])
    return save_project(project, path)


def many_resources_project(path: Path, count: int) -> Path:
    """`count` direct resources with short snippet readers, plus a few templates, as a user might build."""
    specs = [
        ResourceSpec(
            name=f"doc{i:05d}",
            title=f"Document {i}",
            description=f"Benchmark document number {i}",
            uri=f"docs://library/doc{i:05d}",
            mime_type="text/plain",
            reader=f"def read(uri, params):\n    return 'document {i}'\n",
        )
        for i in range(count)
    ]
    specs += [
        ResourceSpec(name=f"item{i}", uri_template=f"items{i}://{{id}}", mime_type="application/json",
                     samples=[f"items{i}://1"], reader="def read(uri, params):\n    return {'id': params['id']}\n")
        for i in range(5)
    ]
    return save_project(Project(server=ServerSettings(name=f"bench-{count}"), resources=specs), path)
