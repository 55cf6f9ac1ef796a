"""A project whose `instances` snippet logs each run to a file: how tests and the bench count the runs."""

from __future__ import annotations

from pathlib import Path

from resources_qt.project import Project, load_project

COUNTED_PROJECT = """format = 1

[server]
name = "counted"
page_size = {page_size}
reader_timeout = 5.0
notifications = true
subscriptions = true

[[resources]]
name = "victim"
uri = "plain://victim"
mime_type = "text/plain"
reader = "def read(uri, params):\\n    return 'victim'\\n"

[[resources]]
name = "item"
uri_template = "items://{{id}}"
mime_type = "text/plain"
watch = {{ files = ["data"] }}
instances = '''
import time
def instances():
    with open(PROJECT_DIR / "runs.log", "a") as log:
        log.write("{tag}\\n")
    time.sleep({sleep})
    names = sorted(p.name for p in (PROJECT_DIR / "data").iterdir())
    return [{{"id": f"{tag}.{{n}}.{{i}}", "title": f"item {{i}}"}} for n in names for i in range({count})]
'''
reader = '''
def read(uri, params):
    return params["id"]
'''
"""


def write_counted_project(root: Path, *, tag: str = "v1", count: int = 25, sleep: float = 0.0,
                          page_size: int = 10) -> Path:
    """`root`/counted.toml: template `item` lists `count` instances per file of `root`/data, ids
    `<tag>.<file>.<i>`, after sleeping `sleep` s; every run appends `tag` to `root`/runs.log."""
    (root / "data").mkdir(parents=True, exist_ok=True)
    if not any((root / "data").iterdir()):
        (root / "data" / "a").write_text("a")
    path = root / "counted.toml"
    path.write_text(COUNTED_PROJECT.format(tag=tag, count=count, sleep=sleep, page_size=page_size))
    return path


def edited(root: Path, *, tag: str, count: int = 25, sleep: float = 0.0, page_size: int = 10) -> Project:
    """The project after its snippet is edited (rewritten and loaded again), for `LiveData.set_project`."""
    return load_project(write_counted_project(root, tag=tag, count=count, sleep=sleep, page_size=page_size))


def runs(root: Path, tag: str | None = None) -> int:
    """Runs of the snippet so far (of the version tagged `tag`)."""
    log = root / "runs.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return len(lines) if tag is None else lines.count(tag)
