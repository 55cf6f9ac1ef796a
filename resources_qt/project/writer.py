"""Saving project files: what changed is rewritten in place (comments, order and style kept), atomically."""

from __future__ import annotations

import logging
import os
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from resources_qt.errors import ValidationError
from resources_qt.project import render
from resources_qt.project.atomic import write_atomic
from resources_qt.project.auth_settings import auth_entries
from resources_qt.project.layout import Group, Layout
from resources_qt.project.loader import read_resource_table, read_server_table
from resources_qt.project.model import Project, ResourceSpec, ServerSettings
from resources_qt.snippets.kinds import PRELUDE, RESOURCE_KINDS
from resources_qt.testing.spec import TestSpec, TestSpecError, parse_test

if TYPE_CHECKING:
    import tomlkit

__all__ = ["SCHEMA_DIRECTIVE", "SCHEMA_FILE_NAME", "dumps_project", "render_project", "save_project"]

logger = logging.getLogger(__name__)

SCHEMA_FILE_NAME = "resource-studio.schema.json"
"""The project file's JSON Schema beside it (`resource-studio schema --output`; see `resources_qt.lint.schema`)."""
SCHEMA_DIRECTIVE = f"#:schema ./{SCHEMA_FILE_NAME}"
"""The first line of a file in the standard layout: editors with TOML schema support (Taplo) validate by it."""

_RESOURCE_EMPTY: dict[str, Any] = {
    "name": "",
    "title": "",
    "description": "",
    "uri": "",
    "uri_template": "",
    "mime_type": "",
    "size": None,
    "samples": [],
    "icons": [],
    "annotations": {},
    "completions": {},
    "cache": None,
    "scopes": [],
    "unchecked_values": False,
    "watch": None,
    **{kind.key: "" for kind in RESOURCE_KINDS},
}


def dumps_project(project: Project) -> str:
    """The project as TOML; loading the result gives the same project.

    A project read from a file is written in that file's layout: parts that
    did not change come out byte for byte, changed values are replaced where
    they stand (their comments kept), removed entries dropped, new ones added
    in the standard layout. A project built in code gets the standard layout.
    """
    return render_project(project)[0]


def render_project(project: Project) -> tuple[str, Layout]:
    """The TOML text and its layout (what `save_project` stores on the project for the next save)."""
    return _Renderer(project).run()


def save_project(project: Project, path: str | os.PathLike[str] | None = None) -> Path:
    """Write the project atomically (see `write_atomic`); returns the path written.

    A crash or error during the save leaves either the old file or the new
    one, never a truncated mix, and no temporary file behind. The file keeps
    its mode and owner; a symlink stays a symlink (a dangling one is refused).

    Raises:
        ValidationError: the project has no path yet, or holds a string TOML
            cannot carry (-32602); nothing is written then.
        ProjectError: the path is a dangling symlink or a folder.
        OSError: the directory or disk refused the write; the old file is intact.
    """
    target = Path(path) if path is not None else project.path
    if target is None:
        raise ValidationError("The project has no file name yet; give a path to save it to")
    text, layout = render_project(project)
    data = text.encode("utf-8")
    write_atomic(target, data)
    project.path = target
    project.layout = layout
    logger.info("Saved project %s (%d resources, %d bytes)", target, len(project.resources), len(data))
    return target


@dataclass
class _Piece:
    kind: str
    text: str
    fingerprint: str
    name: str = ""
    address: str = ""
    body: str = ""
    fresh: bool = False


class _Renderer:
    """Builds the file from the old layout's texts and the model, one top-level table at a time."""

    def __init__(self, project: Project) -> None:
        self._project = project
        self._layout = project.layout
        self._pieces: list[_Piece] = []

    def run(self) -> tuple[str, Layout]:
        project, layout = self._project, self._layout
        self._top()
        emitted: set[str] = set()
        if layout is not None:
            for group in layout.groups:
                if group.kind not in emitted:
                    emitted.add(group.kind)
                    self._emit_kind(group.kind)
        if "server" not in emitted and (layout is None or project.server != ServerSettings()):
            self._emit_kind("server")
        for kind in ("upstreams", "resources", "tests"):
            if kind not in emitted:
                self._emit_kind(kind)
        if layout is not None:
            # Keep the file's own ending (a final newline or not) whatever was added or removed.
            old = (layout.groups[-1] if layout.groups else layout.top).text
            last = self._pieces[-1]
            if last.text.rstrip("\n"):
                last.text = last.text.rstrip("\n") + old[len(old.rstrip("\n")) :]
        text = "".join(piece.text for piece in self._pieces)
        groups = tuple(
            Group(p.kind, p.text, p.fingerprint, name=p.name, address=p.address, body=p.body)
            for p in self._pieces[1:]
        )
        top = self._pieces[0]
        return text, Layout(top=Group("top", top.text, top.fingerprint), groups=groups)

    # -- pieces ----------------------------------------------------------------

    def _add(self, piece: _Piece, *, fresh: bool) -> None:
        piece.fresh = fresh
        if self._pieces:
            before = self._pieces[-1]
            if not before.text.endswith("\n"):
                before.text += "\n"
            if (fresh or before.fresh) and not before.text.endswith("\n\n"):
                # A new table is set off by a blank line, as in the standard layout.
                before.text += "\n"
        self._pieces.append(piece)

    def _top(self) -> None:
        project = self._project
        fingerprint = render.top_text(project)
        old = self._layout.top if self._layout is not None else None
        if old is None:
            self._add(_Piece("top", f"{SCHEMA_DIRECTIVE}\n{fingerprint}", fingerprint), fresh=False)
            return
        text = old.text if old.fingerprint == fingerprint else self._edit_top(old.text)
        if old.text.startswith("#:schema") and not text.startswith("#:schema"):
            # The top was rewritten in the standard layout: the file's schema line stays its first line.
            text = old.text.split("\n", 1)[0] + "\n" + text
        self._add(_Piece("top", text, fingerprint), fresh=False)

    def _edit_top(self, old: str) -> str:
        prelude, key = self._project.prelude, PRELUDE.key
        entries = {"format": 1, **({key: prelude} if prelude else {})}
        full = {"format": 1, key: prelude}

        def check(text: str) -> bool:
            data = tomllib.loads(text)
            return data.get(key, "") == prelude and data.get("format") == 1

        if prelude and key not in tomllib.loads(old):
            # A new prelude goes below what is there, after a blank line, as in the standard layout.
            stripped = old.rstrip("\n")
            tail = old[len(stripped) :] or "\n"
            text = f"{stripped}\n\n{key} = {render.block(prelude)}{tail}"
            return text if check(text) else render.top_text(self._project)
        from resources_qt.project.table_edit import apply_entries, edit_text  # tomlkit: see table_edit

        edited = edit_text(
            old, lambda doc: apply_entries(doc, entries, full=full, order=["format", key]), check, what="the top"
        )
        return edited if edited is not None else render.top_text(self._project)

    def _emit_kind(self, kind: str) -> None:
        if kind == "server":
            self._emit_server()
        elif kind == "upstreams":
            # An upstream is a few plain keys: kept as written while unchanged, else written anew.
            known = {g.name: g for g in self._layout.of_kind("upstreams")} if self._layout is not None else {}
            for upstream in self._project.upstreams:
                fingerprint = render.upstream_text(upstream)
                old = known.get(upstream.name)
                same = old is not None and old.fingerprint == fingerprint
                self._add(_Piece("upstreams", old.text if same and old else fingerprint, fingerprint, upstream.name),
                          fresh=not same)  # fmt: skip
        elif kind == "resources":
            olds = self._layout.of_kind("resources") if self._layout is not None else []
            for spec, old in zip(self._project.resources, _match(olds, self._project.resources), strict=True):
                self._emit_resource(spec, old)
        elif kind == "tests":
            olds = self._layout.of_kind("tests") if self._layout is not None else []
            for test, old in zip(self._project.tests, _match_tests(olds, self._project.tests), strict=True):
                self._emit_test(test, old)

    def _emit_server(self) -> None:
        server = self._project.server
        fingerprint = render.server_text(server)
        olds = self._layout.of_kind("server") if self._layout is not None else []
        text = None
        if olds and olds[0].fingerprint == fingerprint:
            text = olds[0].text
        elif olds:
            auth = auth_entries(server.auth)
            full = {name: getattr(server, name) for name in ServerSettings.__dataclass_fields__}
            full["auth"] = auth or None
            entries = render.server_entries(server)

            def check(edited: str) -> bool:
                return read_server_table(tomllib.loads(edited)["server"]) == server

            from resources_qt.project.table_edit import apply_entries, edit_text, table_of

            def edit(doc: tomlkit.TOMLDocument) -> None:
                table = table_of(doc["server"])
                # `[server.auth]` edited where it stands (its comments kept) or, when new, added as a table.
                kept = auth and "auth" in table
                apply_entries(table, {**entries, "auth": auth} if kept else entries, full=full, order=list(full))
                if auth and "auth" not in table:
                    import tomlkit

                    added = tomlkit.table()
                    for name, item in auth.items():
                        added.add(name, item)
                    if olds[0].text.endswith("\n\n"):
                        added.add(tomlkit.nl())  # the blank line that set the table off from the next one
                    table.add("auth", added)

            text = edit_text(olds[0].text, edit, check, what="[server]")
        self._add(_Piece("server", text or fingerprint, fingerprint), fresh=text is None)

    def _emit_resource(self, spec: ResourceSpec, old: Group | None) -> None:
        fingerprint = render.resource_text(spec)
        text = None
        if old is not None and old.fingerprint == fingerprint:
            text = old.text
        elif old is not None:
            entries = render.resource_entries(spec)
            full = {**_RESOURCE_EMPTY, **entries}

            def check(edited: str) -> bool:
                return read_resource_table(tomllib.loads(edited)["resources"][0]) == spec

            from resources_qt.project.table_edit import apply_entries, edit_text, entry_of

            def edit(doc: tomlkit.TOMLDocument) -> None:
                apply_entries(entry_of(doc, "resources"), entries, full=full, order=render.RESOURCE_ORDER,
                              same=_same_resource)  # fmt: skip

            text = edit_text(
                old.text,
                edit,
                check,
                what=f"resource {spec.name!r}",
            )
        piece = _Piece("resources", text or fingerprint, fingerprint, spec.name, spec.key, spec.reader)
        self._add(piece, fresh=text is None)

    def _emit_test(self, test: TestSpec, old: Group | None) -> None:
        fingerprint = render.test_text(test)
        text = None
        if old is not None and old.fingerprint == fingerprint:
            text = old.text
        elif old is not None:
            entries = render.test_entries(test)

            def check(edited: str) -> bool:
                try:
                    return parse_test(tomllib.loads(edited)["tests"][0]) == test
                except TestSpecError:
                    return False

            from resources_qt.project.table_edit import apply_entries, edit_text, entry_of

            text = edit_text(
                old.text,
                lambda doc: apply_entries(entry_of(doc, "tests"), entries, full=entries, order=list(entries)),
                check,
                what=f"test {test.name!r}",
            )
        self._add(_Piece("tests", text or fingerprint, fingerprint, test.name, test.uri), fresh=text is None)


def _match(olds: Sequence[Group], specs: Sequence[ResourceSpec]) -> list[Group | None]:
    """Which old table each resource was: same name, else same address, else same reader (a rename)."""
    return _pair(olds, [(spec.name, spec.key, spec.reader) for spec in specs])


def _match_tests(olds: Sequence[Group], tests: Sequence[TestSpec]) -> list[Group | None]:
    return _pair(olds, [(test.name, test.uri, "") for test in tests])


def _pair(olds: Sequence[Group], wanted: Sequence[tuple[str, str, str]]) -> list[Group | None]:
    result: list[Group | None] = [None] * len(wanted)
    free = list(olds)
    for attr, position in (("name", 0), ("address", 1), ("body", 2)):
        index: dict[str, list[Group]] = {}
        for group in free:
            value = getattr(group, attr)
            if value:
                index.setdefault(value, []).append(group)
        for i, keys in enumerate(wanted):
            if result[i] is None and keys[position] and index.get(keys[position]):
                group = index[keys[position]].pop(0)
                result[i] = group
                free.remove(group)
    # An entry whose name, address and reader all changed is taken for a new one: pairing by
    # position instead would give a resource added where one was deleted the other's comments.
    return result


def _same_resource(name: str, old: Any, new: Any) -> bool:
    """Equal as the loader reads them: a cache hint without a scope is private."""
    if name == "cache" and isinstance(old, dict) and isinstance(new, dict):
        return {"ttl_ms": 0, "scope": "private", **old} == new
    return bool(old == new)
