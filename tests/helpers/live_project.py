"""A served live-data project for tests and the bench: a notes folder, its server, live data and pool."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from resources_qt.live import DataChanged, LiveData, LiveEvent
from resources_qt.project import Project, load_project
from resources_qt.server import ResourceServer
from resources_qt.server.factory import build_server
from resources_qt.snippets import SnippetPool, bind_project, create_pool

NOTES_PROJECT = """format = 1

[server]
name = "live-notes"
notifications = true
subscriptions = true
reader_timeout = 5.0

[[resources]]
name = "note"
uri_template = "notes://{{+path}}"
mime_type = "text/markdown"
watch = {{ files = ["notes"] }}
instances = '''
def instances():
    folder = PROJECT_DIR / "notes"
    return [{{"path": p.relative_to(folder).as_posix(), "title": p.stem}} for p in sorted(folder.rglob("*.md"))]
'''
reader = '''
def read(uri, params):
    # Snippets run in the project's folder.
    with open("notes/" + params["path"]) as handle:
        return handle.read()
'''

[[resources]]
name = "index"
uri = "notes-index://all"
mime_type = "text/plain"
watch = {{ files = ["index.txt"] }}
reader = '''
def read(uri, params):
    return (PROJECT_DIR / "index.txt").read_text()
'''
{extra}"""


@dataclass
class Served:
    """A started server with live data over a project folder; `changes` collects DataChanged events."""

    root: Path
    project: Project
    pool: SnippetPool
    server: ResourceServer
    live: LiveData
    url: str
    events: list[LiveEvent] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def changes(self, name: str) -> list[DataChanged]:
        with self.lock:
            return [e for e in self.events if isinstance(e, DataChanged) and e.resource == name]


def write_notes_project(root: Path, *, extra: str = "") -> Path:
    (root / "notes").mkdir(parents=True, exist_ok=True)
    (root / "notes" / "a.md").write_text("# A\n")
    (root / "notes" / "b.md").write_text("# B\n")
    (root / "index.txt").write_text("a b\n")
    path = root / "notes.toml"
    path.write_text(NOTES_PROJECT.format(extra=extra))
    return path


@contextmanager
def serve_live(path: Path, *, quiet_ms: int = 150, **live_options: int) -> Iterator[Served]:
    project = load_project(path)
    pool = create_pool(project)
    pool.start()
    resources = bind_project(project, pool)
    server = build_server(project, resources)
    live = LiveData(server, project, pool, quiet_ms=quiet_ms, **live_options)
    served = Served(path.parent, project, pool, server, live, "")

    def keep(event: LiveEvent) -> None:
        with served.lock:
            served.events.append(event)

    live.add_listener(keep)
    try:
        served.url = server.start_http(port=0)
        live.start()
        assert live.wait_ready(10), "the file watcher did not start"
        yield served
    finally:
        live.close()
        server.close()
        pool.close()
