"""Project files: byte-identical round trips, odd strings, every broken-file error, and the atomic save."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resources_qt import Annotations, CacheHint, Icon, ValidationError
from resources_qt.project import (
    Project,
    ProjectError,
    ResourceSpec,
    ServerSettings,
    dumps_project,
    load_project,
    loads_project,
    save_project,
)

REPO = Path(__file__).resolve().parents[2]

ISSUE_EXAMPLE = """\
format = 1

[server]
name = "Support desk"

[[resources]]
name = "customer_profile"
uri_template = "crm://customers/{id}/profile"
mime_type = "application/json"
samples = ["crm://customers/42/profile"]
reader = '''
def read(uri, params):
    return {"id": params["id"]}
'''
"""

FULL = """\
format = 1

prelude = '''
import json
TICKETS = {"1": "text/plain"}
'''

[server]
name = "Support desk"
version = "2.1.0"
instructions = "Start at kb://articles/index.\\nTickets live under tickets://."
notifications = true
subscriptions = true
reader_timeout = 2.5
workers = 4
memory_limit_mb = 256
page_size = 50
cache_ttl_ms = 30000
cache_scope = "public"

[[resources]]
name = "kb_index"
title = "Knowledge base index"
description = "List of every knowledge base article, with its URI"
uri = "kb://articles/index"
mime_type = "application/json"
size = 2048
icons = [{ src = "https://cdn.example.com/icons/index.svg" }]
annotations = { audience = ["user", "assistant"], priority = 0.9, last_modified = "2025-01-12T15:00:58Z" }
reader = '''
def read(uri, params):
    return [{"uri": "kb://articles/faq/setup"}]
'''

[[resources]]
name = "kb_article"
title = "Knowledge base article"
uri_template = "kb://articles/{section}/{slug}"
mime_type = "text/markdown"
samples = ["kb://articles/faq/setup", "kb://articles/howto/export"]
icons = [{ src = "https://cdn.example.com/icons/article-24.png", mime_type = "image/png", sizes = ["24x24"] }, \
{ src = "https://cdn.example.com/icons/article-48.png", mime_type = "image/png", sizes = ["48x48"] }]
completions = { section = ["faq", "howto"] }
cache = { ttl_ms = 60000, scope = "private" }
complete = '''
def complete(name, value, context):
    return [s for s in ("setup", "export") if s.startswith(value)]
'''
reader = '''
def read(uri, params):
    return f"# {params['section']}/{params['slug']}"
'''

[[resources]]
name = "ticket_attachment"
description = "The attachment of one support ticket, as text or as an image"
uri_template = "tickets://{id}/attachment"
reader = "def read(uri, params): return b'\\\\x89PNG' if params['id'] == '2' else 'log'"
"""


# -- round trips ---------------------------------------------------------------


@pytest.mark.parametrize("text", [ISSUE_EXAMPLE, FULL], ids=["issue-example", "every-field"])
def test_loading_then_dumping_a_canonical_file_changes_nothing(text: str) -> None:
    project = loads_project(text, source="p.toml")
    assert dumps_project(project) == text
    assert loads_project(dumps_project(project)) == project


@pytest.mark.parametrize("path", sorted((REPO / "examples").glob("*.toml")), ids=lambda p: p.name)
def test_bundled_examples_are_canonical(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    project = load_project(path)
    assert project.resources, "an example declares resources"
    assert dumps_project(project) == text


def test_full_file_loads_every_field() -> None:
    project = loads_project(FULL)
    assert project.server == ServerSettings(
        name="Support desk",
        version="2.1.0",
        instructions="Start at kb://articles/index.\nTickets live under tickets://.",
        notifications=True,
        subscriptions=True,
        reader_timeout=2.5,
        workers=4,
        memory_limit_mb=256,
        page_size=50,
        cache_ttl_ms=30000,
        cache_scope="public",
    )
    assert project.server.cache == CacheHint(30000, "public")
    index, article, attachment = project.resources
    assert index.annotations == Annotations(("user", "assistant"), 0.9, "2025-01-12T15:00:58Z")
    assert index.icons == [Icon("https://cdn.example.com/icons/index.svg")] and index.size == 2048
    assert article.completions == {"section": ["faq", "howto"]} and article.cache == CacheHint(
        60000, "private"
    )
    assert article.complete.startswith("def complete(") and article.reader.endswith("'slug']}\"\n")
    assert attachment.reader == "def read(uri, params): return b'\\x89PNG' if params['id'] == '2' else 'log'"
    assert project.find("kb_article") is article and project.find("nope") is None
    assert article.sample_uris() == ["kb://articles/faq/setup", "kb://articles/howto/export"]
    assert index.sample_uris() == ["kb://articles/index"] and attachment.sample_uris() == []


def test_file_round_trip_is_byte_identical(tmp_path: Path) -> None:
    path = tmp_path / "support.toml"
    path.write_bytes(FULL.encode("utf-8"))
    project = load_project(path)
    assert project.path == path
    assert save_project(project) == path
    assert path.read_bytes() == FULL.encode("utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["support.toml"]


def test_a_spec_becomes_a_resource() -> None:
    spec = loads_project(FULL).resources[1]
    resource = spec.to_resource(lambda uri, params: "x")
    resource.validate()
    assert (resource.name, resource.uri_template, resource.mime_type) == (
        "kb_article",
        "kb://articles/{section}/{slug}",
        "text/markdown",
    )
    assert resource.completions == {"section": ["faq", "howto"]} and len(resource.icons) == 2


def test_copy_shares_nothing_mutable() -> None:
    project = loads_project(FULL)
    dup = project.copy()
    dup.resources[1].samples.append("kb://articles/x/y")
    dup.resources[1].completions["section"].append("news")
    dup.server.name = "Other"
    assert project == loads_project(FULL)


ODD_STRINGS = [
    "",
    'say "hi"',
    "back\\slash\\",
    "ends with a quote'",
    'ends with a double quote"',
    "has ''' inside\nand more",
    'has """ inside\nand more',
    "line one\r\nline two\r\n",
    "tab\there\n",
    "nul\x00 and del\x7f and bell\x07\n",
    "unicode: Zoë, 日本語, emoji 🎉\n",
    "trailing newlines\n\n\n",
    "\nstarts with a newline",
    "'''",
    "''''\n''''",
    "\\u0041 is not an escape here\n",
]


@pytest.mark.parametrize("odd", ODD_STRINGS)
def test_odd_strings_round_trip_exactly(odd: str) -> None:
    project = Project(
        server=ServerSettings(name="S" + odd, instructions=odd),
        prelude=odd,
        resources=[
            ResourceSpec(
                name="r" + odd,
                title=odd,
                description=odd,
                uri="x://" + quote(odd, safe=""),  # a URI cannot hold spaces or controls
                mime_type=odd,
                samples=[odd or "x"],
                reader=odd,
                complete=odd,
            )
        ],
    )
    text = dumps_project(project)
    assert loads_project(text) == project
    assert dumps_project(loads_project(text)) == text


def test_snippets_are_written_as_readable_blocks() -> None:
    spec = ResourceSpec(name="r", uri="x://r", reader='def read(uri, params):\n    return "a\\tb"\n')
    text = dumps_project(Project(resources=[spec]))
    assert "reader = '''\ndef read(uri, params):\n    return \"a\\tb\"\n'''\n" in text


ODD_TEXT = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=40) | st.sampled_from(
    ODD_STRINGS
)
NAME = ODD_TEXT.filter(lambda s: s.strip() != "")


@st.composite
def projects(draw: st.DrawFn) -> Project:
    server = ServerSettings(
        name=draw(NAME),
        version=draw(ODD_TEXT),
        instructions=draw(ODD_TEXT),
        notifications=draw(st.booleans()),
        reader_timeout=draw(st.floats(min_value=0.1, max_value=3600)),
        page_size=draw(st.integers(1, 10**4)),
        max_uri_length=draw(st.integers(256, 1_048_576)),
        session_idle_timeout=draw(st.floats(min_value=1, max_value=604_800)),
        mask_errors=draw(st.booleans()),
    )
    names = draw(st.lists(NAME, max_size=4, unique=True))
    resources = []
    for index, name in enumerate(names):
        template = draw(st.booleans())
        resources.append(
            ResourceSpec(
                name=name,
                title=draw(ODD_TEXT),
                description=draw(ODD_TEXT),
                # Percent-encoded: a direct URI refuses braces, spaces and control characters.
                uri="" if template else f"x://{index}/" + quote(draw(ODD_TEXT), safe=""),
                uri_template=f"x://{index}/{{id}}" if template else "",
                mime_type=draw(ODD_TEXT),
                samples=draw(st.lists(NAME, max_size=2)),
                completions={"id": draw(st.lists(ODD_TEXT, max_size=3))} if template else {},
                unchecked_values=template and draw(st.booleans()),
                reader=draw(ODD_TEXT),
                complete=draw(ODD_TEXT),
            )
        )
    return Project(server=server, prelude=draw(ODD_TEXT), resources=resources)


@settings(max_examples=150, deadline=None)
@given(projects())
def test_any_project_round_trips_through_dumps_and_loads(project: Project) -> None:
    text = dumps_project(project)
    assert loads_project(text) == project
    assert dumps_project(loads_project(text)) == text


# -- broken files ------------------------------------------------------------------


def broken(text: str) -> ProjectError:
    with pytest.raises(ProjectError) as caught:
        loads_project(textwrap.dedent(text), source="broken.toml")
    error = caught.value
    assert error.code == -32602 and error.source == "broken.toml"
    assert error.message.startswith("broken.toml")
    return error


def test_bad_toml_names_the_line() -> None:
    error = broken(
        """\
        format = 1
        [server]
        name = "ok"
        notifications = maybe
        """
    )
    assert error.line == 4 and error.message.startswith("broken.toml:4: invalid TOML")


def test_unknown_or_missing_format() -> None:
    error = broken('format = 2\n[server]\nname = "x"\n')
    assert error.line == 1 and "unsupported format 2" in error.message and "format = 1" in error.message
    assert "missing 'format = 1'" in broken('[server]\nname = "x"\n').message
    assert "unsupported format '1'" in broken('format = "1"\n').message
    assert "unsupported format True" in broken("format = true\n").message


RESOURCE_HEAD = """\
format = 1

[server]
name = "Support"

[[resources]]
name = "first"
uri = "x://first"
reader = '''
[[resources]]
size = "not a key, just snippet text"
'''

[[resources]]
name = "second"
"""


@pytest.mark.parametrize(
    ("tail", "line", "problem"),
    [
        ('uri = "x://2"\nuri_template = "x://{a}"\n', 17, "Cannot set both URI and URITemplate"),
        ('uri = "x://2"\nsize = "big"\n', 17, "size must be an integer, not a string"),
        ('uri = "x://2"\nsize = -4\n', 17, "size must not be negative"),
        ('uri = "x://2"\ncolour = "red"\n', 17, "unknown key(s): colour"),
        ('uri_template = "x://{a"\n', 16, "Invalid URI template"),
        ('uri_template = "x://plain"\n', 16, "has no {variable}"),
        ('uri = "x://2"\nsamples = "x://2"\n', 17, "samples must be an array"),
        ('uri = "x://2"\nsamples = [1]\n', 17, "each of samples must be a string, not an integer"),
        ('uri = "x://2"\nicons = [{ href = "a.png" }]\n', 17, "unknown icon key(s): href"),
        ('uri = "x://2"\nicons = [{ src = "" }]\n', 17, "Icon source must not be empty"),
        ('uri = "x://2"\nannotations = { priority = 3 }\n', 17, "priority must be between 0 and 1"),
        (
            'uri = "x://2"\nannotations = { priority = true }\n',
            17,
            "annotations.priority must be a number, not a boolean",
        ),
        (
            'uri = "x://2"\nannotations = { audience = ["robot"] }\n',
            17,
            "audience must be 'user' or 'assistant'",
        ),
        ('uri_template = "x://{a}"\ncompletions = { b = ["1"] }\n', 17, "unknown variable(s) b"),
        ('uri = "x://2"\ncompletions = { a = ["1"] }\n', 17, "completions need a uri_template"),
        (
            'uri = "x://2"\ncache = { ttl_ms = 5, scope = "world" }\n',
            17,
            "scope must be 'public' or 'private'",
        ),
        ('uri = "x://2"\ncache = { ttl = 5 }\n', 17, "unknown cache key(s): ttl"),
        ('reader = "x"\n', 14, "needs a uri or a uri_template"),
        ('uri = "x://first"\n', 16, "duplicate URI 'x://first' (already declared by resource #1, 'first')"),
        ("uri = 5\n", 16, "uri must be a string, not an integer"),
        ('uri = "x://{id}"\n', 16, "looks like a template; declare it as uri_template"),
    ],
)
def test_broken_resources_name_the_line_resource_and_problem(tail: str, line: int, problem: str) -> None:
    error = broken(RESOURCE_HEAD + tail)
    assert problem in error.message
    assert error.line == line, error.message
    assert f"broken.toml:{line}: resource 'second': " in error.message


def test_duplicate_names_point_at_the_second_declaration() -> None:
    error = broken(RESOURCE_HEAD.replace('name = "second"', 'name = "first"') + 'uri = "x://2"\n')
    assert error.line == 15 and "resource 'first': duplicate name (resource #1 has it too)" in error.message


def test_an_unnamed_resource_is_named_by_position() -> None:
    error = broken(RESOURCE_HEAD.replace('name = "second"', 'title = "no name"') + 'uri = "x://2"\n')
    assert "resource #2: name must not be empty" in error.message and error.line == 14


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ('format = 1\ncolour = "red"\n', 2, "unknown top-level key(s): colour"),
        ("format = 1\n[extras]\nx = 1\n", 2, "unknown top-level key(s): extras"),
        (
            'format = 1\n[server]\nname = "x"\nnotifications = "yes"\n',
            4,
            "notifications must be a boolean, not a string",
        ),
        ('format = 1\n[server]\nname = "x"\nworkers = 0\n', 4, "workers must be between 1 and 64, not 0"),
        (
            'format = 1\n[server]\nname = "x"\nreader_timeout = -1\n',
            4,
            "reader_timeout must be between 0.1 and 3600 s, not -1.0",
        ),
        (
            'format = 1\n[server]\nname = "x"\nreader_timeout = true\n',
            4,
            "reader_timeout must be a number, not a boolean",
        ),
        (
            'format = 1\n[server]\nname = "x"\ncache_scope = "all"\n',
            4,
            "cache_scope must be 'public' or 'private'",
        ),
        ('format = 1\n[server]\nname = "x"\nport = 80\n', 4, "[server]: unknown key(s): port"),
        ('format = 1\n[server]\nname = ""\n', 3, "name must not be empty"),
        ("format = 1\nserver = 5\n", 2, "[server] must be a table"),
        ("format = 1\nprelude = 5\n", 2, "prelude must be a string, not an integer"),
        ("format = 1\nresources = 5\n", 2, "resources must be an array of tables"),
        ("format = 1\nresources = [5]\n", 2, "resource #1: a [[resources]] entry must be a table"),
    ],
)
def test_broken_settings_name_the_line_and_problem(text: str, line: int, problem: str) -> None:
    error = broken(text)
    assert problem in error.message
    assert error.line == line, error.message


def test_load_project_names_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.toml"
    with pytest.raises(ProjectError, match="no such project file") as caught:
        load_project(missing)
    assert str(missing) in caught.value.message
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"format = 1\n\xff\xfe")
    with pytest.raises(ProjectError, match="cannot read") as caught:
        load_project(binary)
    assert str(binary) in caught.value.message
    bad = tmp_path / "bad.toml"
    bad.write_text(RESOURCE_HEAD + 'uri = "x://first"\n', encoding="utf-8")
    with pytest.raises(ProjectError) as caught:
        load_project(bad)
    assert caught.value.message.startswith(f"{bad}:16: resource 'second': duplicate URI")


def test_project_validate_catches_what_editing_can_break() -> None:
    project = loads_project(FULL)
    project.validate()
    project.resources[2].name = "kb_index"
    with pytest.raises(ValidationError, match="duplicate name 'kb_index'"):
        project.validate()
    project.resources[2].name = "ok"
    project.resources[2].uri = "x://also"
    with pytest.raises(ValidationError, match="Cannot set both URI and URITemplate"):
        project.validate()


# -- atomic save ---------------------------------------------------------------------


def test_save_refuses_unwritable_strings_and_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(ISSUE_EXAMPLE, encoding="utf-8")
    project = load_project(path)
    project.resources[0].description = "lone surrogate \ud800"
    with pytest.raises(ValidationError, match="lone surrogate U\\+D800"):
        save_project(project)
    assert path.read_text(encoding="utf-8") == ISSUE_EXAMPLE
    assert [p.name for p in tmp_path.iterdir()] == ["p.toml"]


def test_a_failing_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    # A real write failure: a file-size limit makes the kernel refuse the write
    # half-way (EFBIG), in a child process so the limit binds nothing else.
    path = tmp_path / "p.toml"
    path.write_text(ISSUE_EXAMPLE, encoding="utf-8")
    script = textwrap.dedent(
        f"""
        import resource, signal, sys
        from resources_qt.project import load_project, save_project
        project = load_project({str(path)!r})
        project.prelude = "x = 1\\n" * 50_000
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        try:
            save_project(project)
        except OSError as exc:
            print("refused", exc.errno)
            sys.exit(0)
        sys.exit("the oversized save did not fail")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("refused")
    assert path.read_text(encoding="utf-8") == ISSUE_EXAMPLE
    assert [p.name for p in tmp_path.iterdir()] == ["p.toml"]


def test_save_keeps_the_mode_and_writes_through_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real.toml"
    real.write_text(ISSUE_EXAMPLE, encoding="utf-8")
    real.chmod(0o640)
    link = tmp_path / "link.toml"
    link.symlink_to(real)
    project = load_project(link)
    project.server.name = "Renamed"
    assert save_project(project) == link
    assert link.is_symlink() and stat.S_IMODE(real.stat().st_mode) == 0o640
    assert load_project(real).server.name == "Renamed"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.toml", "real.toml"]


def test_save_needs_a_path_and_creates_folders(tmp_path: Path) -> None:
    project = loads_project(ISSUE_EXAMPLE)
    with pytest.raises(ValidationError, match="no file name yet"):
        save_project(project)
    target = tmp_path / "new" / "dir" / "p.toml"
    assert save_project(project, target) == target and project.path == target
    assert target.read_text(encoding="utf-8") == ISSUE_EXAMPLE
    assert stat.S_IMODE(target.stat().st_mode) & 0o600 == 0o600


WORK_IN_PROGRESS = """format = 1

[server]
name = "wip"

[[resources]]
name = "half_done"
mime_type = "text/plain"

[[resources]]
name = "twin"
uri = "a://x"

[[resources]]
name = "twin"
uri_template = "a://{broken"
"""


def test_strict_loading_refuses_work_in_progress() -> None:
    with pytest.raises(ProjectError, match="half_done"):
        loads_project(WORK_IN_PROGRESS, source="wip.toml")


def test_lenient_loading_keeps_work_in_progress_as_written() -> None:
    project = loads_project(WORK_IN_PROGRESS, source="wip.toml", strict=False)
    assert [(r.name, r.uri, r.uri_template) for r in project.resources] == [
        ("half_done", "", ""),
        ("twin", "a://x", ""),
        ("twin", "", "a://{broken"),
    ]
    with pytest.raises(ValidationError):
        project.validate()
    assert dumps_project(project) == WORK_IN_PROGRESS


def test_lenient_loading_still_refuses_what_it_cannot_represent() -> None:
    with pytest.raises(ProjectError, match="size"):
        loads_project('format = 1\n[[resources]]\nname = "a"\nsize = "big"\n', strict=False)
    with pytest.raises(ProjectError, match="unknown key"):
        loads_project('format = 1\n[[resources]]\nname = "a"\nurl = "x://y"\n', strict=False)
