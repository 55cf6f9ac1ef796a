"""Key bombs and giant files are refused before the TOML parser sees them, naming the problem and the line."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from resources_qt.project import ProjectError, load_project, loads_project
from resources_qt.project.limits import MAX_FILE_BYTES, MAX_KEY_PARTS, MAX_LINE_CHARS, MAX_NESTING

HEAD = 'format = 1\n\n[server]\nname = "x"\n'


def test_a_dotted_key_bomb_is_refused_with_bounded_memory() -> None:
    # The bomb: 200 KB, one key of 100,000 parts (gigabytes inside tomllib).
    bomb = HEAD + ".".join(["a"] * 100_000) + " = 1\n"
    assert 190_000 < len(bomb) < 210_000
    tracemalloc.start()
    try:
        with pytest.raises(ProjectError) as caught:
            loads_project(bomb, source="bomb.toml")
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * 1024 * 1024, peak
    error = caught.value
    assert error.line == 5 and error.source == "bomb.toml"
    assert f"a dotted key or table header with more than {MAX_KEY_PARTS} parts" in error.message


@pytest.mark.parametrize(
    "key",
    [
        ".".join(["a"] * (MAX_KEY_PARTS + 1)),
        " . ".join(['"q"'] * (MAX_KEY_PARTS + 1)),
        ".".join(["'lit'", "b-c", '"d\\"e"'] * MAX_KEY_PARTS),
    ],
)
def test_dotted_keys_and_headers_over_the_limit_are_refused(key: str) -> None:
    with pytest.raises(ProjectError, match="dotted key or table header") as caught:
        loads_project(HEAD + f"{key} = 1\n")
    assert caught.value.line == 5
    with pytest.raises(ProjectError, match="dotted key or table header") as caught:
        loads_project(HEAD + f"\n[{key}]\n")
    assert caught.value.line == 6


def test_the_same_text_inside_strings_and_comments_is_fine() -> None:
    dotted = ".".join(["a"] * (MAX_KEY_PARTS + 5))
    nested = "[" * (MAX_NESTING + 5)
    text = (
        'format = 1\n\nprelude = """\n'
        f"{dotted}\n{nested}\n"
        '"""\n\n[server]\n'
        f'name = "{dotted}"  # {dotted} {nested}\n'
        f"instructions = '{dotted}'\n\n"
        "[[resources]]\n"
        'name = "r"\nuri = "x://r"\n'
        f"reader = '''\n{dotted} = {nested}\n'''\n"
    )
    project = loads_project(text)
    assert project.server.name == dotted
    assert dotted in project.resources[0].reader


def test_a_key_at_the_limit_still_parses_as_far_as_tomllib() -> None:
    key = ".".join(["a"] * MAX_KEY_PARTS)
    with pytest.raises(ProjectError, match="unknown top-level key") as caught:
        loads_project(f"format = 1\n{key} = 1\n")
    assert caught.value.line == 2


def test_deep_nesting_is_refused_before_parsing() -> None:
    depth = MAX_NESTING + 1
    for value in ("[" * depth + "]" * depth, "{ a = " * depth + "1" + " }" * depth):
        with pytest.raises(ProjectError, match=f"nested more than {MAX_NESTING} deep") as caught:
            loads_project(HEAD + f"instructions = {value}\n")
        assert caught.value.line == 5


def test_nesting_the_limiter_misses_still_ends_in_a_project_error() -> None:
    # Dotted inline-table keys slip past the quick scan; the parser's recursion limit catches them.
    value = "{ a.b = " * 2000 + "1" + " }" * 2000
    with pytest.raises(ProjectError, match=r"nested too deeply|invalid TOML"):
        loads_project(HEAD + f"instructions = {value}\n")


def test_an_overlong_line_is_refused_naming_it() -> None:
    text = HEAD + 'instructions = "ok"\n' + "# " + "x" * MAX_LINE_CHARS + "\n"
    with pytest.raises(ProjectError, match=f"lines may be at most {MAX_LINE_CHARS:,} characters") as caught:
        loads_project(text)
    assert caught.value.line == 6


def test_a_file_over_the_size_limit_is_refused_before_reading(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    with big.open("wb") as handle:
        handle.write(HEAD.encode())
        handle.truncate(MAX_FILE_BYTES + 1)
    with pytest.raises(ProjectError, match=f"at most {MAX_FILE_BYTES:,} bytes") as caught:
        load_project(big)
    assert caught.value.source == str(big)
    with pytest.raises(ProjectError, match="at most"):
        loads_project("#" * (MAX_FILE_BYTES + 1))
