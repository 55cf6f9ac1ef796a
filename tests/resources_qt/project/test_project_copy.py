"""Project.copy and ResourceSpec.copy: equal to the original, sharing nothing mutable with it."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from resources_qt.project import Project, ResourceSpec, ServerSettings, dumps_project, loads_project, render
from resources_qt.project.model import WatchSpec
from resources_qt.resource import Annotations, CacheHint, Icon
from resources_qt.testing.spec import Expectation, TestSpec


def _full_spec() -> ResourceSpec:
    """A spec with every field set to something other than its default."""
    return ResourceSpec(
        # uri and uri_template both: not servable, but every field is set (copying does not validate).
        name="items", title="Items", description="All items", uri="items://all", uri_template="items://{id}",
        mime_type="text/plain",
        size=12, icons=[Icon("https://example.com/i.png", "image/png", ("16x16",))],
        annotations=Annotations(("user",), 0.5, None), samples=["items://1"], completions={"id": ["1", "2"]},
        complete="def complete(name, value, context):\n    return []\n",
        cache=CacheHint(1000, "public"), scopes=["crm:read"], unchecked_values=True,
        watch=WatchSpec(files=["data/*.csv"], interval=2.0),
        instances="def instances():\n    return []\n", reader="def read(uri, params):\n    return 'x'\n",
        upstream="colleague",
    )  # fmt: skip


def _immutable(value: Any) -> bool:
    if isinstance(value, str | int | float | bool | type(None) | Path):
        return True
    if isinstance(value, tuple):
        return all(_immutable(item) for item in value)
    params = getattr(type(value), "__dataclass_params__", None)
    if dataclasses.is_dataclass(value) and params is not None and params.frozen:
        return all(_immutable(getattr(value, f.name)) for f in dataclasses.fields(value))
    return False


def _shared_mutables(original: Any, twin: Any, path: str) -> list[str]:
    """Where `twin` holds the very mutable object `original` holds (lists, dicts, mutable dataclasses)."""
    if _immutable(original):
        return []
    if original is twin:
        return [path]
    if isinstance(original, list):
        return [hit for i, (a, b) in enumerate(zip(original, twin, strict=True))
                for hit in _shared_mutables(a, b, f"{path}[{i}]")]  # fmt: skip
    if isinstance(original, dict):
        return [hit for key in original for hit in _shared_mutables(original[key], twin[key], f"{path}[{key!r}]")]
    if dataclasses.is_dataclass(original):
        return [hit for f in dataclasses.fields(original) for hit in
                _shared_mutables(getattr(original, f.name), getattr(twin, f.name), f"{path}.{f.name}")]  # fmt: skip
    return [f"{path} ({type(original).__name__}: not known to be immutable)"]


def test_every_resource_spec_field_is_set_by_the_full_spec() -> None:
    # So a field added later is covered by the copy tests below (set it in _full_spec).
    full, defaults = _full_spec(), ResourceSpec()
    unset = [f.name for f in dataclasses.fields(ResourceSpec) if getattr(full, f.name) == getattr(defaults, f.name)]
    assert unset == []


def test_resource_spec_copy_is_equal_and_shares_nothing_mutable() -> None:
    spec = _full_spec()
    twin = spec.copy()
    assert twin == spec and twin is not spec
    assert _shared_mutables(spec, twin, "spec") == []
    twin.samples.append("items://2")
    twin.completions["id"].append("3")
    assert twin.watch is not None
    twin.watch.files.append("more/*.txt")
    assert spec == _full_spec()


def test_a_default_spec_copy_shares_no_empty_list_either() -> None:
    spec = ResourceSpec(name="a", uri="a://x")
    assert _shared_mutables(spec, spec.copy(), "spec") == []


def test_project_copy_is_equal_and_shares_nothing_mutable() -> None:
    project = Project(
        server=ServerSettings(name="copied", notifications=True), prelude="import json\n",
        resources=[_full_spec(), ResourceSpec(name="a", uri="a://x", reader="def read(uri, params):\n    return 1\n")],
        path=Path("/tmp/p.toml"), tests=[TestSpec("t", "a://x", Expectation(json={"k": [1]}))],
    )  # fmt: skip
    twin = project.copy()
    assert twin == project
    assert twin.path == project.path and twin.layout is None
    # The expectation is frozen, but its JSON value is a dict: that is copied too.
    assert _shared_mutables(project, twin, "project") == []
    twin.server.name = "changed"
    twin.resources.append(ResourceSpec(name="b", uri="b://x"))
    assert project.server.name == "copied" and len(project.resources) == 2


def test_a_loaded_project_copy_keeps_its_layout() -> None:
    text = 'format = 1\n\n[server]\nname = "p"\n\n[[resources]]\nname = "a"\nuri = "a://x"\nreader = "x"\n'
    project = loads_project(text, strict=False)
    twin = project.copy()
    assert twin.layout == project.layout and twin.layout is not None
    assert twin == project


_COMMENTED = """format = 1

[server]
name = "p"  # the server's name

# the first resource
[[resources]]
name = "a"
uri = "a://x"
reader = "def read(uri, params):\\n    return 1\\n"

[[resources]]
name = "b"  # kept as written
uri = "b://x"
reader = "def read(uri, params):\\n    return 2\\n"
"""


def test_the_layout_is_of_the_file_as_read_even_when_the_project_is_edited_before_it_is_asked_for() -> None:
    project = loads_project(_COMMENTED, strict=False)
    as_read = project.resources[0].copy()
    project.resources[0].title = "Edited in place"  # before anything asked for the layout
    layout = project.layout
    assert layout is not None
    assert layout.of_kind("resources")[0].fingerprint == render.resource_text(as_read)
    saved = dumps_project(project)
    assert "# the first resource" in saved and 'name = "b"  # kept as written' in saved
    assert 'title = "Edited in place"' in saved
    assert loads_project(saved) == project


def test_setting_the_layout_replaces_a_deferred_one() -> None:
    project = loads_project(_COMMENTED, strict=False)
    project.layout = None
    assert project.layout is None
    assert dumps_project(project) == dumps_project(Project(server=project.server, resources=project.resources))


def test_a_layout_that_cannot_be_built_saves_in_the_standard_layout(caplog: pytest.LogCaptureFixture) -> None:
    project = loads_project(_COMMENTED, strict=False)

    def broken() -> None:
        raise RuntimeError("a layout bug")

    project.defer_layout(broken)
    assert project.layout is None
    assert "standard layout" in caplog.text
    assert dumps_project(project) == dumps_project(Project(server=project.server, resources=project.resources))


def test_replace_carries_a_deferred_layout() -> None:
    project = loads_project(_COMMENTED, strict=False)
    replaced = dataclasses.replace(project, prelude="import json\n")
    assert replaced.layout == project.layout and replaced.layout is not None
    assert "# the first resource" in dumps_project(replaced)
