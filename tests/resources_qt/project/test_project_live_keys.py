"""Project keys for live data: `instances` and `watch`, loaded, refused and saved in place."""

from __future__ import annotations

import pytest

from resources_qt.project import ProjectError, dumps_project, loads_project
from resources_qt.project.model import WatchSpec

BASE = """format = 1

# the notes folder
[[resources]]
name = "notes"
uri_template = "notes://{+path}"
mime_type = "text/markdown"
watch = { files = ["notes/*.md"], interval = 2.5 }  # keep this comment
instances = '''
def instances():
    return [{"path": "a.md"}]
'''
reader = '''
def read(uri, params):
    return "x"
'''
"""


def test_live_keys_load() -> None:
    project = loads_project(BASE)
    spec = project.resources[0]
    assert spec.watch == WatchSpec(files=["notes/*.md"], interval=2.5)
    assert spec.instances.startswith("\ndef instances():") or spec.instances.startswith("def instances():")


def test_untouched_file_round_trips_byte_for_byte() -> None:
    assert dumps_project(loads_project(BASE)) == BASE


def test_edited_watch_is_rewritten_in_place_keeping_comments() -> None:
    project = loads_project(BASE)
    project.resources[0].watch = WatchSpec(files=["notes/**/*.md", "index.json"], interval=None)
    text = dumps_project(project)
    assert "# the notes folder" in text and "# keep this comment" in text
    again = loads_project(text)
    assert again.resources[0].watch == WatchSpec(files=["notes/**/*.md", "index.json"])
    assert again.resources[0].instances == project.resources[0].instances


def test_new_keys_are_written_readably() -> None:
    project = loads_project("format = 1\n\n[[resources]]\nname = \"n\"\nuri_template = \"n://{id}\"\n")
    spec = project.resources[0]
    spec.watch = WatchSpec(files=["data/*.csv"], interval=10.0)
    spec.instances = "def instances():\n    return []\n"
    text = dumps_project(project)
    assert 'watch = { files = ["data/*.csv"], interval = 10.0 }' in text
    assert "instances = '''\ndef instances():\n    return []\n'''" in text
    assert loads_project(text).resources[0] == spec


@pytest.mark.parametrize(
    ("watch", "words"),
    [
        ('{ files = ["../secret.txt"] }', "reaches outside the project folder"),
        ('{ files = ["data/../../x"] }', "reaches outside the project folder"),
        ('{ files = ["/etc/passwd"] }', "is absolute"),
        ('{ files = [""] }', "a pattern is empty"),
        ("{ interval = 0.05 }", "watch.interval must be between 0.1"),
        ('{ interval = "often" }', "watch.interval must be a number"),
        ("{ files = 3 }", "watch.files must be an array"),
        ("{ every = 3 }", "unknown watch key(s): every"),
    ],
)
def test_bad_watch_is_refused_naming_the_key_and_line(watch: str, words: str) -> None:
    text = f'format = 1\n\n[[resources]]\nname = "r"\nuri = "r://x"\nwatch = {watch}\n'
    with pytest.raises(ProjectError) as caught:
        loads_project(text, source="p.toml")
    message = str(caught.value)
    assert words in message
    assert message.startswith("p.toml:6:")
    assert caught.value.field == "watch"


def test_bad_watch_is_refused_even_when_loading_work_in_progress() -> None:
    text = 'format = 1\n\n[[resources]]\nname = "r"\nwatch = { files = ["../x"] }\n'
    with pytest.raises(ProjectError, match="outside the project"):
        loads_project(text, strict=False)


def test_a_pattern_matching_nothing_is_fine() -> None:
    text = 'format = 1\n\n[[resources]]\nname = "r"\nuri = "r://x"\nwatch = { files = ["later/*.txt"] }\n'
    assert loads_project(text).resources[0].watch == WatchSpec(files=["later/*.txt"])


def test_instances_on_a_direct_resource_is_refused() -> None:
    text = "format = 1\n\n[[resources]]\nname = \"r\"\nuri = \"r://x\"\ninstances = \"def instances(): return []\"\n"
    with pytest.raises(ProjectError, match="instances need a uri_template") as caught:
        loads_project(text)
    assert caught.value.field == "instances"
    assert caught.value.line == 6
