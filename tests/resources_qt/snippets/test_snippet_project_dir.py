"""Snippets run in the project's folder and see it as PROJECT_DIR (readers, preludes and instances alike)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from resources_qt.project import load_project
from resources_qt.snippets import SnippetPool, bind_project

PROJECT = """format = 1

prelude = '''
PRELUDE_SAW = str(PROJECT_DIR)
'''

[[resources]]
name = "where"
uri = "where://here"
reader = '''
import os
def read(uri, params):
    data = open("data.txt").read()
    os.chdir("/")  # must not move the next call
    return {"dir": str(PROJECT_DIR), "prelude": PRELUDE_SAW, "data": data}
'''

[[resources]]
name = "cwd"
uri = "where://cwd"
reader = '''
import os
def read(uri, params):
    return os.getcwd()
'''
"""


def test_readers_run_in_the_project_folder_and_see_project_dir(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("beside the project")
    (tmp_path / "p.toml").write_text(PROJECT)
    project = load_project(tmp_path / "p.toml")
    with SnippetPool(workers=1, timeout=5.0, memory_limit_mb=256) as pool:
        resources = bind_project(project, pool)
        assert pool.project_dir == str(tmp_path.resolve())
        first = asyncio.run(resources.get("where").read("where://here", {}))  # type: ignore[union-attr]
        after = asyncio.run(resources.get("cwd").read("where://cwd", {}))  # type: ignore[union-attr]
    assert first[0].text is not None and str(tmp_path.resolve()) in first[0].text
    assert '"prelude": "' + str(tmp_path.resolve()) in first[0].text
    assert "beside the project" in first[0].text
    assert after[0].text == str(tmp_path.resolve())


def test_without_a_project_folder_snippets_keep_the_pools_directory() -> None:
    source = "import os\ndef read(uri, params):\n    return os.getcwd() + '|' + str(PROJECT_DIR)\n"
    with SnippetPool(workers=1, timeout=5.0, memory_limit_mb=256) as pool:
        contents = asyncio.run(pool.read(key="k", source=source, uri="x://y", params={}, mime_type=""))
    cwd, project_dir = (contents[0].text or "").split("|")
    assert cwd == os.getcwd() and project_dir == os.getcwd()
