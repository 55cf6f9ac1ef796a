"""kill -9 during save_project, again and again: the file on disk always loads, and no temporary piles up."""

from __future__ import annotations

import random
import signal
import subprocess
import time
from pathlib import Path

import pytest
from stress_support import PYTHON, child_env, scaled

from resources_qt.project import load_project, save_project

pytestmark = pytest.mark.stress

CHILD = Path(__file__).with_name("save_loop_child.py")


def test_kill_during_save_leaves_a_loadable_project(tmp_path: Path) -> None:
    target = tmp_path / "project.toml"
    rng = random.Random(1234)
    kills = scaled(6, 60)
    names: set[str] = set()
    for _ in range(kills):
        child = subprocess.Popen(
            [PYTHON, str(CHILD), str(target)], stdout=subprocess.PIPE, env=child_env(), text=True
        )
        try:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0.0, 0.15))
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=10)
            if child.stdout is not None:
                child.stdout.close()
        assert child.returncode == -signal.SIGKILL
        project = load_project(target)
        assert project.resources, "a saved project always has resources"
        names.add(project.server.name)
        # At most the killed save's own temporary is left; the next child's first save sweeps it.
        assert len(_temporaries(tmp_path)) <= 1
    # The kills landed at different points of the loop, not always after the same save.
    assert len(names) > 1
    save_project(load_project(target))
    assert _temporaries(tmp_path) == []


def _temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != "project.toml")
