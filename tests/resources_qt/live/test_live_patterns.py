"""watch.files patterns: what they match (as the old regex did, in linear time), what is refused, what is watched."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resources_qt.errors import ValidationError
from resources_qt.live.patterns import WATCH_PATTERN_MAX_CHARS, WatchPattern, pattern_problem
from resources_qt.live.watch_files import plan_folders
from resources_qt.project import ProjectError, loads_project


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("data/*.csv", "data/a.csv", True),
        ("data/*.csv", "data/sub/a.csv", False),
        ("data/**/*.csv", "data/sub/deep/a.csv", True),
        ("data/**/*.csv", "data/a.csv", True),
        ("data/**", "data/a/b", True),
        ("data/**", "data", False),
        ("**", "anything/at/all", True),
        ("notes", "notes/a.md", True),
        ("notes", "notes/sub/a.md", True),
        ("notes", "notes", True),
        ("notes", "notebook/a.md", False),
        ("index.txt", "index.txt", True),
        ("index.txt", ".index.txt.tmp", False),
        ("data/file?.json", "data/file1.json", True),
        ("data/[ab].txt", "data/b.txt", True),
        ("data/[!ab].txt", "data/b.txt", False),
        ("data/[a-c]*[0-9].log", "data/b-17.log", True),
        ("data/[]]x", "data/]x", True),
        ("a.b", "aXb", False),
        ("a[!b]c", "a/c", False),  # a set never matches the separator, as `?` never did
    ],
)
def test_pattern_matching(pattern: str, path: str, expected: bool) -> None:
    assert WatchPattern(pattern).matches(path) is expected


# -- the old translation, as the reference the matcher must agree with ----------------------------------


def _old_translate(pattern: str) -> str:
    """The regex translation the matcher replaced, except that a set stops at `/` (the old one let
    `[!b]` match the separator, so `a[!b]c` matched `a/c`, and a last `**` now takes newlines too)."""
    out: list[str] = []
    parts = pattern.split("/")
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            out.append("(?s:.*)" if last else "(?:[^/]+/)*")
            continue
        i = 0
        while i < len(part):
            ch = part[i]
            end = part.find("]", i + 2) if ch == "[" else -1
            if ch == "*":
                out.append("[^/]*")
            elif ch == "?":
                out.append("[^/]")
            elif end >= 0:
                body = part[i + 1 : end]
                negate = body.startswith("!")
                body = re.escape(body[1:] if negate else body).replace("\\-", "-")
                out.append(f"(?!/)[{'^' if negate else ''}{body}]")
                i = end
            else:
                out.append(re.escape(ch))
            i += 1
        if not last:
            out.append("/")
    return "".join(out)


def _old_matches(pattern: str, path: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # "possible set difference" on `--` in a set
        regex = re.compile(_old_translate(pattern.strip("/")))
    parts = path.split("/")
    return any(regex.fullmatch("/".join(parts[:n])) for n in range(1, len(parts) + 1))


def _old_compiles(pattern: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            re.compile(_old_translate(pattern.strip("/")))
    except re.error:
        return False
    return True


PATTERNS = st.text(alphabet="ab.-!]/[*?\n", min_size=1, max_size=10)
NAMES = st.text(alphabet="ab.-!]/\n", max_size=12)


@settings(max_examples=1500, deadline=None)
@given(PATTERNS, st.lists(NAMES, min_size=1, max_size=8))
def test_matching_agrees_with_the_old_translation(pattern: str, paths: list[str]) -> None:
    problem = pattern_problem(pattern)
    if not _old_compiles(pattern):
        # What the old translation could not compile (it stopped `serve` with a traceback) is refused.
        assert problem is not None
        return
    if problem is not None:
        # The one thing the old regex compiled but the matcher refuses: `[!]`, an empty set whose
        # `]` the old regex took as a member, so the set ran on into the next one.
        assert "[!]" in pattern and "is empty" in problem
        return
    new = WatchPattern(pattern)
    for path in paths:
        assert new.matches(path) is _old_matches(pattern, path), path


def test_a_pattern_that_backtracked_for_hours_matches_at_once() -> None:
    # The old regex held the interpreter lock for hours here; a child process, so a regression cannot hang the run.
    code = textwrap.dedent(
        """
        from resources_qt.live.patterns import WatchPattern
        pattern = WatchPattern("data/" + "*a" * 12 + "b")
        assert not any(pattern.matches("data/" + "a" * n) for n in range(1, 61))
        print("done")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.strip() == "done", done.stderr


@pytest.mark.parametrize(
    ("pattern", "words"),
    [
        ("data/[z-a].csv", "has the set [z-a], whose range z-a runs backwards"),
        ("x[!]", "has the set [!], which is empty"),
        ("data/" + "*a" * 130, f"at most {WATCH_PATTERN_MAX_CHARS} characters (the watch pattern limit)"),
    ],
)
def test_bad_patterns_are_refused_naming_the_reason(pattern: str, words: str) -> None:
    problem = pattern_problem(pattern)
    assert problem is not None and words in problem and problem.startswith("watch.files: ")
    with pytest.raises(ValidationError) as caught:
        WatchPattern(pattern)
    assert caught.value.field == "watch"


def test_a_pattern_at_the_size_limit_is_fine() -> None:
    pattern = "d/" + "*a" * ((WATCH_PATTERN_MAX_CHARS - 2) // 2)
    assert len(pattern) == WATCH_PATTERN_MAX_CHARS and pattern_problem(pattern) is None


@pytest.mark.parametrize(
    ("pattern", "words"),
    [
        ("data/[z-a].csv", "whose range z-a runs backwards"),
        ("data/" + "*a" * 130, "the watch pattern limit"),
    ],
)
def test_the_loader_refuses_them_naming_the_key_and_line(pattern: str, words: str) -> None:
    text = f'format = 1\n\n[[resources]]\nname = "r"\nuri = "r://x"\nwatch = {{ files = ["ok/*.csv", "{pattern}"] }}\n'
    for strict in (True, False):
        with pytest.raises(ProjectError) as caught:
            loads_project(text, source="p.toml", strict=strict)
        assert str(caught.value).startswith("p.toml:6:") and words in str(caught.value)
        assert caught.value.field == "watch"


# -- which folders are watched ----------------------------------------------------------------------


def _plan(root: Path, *patterns: str) -> tuple[list[str], list[str], list[str]]:
    plan = plan_folders(root, [WatchPattern(p) for p in patterns])
    folders = [f.relative_to(root).as_posix() for f in plan.folders]
    return folders, list(plan.files), list(plan.links)


def test_the_project_folder_and_the_folders_a_pattern_can_reach_are_watched(tmp_path: Path) -> None:
    (tmp_path / "data" / "sub").mkdir(parents=True)
    (tmp_path / "data" / "a.csv").write_text("1")
    (tmp_path / "data" / "sub" / "b.json").write_text("{}")
    (tmp_path / "other" / "deep").mkdir(parents=True)
    (tmp_path / "index.txt").write_text("x")
    # The project folder is always watched: a missing folder ("later") appears there, a file there changes.
    assert _plan(tmp_path, "later/*.txt", "index.txt") == (["."], ["index.txt"], [])
    assert _plan(tmp_path, "data/*.csv") == ([".", "data"], ["data/a.csv"], [])
    assert _plan(tmp_path, "data/sub/*.json") == ([".", "data", "data/sub"], ["data/sub/b.json"], [])
    assert _plan(tmp_path, "data")[0] == [".", "data", "data/sub"]  # a folder's name covers all below it
    assert _plan(tmp_path, "**/*.csv")[0] == [".", "data", "other", "data/sub", "other/deep"]


def test_symbolic_links_to_folders_are_never_followed(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "x.csv").write_text("1")
    project.mkdir()
    (project / "data").symlink_to(outside, target_is_directory=True)
    (project / "real").mkdir()
    (project / "real" / "inner").symlink_to(project / "real", target_is_directory=True)  # a loop, too
    assert _plan(project, "data/*.csv", "real/**") == ([".", "real"], [], ["data", "real/inner"])


def test_the_watched_folders_are_bounded(tmp_path: Path) -> None:
    for i in range(5):
        (tmp_path / f"d{i}").mkdir()
    plan = plan_folders(tmp_path, [WatchPattern("**")], limit=3)
    assert len(plan.folders) == 3 and plan.truncated
