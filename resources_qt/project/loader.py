"""Loading project files: TOML in, a validated `Project` out, errors pointing at file and line."""

from __future__ import annotations

import datetime
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from resources_qt.errors import ValidationError
from resources_qt.project.auth_settings import parse_auth, scopes_problem
from resources_qt.project.layout import build_layout
from resources_qt.project.limits import MAX_FILE_BYTES, check_file_size, check_text
from resources_qt.project.model import (
    FORMAT_VERSION,
    Project,
    ProjectError,
    ResourceSpec,
    ServerSettings,
    WatchSpec,
    placeholder_reader,
)
from resources_qt.project.settings_table import SETTINGS
from resources_qt.project.upstreams import UpstreamSpec, parse_upstream, upstream_problem
from resources_qt.resource import Annotations, CacheHint, Icon
from resources_qt.snippets.kinds import KINDS, PRELUDE, RESOURCE_KINDS
from resources_qt.templates import compile_template
from resources_qt.testing.spec import TestSpec, TestSpecError, parse_tests

__all__ = ["load_project", "loads_project", "read_resource_table", "read_server_table"]

_TOP_KEYS = {
    "format", "server", "upstreams", "resources", "tests", *(kind.key for kind in KINDS if not kind.per_resource),
}
_SNIPPET_KEYS = tuple(kind.key for kind in RESOURCE_KINDS)
_SERVER_KEYS = {row.key for row in SETTINGS}
_SERVER_TABLES = {"auth"}
"""`[server]` sub-tables: `[server.auth]` (resources_qt.project.auth_settings)."""
_RESOURCE_KEYS = set(ResourceSpec.__dataclass_fields__)
_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)")


def _field_error(key: str, message: str) -> ValidationError:
    """A problem with one key, so the loader can point at that key's line and the form can mark it."""
    return ValidationError(message, field=key)


def load_project(path: str | os.PathLike[str], *, strict: bool = True) -> Project:
    """Read and validate a project file.

    With `strict=False` a resource that could not serve (no name, no or two
    addresses, an invalid template, a duplicate...) is loaded as written, so
    the studio can open work in progress and mark it; the file must still be
    well-formed TOML of this format with keys of the right types.

    Raises:
        ProjectError: the file is missing, unreadable, over the limits of
            `resources_qt.project.limits` (16 MB, 1 MiB lines, 32-part keys,
            32 levels of nesting; checked before parsing), not TOML, of an
            unknown format, or declares an invalid or duplicate resource or
            test; the message names the file, the line or resource, and the
            problem, and `field` the key at fault where there is one.
    """
    path = Path(path)
    try:
        with path.open("rb") as handle:
            check_file_size(os.fstat(handle.fileno()).st_size, source=str(path))
            # Read at most one byte past the limit: a file growing meanwhile is still refused.
            data = handle.read(MAX_FILE_BYTES + 1)
        # Universal newlines, as Path.read_text gives: snippets see "\n" whatever the file's line endings.
        text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except FileNotFoundError:
        raise ProjectError("no such project file", source=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProjectError(f"cannot read the project file: {exc}", source=str(path)) from exc
    project = loads_project(text, source=str(path), strict=strict)
    project.path = path
    return project


def loads_project(text: str, *, source: str = "<project>", strict: bool = True) -> Project:
    """Parse and validate project TOML; see `load_project`. Nothing is returned unless all of it is valid."""
    check_text(text, source=source)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_POSITION.search(str(exc))
        line = int(found.group(1)) if found else None
        message = _TOML_POSITION.sub("", str(exc)).strip()
        raise ProjectError(f"invalid TOML: {message}", source=source, line=line) from exc
    except RecursionError as exc:
        raise ProjectError("invalid TOML: nested too deeply", source=source) from exc
    project = _Loader(text, source, strict=strict).parse(data)
    # Kept so a save rewrites only what changed; the scan is linear and skipped for odd layouts. Built
    # at the first save (40 ms for 1,000 resources that opening a project need not wait for), from a
    # copy of the project as read: the model may be edited in place before then.
    as_read = project.copy()
    project.defer_layout(lambda: build_layout(text, as_read))
    return project


def read_resource_table(raw: Any) -> ResourceSpec:
    """One parsed `[[resources]]` table as a spec, types checked but not whether it can serve."""
    return _read_resource(raw)


def read_server_table(raw: Any) -> ServerSettings:
    """A parsed `[server]` table as settings, types checked but not ranges."""
    return _parse_server(raw, check=False)


class _Loader:
    """Turns parsed TOML into a `Project`, pointing errors at the offending line."""

    def __init__(self, text: str, source: str, *, strict: bool) -> None:
        self._text = text
        self._source = source
        self._strict = strict
        self._where: _Locations | None = None

    @property
    def where(self) -> _Locations:
        # Only an error needs line numbers; the happy path skips the scan.
        if self._where is None:
            self._where = _locate(self._text)
        return self._where

    def fail(self, message: str, line: int | None = None, *, field: str | None = None) -> ProjectError:
        return ProjectError(message, source=self._source, line=line, field=field)

    def parse(self, data: dict[str, Any]) -> Project:
        unknown = set(data) - _TOP_KEYS
        if unknown:
            first = min(unknown, key=lambda k: self.where.top.get(k, 0))
            raise self.fail(
                f"unknown top-level key(s): {', '.join(sorted(unknown))} "
                f"(known: {', '.join(sorted(_TOP_KEYS))})",
                self.where.top.get(first) or self.where.table_line(first),
            )
        if "format" not in data:
            raise self.fail(
                f"missing 'format = {FORMAT_VERSION}' at the top; is this a Resource Studio project?", 1
            )
        fmt = data["format"]
        if fmt != FORMAT_VERSION or isinstance(fmt, bool):
            raise self.fail(
                f"unsupported format {fmt!r}; this version of Resource Studio reads "
                f"format = {FORMAT_VERSION}",
                self.where.top.get("format"),
            )
        server = self._server(data.get("server", {}))
        prelude = data.get(PRELUDE.key, "")
        if not isinstance(prelude, str):
            raise self.fail(
                f"{PRELUDE.key} must be a string, not {_type_name(prelude)}", self.where.top.get(PRELUDE.key)
            )
        raw_resources = data.get("resources", [])
        if not isinstance(raw_resources, list):
            raise self.fail(
                f"resources must be an array of tables ([[resources]]), not {_type_name(raw_resources)}",
                self.where.top.get("resources") or self.where.table_line("resources"),
            )
        resources: list[ResourceSpec] = []
        names: dict[str, int] = {}
        keys: dict[str, int] = {}
        for index, raw in enumerate(raw_resources):
            spec = self._resource(index, raw)
            resources.append(spec)
            if not self._strict:
                continue
            label = f"resource {spec.name!r}"
            if spec.name in names:
                raise self.fail(
                    f"{label}: duplicate name (resource #{names[spec.name] + 1} has it too)",
                    self.where.key_line(index, "name"),
                    field="name",
                )
            if spec.key in keys:
                kind = "URI template" if spec.is_template else "URI"
                earlier = keys[spec.key]
                raise self.fail(
                    f"{label}: duplicate {kind} {spec.key!r} "
                    f"(already declared by resource #{earlier + 1}, {resources[earlier].name!r})",
                    self.where.key_line(index, "uri_template" if spec.is_template else "uri"),
                    field="uri_template" if spec.is_template else "uri",
                )
            names[spec.name] = index
            keys[spec.key] = index
        upstreams = self._upstreams(data)
        if self._strict:
            used = {spec.name: spec.upstream for spec in resources if spec.upstream}
            problem = upstream_problem(upstreams, used)
            if problem is not None:
                raise self.fail(problem[1], self.where.table_line("upstreams") if problem[0] != "upstream" else None,
                                field=problem[0])  # fmt: skip
        return Project(server=server, prelude=prelude, resources=resources, tests=self._tests(data),
                       upstreams=upstreams)  # fmt: skip

    def _upstreams(self, data: dict[str, Any]) -> list[UpstreamSpec]:
        raw = data.get("upstreams", [])
        if not isinstance(raw, list):
            raise self.fail(f"upstreams must be an array of tables ([[upstreams]]), not {_type_name(raw)}",
                            self.where.table_line("upstreams"), field="upstreams")  # fmt: skip
        found: list[UpstreamSpec] = []
        for index, entry in enumerate(raw):
            try:
                found.append(parse_upstream(entry))
            except ValueError as exc:
                key = str(exc.args[1]) if len(exc.args) > 1 else None
                raise self.fail(f"upstreams[{index}]: {exc.args[0]}", self.where.table_line("upstreams"),
                                field=key) from None  # fmt: skip
        return found

    def _tests(self, data: dict[str, Any]) -> list[TestSpec]:
        if "tests" not in data:
            return []
        try:
            return parse_tests(data["tests"])
        except TestSpecError as exc:
            line: int | None
            if exc.index < len(self.where.tests):
                header, keys = self.where.tests[exc.index]
                line = keys.get(exc.key, header) if exc.key is not None else header
            else:
                line = self.where.top.get("tests") or self.where.table_line("tests")
            at = f"tests[{exc.index}].{exc.key}" if exc.key else f"tests[{exc.index}]"
            raise self.fail(exc.message, line, field=at) from exc

    def _server(self, raw: Any) -> ServerSettings:
        if not isinstance(raw, dict):
            raise self.fail(f"[server] must be a table, not {_type_name(raw)}", self.where.top.get("server"))
        try:
            return _parse_server(raw)
        except ValidationError as exc:
            line = self._server_line(exc.field)
            raise self.fail(f"[server]: {exc.message}", line, field=exc.field) from exc

    def _server_line(self, key: str | None) -> int | None:
        where = self.where
        if key is not None and key.startswith("auth"):
            sub = key.partition(".")[2]
            return (
                where.auth.get(sub) or where.table_line("server.auth") or where.server.get("auth")
                or where.table_line("server")
            )  # fmt: skip
        return (where.server.get(key) if key else None) or where.table_line("server")

    def _resource(self, index: int, raw: Any) -> ResourceSpec:
        label = f"resource #{index + 1}"
        if isinstance(raw, dict) and isinstance(raw.get("name"), str) and raw["name"].strip():
            label = f"resource {raw['name']!r}"
        try:
            return _parse_resource(raw, strict=self._strict)
        except ValidationError as exc:
            # The model's messages name the resource too; say it once.
            message = re.sub(r"^Resource '.*?'(: | )", "", exc.message)
            raise self.fail(f"{label}: {message}", self.where.key_line(index, exc.field), field=exc.field) from exc


_TYPE_NAMES: dict[type, str] = {
    str: "a string",
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    list: "an array",
    dict: "a table",
}


def _type_name(value: object) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def _expect(value: Any, kind: type | tuple[type, ...], key: str, what: str | None = None) -> Any:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    # TOML booleans are Python ints; a boolean is never a number here.
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        # An int is a fine float, so (float, int) reads as just "a number".
        names = dict.fromkeys(
            "a number" if k is int and float in kinds else _TYPE_NAMES.get(k, k.__name__) for k in kinds
        )
        expected = " or ".join(names)
        raise _field_error(key, f"{what or key} must be {expected}, not {_type_name(value)}")
    return value


def _parse_server(data: dict[str, Any], *, check: bool = True) -> ServerSettings:
    unknown = set(data) - _SERVER_KEYS - _SERVER_TABLES
    if unknown:
        known = sorted(_SERVER_KEYS | _SERVER_TABLES)
        raise _field_error(
            min(unknown),
            f"unknown key(s): {', '.join(sorted(unknown))} (known: {', '.join(known)})",
        )
    settings = ServerSettings()
    if "auth" in data:
        # Checked whole here, strict or not: a half-valid authorization table must never serve.
        settings.auth = parse_auth(data["auth"])
    for row in SETTINGS:
        if row.key not in data:
            continue
        kinds: type | tuple[type, ...] = (float, int) if row.kind is float else row.kind
        if row.word:
            kinds = (row.kind, str)  # the word or a number; the row's problem() says which words
        value = _expect(data[row.key], kinds, row.key)
        setattr(settings, row.key, float(value) if row.kind is float else value)
    problem = settings.problem() if check else None
    if problem is not None:
        raise _field_error(*problem)
    return settings


def _str_list(value: Any, key: str, what: str | None = None) -> list[str]:
    items = _expect(value, list, key, what)
    for item in items:
        _expect(item, str, key, f"each of {what or key}")
    return list(items)


def _parse_resource(raw: Any, *, strict: bool = True) -> ResourceSpec:
    """Read one `[[resources]]` table; `strict` also checks it is a declaration that can serve."""
    spec = _read_resource(raw)
    if strict:
        _check_resource(spec)
    return spec


def _read_resource(raw: Any) -> ResourceSpec:
    """The entry's keys with their types checked: what the file says, servable or not."""
    if not isinstance(raw, dict):
        raise ValidationError(f"a [[resources]] entry must be a table, not {_type_name(raw)}")
    data: dict[str, Any] = raw
    unknown = set(data) - _RESOURCE_KEYS
    if unknown:
        raise _field_error(
            min(unknown),
            f"unknown key(s): {', '.join(sorted(unknown))} (known: {', '.join(sorted(_RESOURCE_KEYS))})",
        )
    spec = ResourceSpec()
    for key in ("name", "title", "description", "uri", "uri_template", "mime_type", "upstream", *_SNIPPET_KEYS):
        if key in data:
            setattr(spec, key, _expect(data[key], str, key))
    if "size" in data:
        spec.size = _expect(data["size"], int, "size")
    if "unchecked_values" in data:
        spec.unchecked_values = _expect(data["unchecked_values"], bool, "unchecked_values")
    if "samples" in data:
        spec.samples = _str_list(data["samples"], "samples")
    if "scopes" in data:
        spec.scopes = _str_list(data["scopes"], "scopes")
        # Refused even while loading work in progress: a scope list that cannot be checked must not serve.
        problem = scopes_problem(spec.scopes, "scopes")
        if problem is not None:
            raise _field_error("scopes", problem)
    spec.icons = [_parse_icon(item) for item in _expect(data.get("icons", []), list, "icons")]
    if "annotations" in data:
        spec.annotations = _parse_annotations(_expect(data["annotations"], dict, "annotations"))
    if "completions" in data:
        table = _expect(data["completions"], dict, "completions")
        spec.completions = {
            name: _str_list(values, "completions", f"completions.{name}") for name, values in table.items()
        }
    if "cache" in data:
        spec.cache = _parse_cache(_expect(data["cache"], dict, "cache"))
    if "watch" in data:
        watch = _parse_watch(_expect(data["watch"], dict, "watch"))
        spec.watch = None if watch.is_empty else watch
    return spec


def _check_resource(spec: ResourceSpec) -> None:
    """Raise for the first reason the declaration could not serve, pointed at its key."""
    if not spec.name.strip():
        raise _field_error("name", "name must not be empty")
    if spec.uri and spec.uri_template:
        raise _field_error("uri_template", "Cannot set both URI and URITemplate (give uri or uri_template)")
    if not spec.uri and not spec.uri_template:
        raise ValidationError("needs a uri or a uri_template")
    if spec.uri:
        try:
            # The declaration's own URI checks, pointed at the uri key.
            ResourceSpec(name=spec.name, uri=spec.uri).to_resource(placeholder_reader).validate()
        except ValidationError as exc:
            raise _field_error("uri", exc.message) from exc
    variables: tuple[str, ...] = ()
    if spec.uri_template:
        try:
            variables = compile_template(spec.uri_template).variable_names
        except ValidationError as exc:
            raise _field_error("uri_template", exc.message) from exc
    if spec.size is not None and spec.size < 0:
        raise _field_error("size", f"size must not be negative, not {spec.size}")
    if any(not sample.strip() for sample in spec.samples):
        raise _field_error("samples", "a sample URI is empty")
    if spec.completions:
        if not spec.uri_template:
            raise _field_error("completions", "completions need a uri_template")
        unknown = set(spec.completions) - set(variables)
        if unknown:
            raise _field_error(
                "completions",
                f"completions name unknown variable(s) {', '.join(sorted(unknown))} "
                f"(the template has {', '.join(variables)})",
            )
    for kind in RESOURCE_KINDS:
        if kind.template_only and not spec.uri_template and getattr(spec, kind.key).strip():
            raise _field_error(kind.key, kind.needs_template())
    # Anything the checks above missed, in the builder's words.
    spec.validate()


def _parse_icon(raw: Any) -> Icon:
    icon = _expect(raw, dict, "icons", "each icon")
    extra = set(icon) - {"src", "mime_type", "sizes"}
    if extra:
        raise _field_error(
            "icons", f"unknown icon key(s): {', '.join(sorted(extra))} (known: mime_type, sizes, src)"
        )
    src = _expect(icon.get("src", ""), str, "icons", "icon src")
    mime = icon.get("mime_type")
    if mime is not None:
        mime = _expect(mime, str, "icons", "icon mime_type")
    sizes = _str_list(icon.get("sizes", []), "icons", "icon sizes")
    try:
        return Icon(src, mime, tuple(sizes))
    except ValidationError as exc:
        raise _field_error("icons", exc.message) from exc


def _parse_annotations(ann: dict[str, Any]) -> Annotations:
    extra = set(ann) - {"audience", "priority", "last_modified"}
    if extra:
        raise _field_error(
            "annotations",
            f"unknown annotation key(s): {', '.join(sorted(extra))} "
            "(known: audience, last_modified, priority)",
        )
    priority = ann.get("priority")
    if priority is not None:
        priority = float(_expect(priority, (float, int), "annotations", "annotations.priority"))
    audience = _str_list(ann.get("audience", []), "annotations", "annotations.audience")
    last_modified = ann.get("last_modified")
    if isinstance(last_modified, datetime.date | datetime.time):
        # An unquoted TOML date-time is fine; the wire wants ISO 8601 text.
        last_modified = last_modified.isoformat()
    elif last_modified is not None:
        last_modified = _expect(last_modified, str, "annotations", "annotations.last_modified")
    try:
        return Annotations(tuple(cast(Any, audience)), priority, last_modified)
    except ValidationError as exc:
        raise _field_error("annotations", exc.message) from exc


def _parse_watch(raw: dict[str, Any]) -> WatchSpec:
    extra = set(raw) - {"files", "interval"}
    if extra:
        raise _field_error("watch", f"unknown watch key(s): {', '.join(sorted(extra))} (known: files, interval)")
    watch = WatchSpec()
    if "files" in raw:
        watch.files = _str_list(raw["files"], "watch", "watch.files")
    if "interval" in raw:
        watch.interval = float(_expect(raw["interval"], (float, int), "watch", "watch.interval"))
    # Bad patterns and intervals are refused even while loading work in progress: they are never servable.
    problem = watch.problem()
    if problem is not None:
        raise _field_error(*problem)
    return watch


def _parse_cache(cache: dict[str, Any]) -> CacheHint:
    extra = set(cache) - {"ttl_ms", "scope"}
    if extra:
        raise _field_error("cache", f"unknown cache key(s): {', '.join(sorted(extra))} (known: scope, ttl_ms)")
    ttl = _expect(cache.get("ttl_ms", 0), int, "cache", "cache.ttl_ms")
    scope = _expect(cache.get("scope", "private"), str, "cache", "cache.scope")
    try:
        return CacheHint(ttl, scope)
    except ValidationError as exc:
        raise _field_error("cache", exc.message) from exc


@dataclass
class _Locations:
    """Where tables and keys sit in the file (1-based lines), found by a string-aware scan."""

    top: dict[str, int] = field(default_factory=dict)
    tables: dict[str, int] = field(default_factory=dict)
    server: dict[str, int] = field(default_factory=dict)
    auth: dict[str, int] = field(default_factory=dict)
    resources: list[tuple[int, dict[str, int]]] = field(default_factory=list)
    tests: list[tuple[int, dict[str, int]]] = field(default_factory=list)

    def table_line(self, name: str) -> int | None:
        return self.tables.get(name)

    def key_line(self, index: int, key: str | None) -> int | None:
        if index >= len(self.resources):
            # An inline `resources = [...]` array has no headers to point at.
            return self.top.get("resources")
        header, keys = self.resources[index]
        return keys.get(key, header) if key is not None else header


_HEADER = re.compile(r"\[\[?\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]\]?")
_KEY = re.compile(r"([A-Za-z0-9_-]+|\"[^\"\n]*\"|'[^'\n]*')\s*[.=]")
_QUOTES = ('"""', "'''", '"', "'")


def _locate(text: str) -> _Locations:
    """Find table headers and keys outside strings and comments.

    tomllib reports no positions for valid TOML, and a naive regex would
    mistake `x = 1` inside a reader snippet for a key.
    """
    found = _Locations()
    current = found.top
    line = 1
    i = 0
    n = len(text)
    quote = ""  # the open string's delimiter, "" outside strings
    line_start = True
    while i < n:
        ch = text[i]
        if not quote and line_start:
            line_start = False
            while i < n and text[i] in " \t":
                i += 1
            end = text.find("\n", i)
            rest = text[i : n if end < 0 else end]
            if rest.startswith("["):
                header = _HEADER.match(rest)
                name = header.group(1).replace(" ", "") if header else ""
                found.tables.setdefault(name, line)
                if rest.startswith("[[") and name in ("resources", "tests"):
                    current = {}
                    (found.resources if name == "resources" else found.tests).append((line, current))
                elif name == "server":
                    current = found.server
                elif name == "server.auth":
                    current = found.auth
                else:
                    entries = found.resources if name.startswith("resources.") else found.tests
                    if name.startswith(("resources.", "tests.")) and entries:
                        # A sub-table of the current entry, e.g. [[resources.icons]] or [tests.expect].
                        entries[-1][1].setdefault(name.split(".")[1], line)
                    current = {}
            else:
                key = _KEY.match(rest)
                if key:
                    current.setdefault(key.group(1).strip("\"'"), line)
            continue
        if not quote:
            if ch == "#":
                end = text.find("\n", i)
                i = n if end < 0 else end
                continue
            opened = next((q for q in _QUOTES if text.startswith(q, i)), "")
            if opened:
                quote = opened
                i += len(opened)
                continue
            if ch == "\n":
                line += 1
                line_start = True
            i += 1
            continue
        if ch == "\n":
            line += 1
            if len(quote) == 1:
                # An unterminated one-line string; tomllib has already complained.
                quote = ""
                line_start = True
            i += 1
        elif ch == "\\" and quote[0] == '"':
            i += 1 if text.startswith("\n", i + 1) else 2
        elif text.startswith(quote, i):
            i += len(quote)
            # A multi-line string may end with up to two quotes right before its delimiter.
            while len(quote) == 3 and text.startswith(quote[0], i):
                i += 1
            quote = ""
        else:
            i += 1
    return found
