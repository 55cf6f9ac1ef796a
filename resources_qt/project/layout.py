"""Where each part of a project file sits in its text, so a save can rewrite only the parts that changed."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from resources_qt.project import render
from resources_qt.project.limits import NOT_STRUCTURE

if TYPE_CHECKING:
    from resources_qt.project.model import Project

__all__ = ["Group", "Layout", "build_layout", "split_groups"]

_KINDS = frozenset({"server", "upstreams", "resources", "tests"})

_HEADER_LINE = re.compile(r"^[ \t]*(\[\[?)[ \t]*([^\]\n]*?)[ \t]*\]", re.MULTILINE)
_BARE = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class Group:
    """One top-level table of the file (`[server]`, one `[[resources]]` entry with its sub-tables...).

    `text` is the table's exact text, from its header to the next top-level
    header, trailing blank lines and comments included. `fingerprint` is the
    canonical rendering of what the model held when the text was read or
    written: equal fingerprints mean the text can be written again unchanged.
    """

    kind: str
    text: str
    fingerprint: str = ""
    name: str = ""
    address: str = ""
    body: str = ""
    """The reader (resources) or another identifying value, to recognise a renamed entry."""


@dataclass(frozen=True)
class Layout:
    """A project file cut into its top part (keys before the first table) and its tables, in file order."""

    top: Group
    groups: tuple[Group, ...] = field(default_factory=tuple)

    def of_kind(self, kind: str) -> list[Group]:
        return [group for group in self.groups if group.kind == kind]


def _comments_above(text: str, start: int) -> int:
    """Where the comment lines right above a header begin: they introduce that table, so they move with it."""
    while start > 0:
        line_start = text.rfind("\n", 0, start - 1) + 1
        if not text[line_start : start - 1].lstrip(" \t").startswith("#"):
            break
        start = line_start
    return start


def split_groups(text: str, kinds: frozenset[str]) -> tuple[str, list[tuple[str, str, bool]]] | None:
    """The text before the first table, and each top-level table as (name, text, is_array_entry).

    Returns None when the file is not laid out one table per entry (a header
    with a quoted or unknown name, a top part that sets tables with dotted keys
    or inline arrays): such a file is saved in the standard layout instead.
    """
    cuts: list[tuple[int, str, bool]] = []
    spans = NOT_STRUCTURE.finditer(text)
    span = next(spans, None)
    for header in _HEADER_LINE.finditer(text):
        pos = header.start(1)
        while span is not None and span.end() <= pos:
            span = next(spans, None)
        if span is not None and span.start() <= pos:
            continue  # a `[` inside a multi-line string
        parts = [part.strip() for part in header.group(2).split(".")]
        if not all(_BARE.fullmatch(part) for part in parts) or parts[0] not in kinds:
            return None
        if len(parts) > 1 and (not cuts or cuts[-1][1] != parts[0]):
            # A sub-table away from its table (`[server.auth]` after a `[[resources]]` entry) would be
            # cut into the wrong entry's text: saved in the standard layout instead.
            return None
        if len(parts) == 1:
            cuts.append((_comments_above(text, header.start()), parts[0], header.group(1) == "[["))
    top = text[: cuts[0][0]] if cuts else text
    try:
        top_keys = set(tomllib.loads(top))
    except tomllib.TOMLDecodeError:
        return None
    if top_keys & kinds:
        return None
    groups = []
    for index, (start, name, is_entry) in enumerate(cuts):
        end = cuts[index + 1][0] if index + 1 < len(cuts) else len(text)
        groups.append((name, text[start:end], is_entry))
    return top, groups


def build_layout(text: str, project: Project) -> Layout | None:
    """The layout of `text`, which was just parsed into `project`; None when it is not one table per entry."""
    split = split_groups(text, _KINDS)
    if split is None:
        return None
    top, raw = split
    kinds = [name for name, _text, _entry in raw]
    expected = {"server": None, "resources": len(project.resources), "tests": len(project.tests)}
    if kinds.count("server") > 1 or any(
        is_entry != (name != "server") for name, _text, is_entry in raw
    ):
        return None
    if kinds.count("resources") != expected["resources"] or kinds.count("tests") != expected["tests"]:
        return None
    if kinds.count("upstreams") != len(project.upstreams):
        return None
    upstreams = iter(project.upstreams)
    resources = iter(project.resources)
    tests = iter(project.tests)
    groups: list[Group] = []
    for name, chunk, _entry in raw:
        if name == "server":
            groups.append(Group("server", chunk, render.server_text(project.server)))
        elif name == "upstreams":
            upstream = next(upstreams)
            groups.append(Group("upstreams", chunk, render.upstream_text(upstream), upstream.name))
        elif name == "resources":
            spec = next(resources)
            groups.append(
                Group("resources", chunk, render.resource_text(spec), spec.name, spec.key, spec.reader)
            )
        else:
            test = next(tests)
            groups.append(Group("tests", chunk, render.test_text(test), test.name, test.uri))
    return Layout(top=Group("top", top, render.top_text(project)), groups=tuple(groups))
