"""Saves keep what the user wrote: comments, blank lines, key order and string styles survive an edit."""

from __future__ import annotations

import difflib
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resources_qt import Annotations, CacheHint, Icon
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
from resources_qt.testing import Expectation, TestSpec

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((REPO / "examples").glob("*.toml"))

HAND_WRITTEN = """\
# Support desk, maintained by hand.
format = 1   # the file format

# Shared by every snippet.
prelude = '''
CUSTOMERS = {"42": {"name": "Ada"}}
'''


[server]
name    = 'Support desk'      # shown to clients
workers = "auto"              # the default, written out on purpose
notifications = true

# --- resources -------------------------------------------------------------

[[resources]]
# Profiles come first.
uri_template = "crm://customers/{id}/profile"   # key order as the user likes it
name = "customer_profile"
description = 'Profile of one customer'
mime_type = "application/json"
samples = [
    "crm://customers/42/profile",   # Ada
]
annotations = {audience = ["assistant"], priority = 0.8}
reader = '''
def read(uri, params):
    # look the customer up
    return CUSTOMERS[params["id"]]
'''

[resources.cache]   # a sub-table instead of an inline table
ttl_ms = 60000

# The settings file; nothing to fill in.
[[resources]]
name = "settings"
uri = "config://app/settings"
reader = \"\"\"
def read(uri, params):
    return {"theme": "dark"}
\"\"\"

[[tests]]   # one smoke test
name = "ada"
uri = "crm://customers/42/profile"
expect = { contains = "Ada" }
"""


def changed_lines(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def comments(text: str) -> list[str]:
    return [line[line.index("#") :] for line in text.splitlines() if "#" in line]


def test_an_untouched_hand_written_file_is_written_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "desk.toml"
    path.write_text(HAND_WRITTEN, encoding="utf-8")
    project = load_project(path)
    assert dumps_project(project) == HAND_WRITTEN
    save_project(project)
    assert path.read_text(encoding="utf-8") == HAND_WRITTEN
    assert project.tests == [TestSpec(name="ada", uri="crm://customers/42/profile", expect=Expectation(contains="Ada"))]


def test_editing_one_field_changes_only_its_line(tmp_path: Path) -> None:
    path = tmp_path / "desk.toml"
    path.write_text(HAND_WRITTEN, encoding="utf-8")
    project = load_project(path)
    project.resources[0].description = "Profile of one customer, by id"
    save_project(project)
    saved = path.read_text(encoding="utf-8")
    # The literal string stays literal; everything else, comments and blank lines included, stays put.
    assert changed_lines(HAND_WRITTEN, saved) == [
        "-description = 'Profile of one customer'",
        "+description = 'Profile of one customer, by id'",
    ]
    assert load_project(path) == project


def test_a_changed_value_keeps_the_comment_on_its_line() -> None:
    project = loads_project(HAND_WRITTEN)
    project.server.name = "Help desk"
    project.server.workers = 4
    project.resources[0].mime_type = "application/vnd.crm+json"
    text = dumps_project(project)
    assert "name    = 'Help desk'      # shown to clients\n" in text
    assert "workers = 4              # the default, written out on purpose\n" in text
    assert comments(text) == comments(HAND_WRITTEN)
    assert loads_project(text) == project


def test_new_keys_go_where_the_house_order_puts_them() -> None:
    project = loads_project(HAND_WRITTEN)
    project.resources[1].title = "Settings"
    project.resources[1].mime_type = "application/json"
    project.server.page_size = 20
    project.server.mask_errors = True
    text = dumps_project(project)
    settings_table = 'name = "settings"\ntitle = "Settings"\nuri = "config://app/settings"\n'
    assert settings_table + 'mime_type = "application/json"\n' in text
    assert "notifications = true\npage_size = 20\nmask_errors = true\n" in text
    assert comments(text) == comments(HAND_WRITTEN)
    assert loads_project(text) == project


def test_a_new_key_after_the_last_line_of_the_file_is_added_in_place() -> None:
    text = "format = 1\n\n[server]\nname = 'Desk'   # shown to clients\n"
    project = loads_project(text)
    project.server.page_size = 20
    saved = dumps_project(project)
    assert saved == text + "page_size = 20\n"
    assert loads_project(saved) == project


def test_a_default_written_out_stays_and_a_cleared_value_goes() -> None:
    project = loads_project(HAND_WRITTEN)
    project.resources[0].annotations = None
    project.resources[0].cache = CacheHint(5000, "public")
    text = dumps_project(project)
    assert 'workers = "auto"' in text and "annotations" not in text
    assert "[resources.cache]   # a sub-table instead of an inline table\nttl_ms = 5000\nscope = \"public\"\n" in text
    assert loads_project(text) == project


def test_removing_adding_and_renaming_resources() -> None:
    project = loads_project(HAND_WRITTEN)
    project.resources[0].name = "profile"  # renamed in place, its comments with it
    del project.resources[1]
    reader = "def read(uri, params):\n    return 1\n"
    project.resources.append(ResourceSpec(name="added", uri="x://added", reader=reader))
    text = dumps_project(project)
    assert "# Profiles come first.\nuri_template" in text and 'name = "profile"' in text
    assert "settings" not in text.split("[[tests]]")[0].split("# The settings file")[-1]
    added = f'[[resources]]\nname = "added"\nuri = "x://added"\nreader = \'\'\'\n{reader}\'\'\'\n'
    assert "\n\n" + added + "\n[[tests]]" in text
    assert loads_project(text) == project


def test_reordered_resources_follow_the_model() -> None:
    project = loads_project(HAND_WRITTEN)
    project.resources.reverse()
    text = dumps_project(project)
    assert text.index('name = "settings"') < text.index('name = "customer_profile"')
    assert loads_project(text) == project
    assert sorted(comments(text)) == sorted(comments(HAND_WRITTEN))


def test_prelude_added_changed_and_removed() -> None:
    bare = 'format = 1\n\n[server]\nname = "x"  # keep\n'
    project = loads_project(bare)
    project.prelude = "A = 1\n"
    text = dumps_project(project)
    assert text == "format = 1\n\nprelude = '''\nA = 1\n'''\n\n[server]\nname = \"x\"  # keep\n"
    project = loads_project(text)
    project.prelude = "A = 2\n"
    assert dumps_project(project) == text.replace("A = 1", "A = 2")
    project.prelude = ""
    assert loads_project(dumps_project(project)) == project
    assert "# keep" in dumps_project(project)


def test_tests_are_kept_edited_and_added_in_place() -> None:
    project = loads_project(HAND_WRITTEN)
    project.tests[0] = TestSpec(name="ada", uri="crm://customers/42/profile", expect=Expectation(contains="Lovelace"))
    project.tests.append(TestSpec(name="settings", uri="config://app/settings", expect=Expectation(contents=1)))
    text = dumps_project(project)
    assert '[[tests]]   # one smoke test\nname = "ada"\n' in text and 'contains = "Lovelace"' in text
    assert text.endswith('\n\n[[tests]]\nname = "settings"\nuri = "config://app/settings"\nexpect = { contents = 1 }\n')
    assert loads_project(text) == project


def test_a_broken_test_names_the_file_line_and_key() -> None:
    text = HAND_WRITTEN + '\n[[tests]]\nname = "bad"\nuri = ""\n'
    with pytest.raises(ProjectError) as caught:
        loads_project(text, source="desk.toml")
    error = caught.value
    assert error.message.startswith("desk.toml:")
    assert error.line == text.splitlines().index('uri = ""') + 1
    assert error.field == "tests[1].uri"


def test_saving_twice_edits_against_what_was_saved(tmp_path: Path) -> None:
    path = tmp_path / "desk.toml"
    path.write_text(HAND_WRITTEN, encoding="utf-8")
    project = load_project(path)
    project.resources[1].uri = "config://app/prefs"
    save_project(project)
    first = path.read_text(encoding="utf-8")
    project.resources[1].uri = "config://app/preferences"
    save_project(project)
    assert changed_lines(first, path.read_text(encoding="utf-8")) == [
        '-uri = "config://app/prefs"',
        '+uri = "config://app/preferences"',
    ]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_bundled_examples_survive_an_edit(tmp_path: Path, path: Path) -> None:
    original = path.read_text(encoding="utf-8")
    project = load_project(path)
    target = tmp_path / path.name
    spec = project.resources[-1]
    spec.title = "Edited title"
    save_project(project, target)
    saved = target.read_text(encoding="utf-8")
    changed = changed_lines(original, saved)
    assert changed[-1] == '+title = "Edited title"' and len(changed) <= 2
    assert comments(saved) == comments(original)
    assert load_project(target) == project


@pytest.mark.parametrize(
    "snippet",
    [
        "def read(uri, params):\n    return '''quoted'''\n",
        'def read(uri, params):\n    """Doc."""\n    return \'\'\'x\'\'\'  # both\n',
        "def read(uri, params):\n    return r'\\d+ ''' + \"\\t\"\n",
        'x = """"""""\nend"',
    ],
)
def test_a_snippet_with_triple_quotes_stays_a_readable_block(snippet: str) -> None:
    project = loads_project(HAND_WRITTEN)
    project.resources[1].reader = snippet
    text = dumps_project(project)
    assert loads_project(text) == project
    # Multi-line, one file line per snippet line: not one escaped line.
    start = text.index("reader = ") + len("reader = '''\n")
    lines = text[start:].splitlines()[: snippet.count("\n") + 1]
    assert len(lines) == snippet.count("\n") + 1
    assert "def read(uri, params):" in lines[0] or lines[0].startswith("x = ")
    assert tomllib.loads(text)["resources"][1]["reader"] == snippet


def test_an_odd_layout_is_saved_in_the_standard_layout_without_losing_anything() -> None:
    text = 'format = 1\nserver.name = "dotted"  # a dotted table\nresources = [{ name = "a", uri = "x://a" }]\n'
    project = loads_project(text)
    assert project.layout is None
    standard = Project(server=ServerSettings(name="dotted"), resources=project.resources)
    assert dumps_project(project) == dumps_project(standard)
    project.resources[0].title = "T"
    assert loads_project(dumps_project(project)) == project


ENTRY_COMMENTS = {
    "customer_profile": [
        "# Profiles come first.",
        "# key order as the user likes it",
        "# look the customer up",
        "# a sub-table instead of an inline table",
    ],
    "settings": ["# The settings file; nothing to fill in."],
}

EDITS = st.lists(
    st.tuples(
        st.sampled_from(["title", "description", "uri", "mime_type", "reader", "samples", "size", "prelude", "name"]),
        st.integers(0, 1),
        st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=12),
    ),
    max_size=6,
)


@settings(max_examples=100, deadline=None)
@given(EDITS)
def test_any_sequence_of_edits_reloads_to_the_model(edits: list[tuple[str, int, str]]) -> None:
    project = loads_project(HAND_WRITTEN)
    for field, index, text in edits:
        spec = project.resources[index]
        if field == "prelude":
            project.prelude = text
        elif field == "samples":
            spec.samples = [text or "x"]
        elif field == "size":
            spec.size = len(text) or None
        elif field == "uri":
            if spec.uri:
                spec.uri = "x://" + text.encode().hex()
        elif field == "name":
            spec.name = text or "n"
        else:
            setattr(spec, field, text)
        saved = dumps_project(project)
        assert loads_project(saved, strict=False) == project
        # Comments inside a replaced value go with it; an entry whose name, address and reader all
        # changed counts as a new one, and its comments go too. Nothing else is lost.
        may_go = {"# look the customer up", "# Ada"}
        for spec, was in zip(project.resources, loads_project(HAND_WRITTEN).resources, strict=True):
            if not {spec.name, spec.key, spec.reader} & {was.name, was.key, was.reader} - {""}:
                may_go |= set(ENTRY_COMMENTS[was.name])
        assert set(comments(HAND_WRITTEN)) - set(comments(saved)) <= may_go


def test_windows_line_endings_load_as_newlines_and_save_in_place(tmp_path: Path) -> None:
    path = tmp_path / "crlf.toml"
    path.write_bytes(HAND_WRITTEN.replace("\n", "\r\n").encode())
    project = load_project(path)
    assert project.resources == loads_project(HAND_WRITTEN).resources
    assert "\r" not in project.resources[0].reader
    project.resources[0].title = "Profile"
    save_project(project)
    assert load_project(path) == project
    assert comments(path.read_text(encoding="utf-8")) == comments(HAND_WRITTEN)


SUB_TABLES = """\
format = 1
[[resources]]
name = "a"   # first
uri = "x://a"
annotations.priority = 0.5   # dotted
[[resources.icons]]
src = "https://example.com/x.png"   # an array of tables
[resources.cache]
ttl_ms = 5
[[tests]]
uri = "x://a"
[tests.expect]
contains = "a"
"""


def test_sub_tables_and_dotted_keys_are_edited_without_breaking_the_table() -> None:
    project = loads_project(SUB_TABLES)
    assert project.layout is not None
    spec = project.resources[0]
    spec.title = "T"  # a new plain key: above the sub-tables, or it would belong to them
    spec.icons = [Icon("https://example.com/y.png", None, ())]
    spec.annotations = Annotations(("assistant",), 0.1, None)
    spec.cache = CacheHint(7, "public")
    project.tests[0] = TestSpec(name="x://a", uri="x://a", expect=Expectation(contains="b"), named=False)
    text = dumps_project(project)
    assert loads_project(text) == project
    assert 'name = "a"   # first\ntitle = "T"\nuri = "x://a"\n' in text
    assert "annotations.priority = 0.1   # dotted" in text
    assert '[tests.expect]\ncontains = "b"\n' in text
