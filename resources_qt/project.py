"""Project files: one readable TOML file holding the server settings, a prelude and the resources."""

from __future__ import annotations

import copy
import datetime
import logging
import math
import os
import re
import stat
import tempfile
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from resources_qt.errors import ValidationError
from resources_qt.resource import Annotations, CacheHint, Icon, Reader, Resource
from resources_qt.templates import compile_template

__all__ = [
    "FORMAT_VERSION",
    "Project",
    "ProjectError",
    "ResourceSpec",
    "ServerSettings",
    "dumps_project",
    "load_project",
    "loads_project",
    "save_project",
]

FORMAT_VERSION = 1

logger = logging.getLogger(__name__)


class ProjectError(ValidationError):
    """A project file could not be loaded; the message names the file, the place and the problem."""

    def __init__(self, message: str, *, source: str = "", line: int | None = None) -> None:
        where = source + (f":{line}" if line is not None else "")
        super().__init__(f"{where}: {message}" if where else message)
        self.source = source
        self.line = line


@dataclass
class ServerSettings:
    """The `[server]` table: identity, capabilities and runtime limits."""

    name: str = "Resource Studio"
    version: str = "0.1.0"
    instructions: str = ""
    notifications: bool = False
    subscriptions: bool = False
    reader_timeout: float = 5.0
    workers: int = 2
    memory_limit_mb: int = 1024
    page_size: int = 100
    cache_ttl_ms: int | None = None
    cache_scope: Literal["public", "private"] = "private"

    def validate(self) -> None:
        """Raise `ValidationError` (-32602) naming the first invalid setting."""
        problem = self.problem()
        if problem is not None:
            raise ValidationError(f"[server] {problem[1]}")

    def problem(self) -> tuple[str, str] | None:
        """The first invalid setting as (key, message), or None."""
        if not isinstance(self.name, str) or not self.name.strip():
            return "name", "name must not be empty"
        if not (self.reader_timeout > 0 and math.isfinite(self.reader_timeout)):
            return (
                "reader_timeout",
                f"reader_timeout must be a positive number of seconds, not {self.reader_timeout}",
            )
        checks = (("workers", 1), ("memory_limit_mb", 16), ("page_size", 1))
        for key, least in checks:
            if getattr(self, key) < least:
                return key, f"{key} must be at least {least}, not {getattr(self, key)}"
        if self.cache_ttl_ms is not None and self.cache_ttl_ms < 0:
            return "cache_ttl_ms", f"cache_ttl_ms must not be negative, not {self.cache_ttl_ms}"
        if self.cache_scope not in ("public", "private"):
            return "cache_scope", f"cache_scope must be 'public' or 'private', not {self.cache_scope!r}"
        return None

    @property
    def cache(self) -> CacheHint | None:
        return None if self.cache_ttl_ms is None else CacheHint(self.cache_ttl_ms, self.cache_scope)


@dataclass
class ResourceSpec:
    """One `[[resources]]` entry: a declaration plus its reader snippet, as the user wrote it."""

    name: str = ""
    title: str = ""
    description: str = ""
    uri: str = ""
    uri_template: str = ""
    mime_type: str = ""
    size: int | None = None
    icons: list[Icon] = field(default_factory=list)
    annotations: Annotations | None = None
    samples: list[str] = field(default_factory=list)
    completions: dict[str, list[str]] = field(default_factory=dict)
    complete: str = ""
    """Snippet source of `def complete(name, value, context)` for dynamic completions."""
    cache: CacheHint | None = None
    reader: str = ""
    """Snippet source of `def read(uri, params)`."""

    @property
    def is_template(self) -> bool:
        return bool(self.uri_template)

    @property
    def key(self) -> str:
        return self.uri_template or self.uri

    def to_resource(self, reader: Reader | None) -> Resource:
        """The declaration as a `Resource`, with `reader` as its reader (no validation)."""
        return Resource(
            name=self.name,
            uri=self.uri,
            uri_template=self.uri_template,
            title=self.title,
            description=self.description,
            mime_type=self.mime_type,
            icons=self.icons,
            annotations=self.annotations,
            size=self.size,
            reader=reader,
            completions=dict(self.completions),
            cache=self.cache,
        )

    def validate(self) -> None:
        """Raise `ValidationError` with the builder's message for the first problem.

        The reader's source is not compiled here; snippet errors are the
        snippet runtime's to report, with their line and column.
        """
        self.to_resource(_placeholder_reader).validate()
        for sample in self.samples:
            if not sample.strip():
                raise ValidationError(f"Resource {self.name!r}: a sample URI is empty")

    def sample_uris(self) -> list[str]:
        """The URIs to preview: the samples, or the URI itself for a direct resource."""
        if self.samples:
            return list(self.samples)
        return [self.uri] if self.uri else []


def _placeholder_reader(uri: str, params: Mapping[str, Any]) -> str:
    return ""


@dataclass
class Project:
    """A whole project: settings, the shared prelude and the resources in file order."""

    server: ServerSettings = field(default_factory=ServerSettings)
    prelude: str = ""
    resources: list[ResourceSpec] = field(default_factory=list)
    path: Path | None = None

    def find(self, name: str) -> ResourceSpec | None:
        return next((spec for spec in self.resources if spec.name == name), None)

    def validate(self) -> None:
        """Raise `ValidationError` for the first invalid setting, resource or duplicate."""
        self.server.validate()
        seen: dict[str, str] = {}
        for index, spec in enumerate(self.resources):
            label = f"resources[{index}] ({spec.name or 'unnamed'})"
            try:
                spec.validate()
            except ValidationError as exc:
                raise ValidationError(f"{label}: {exc.message}") from exc
            for kind, value in (("name", spec.name), ("address", spec.key)):
                token = f"{kind}:{value}"
                if token in seen:
                    raise ValidationError(f"{label}: duplicate {kind} {value!r} (also used by {seen[token]})")
                seen[token] = spec.name

    def copy(self) -> Project:
        """A copy that shares nothing mutable with this project (lists and tables included)."""
        return copy.deepcopy(self)


# -- loading -----------------------------------------------------------------

_TOP_KEYS = {"format", "server", "prelude", "resources"}
_SERVER_KEYS = set(ServerSettings.__dataclass_fields__)
_RESOURCE_KEYS = set(ResourceSpec.__dataclass_fields__)
_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)")


class _FieldError(ValidationError):
    """A problem with one key, so the loader can point at that key's line."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def load_project(path: str | os.PathLike[str]) -> Project:
    """Read and validate a project file.

    Raises:
        ProjectError: the file is missing, unreadable, not TOML, of an
            unknown format, or declares an invalid or duplicate resource;
            the message names the file, the line or resource, and the problem.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProjectError("no such project file", source=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProjectError(f"cannot read the project file: {exc}", source=str(path)) from exc
    project = loads_project(text, source=str(path))
    project.path = path
    return project


def loads_project(text: str, *, source: str = "<project>") -> Project:
    """Parse and validate project TOML; see `load_project`. Nothing is returned unless all of it is valid."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_POSITION.search(str(exc))
        line = int(found.group(1)) if found else None
        message = _TOML_POSITION.sub("", str(exc)).strip()
        raise ProjectError(f"invalid TOML: {message}", source=source, line=line) from exc
    except RecursionError as exc:
        raise ProjectError("invalid TOML: nested too deeply", source=source) from exc
    return _Loader(text, source).parse(data)


class _Loader:
    """Turns parsed TOML into a `Project`, pointing errors at the offending line."""

    def __init__(self, text: str, source: str) -> None:
        self._text = text
        self._source = source
        self._where: _Locations | None = None

    @property
    def where(self) -> _Locations:
        # Only an error needs line numbers; the happy path skips the scan.
        if self._where is None:
            self._where = _locate(self._text)
        return self._where

    def fail(self, message: str, line: int | None = None) -> ProjectError:
        return ProjectError(message, source=self._source, line=line)

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
        prelude = data.get("prelude", "")
        if not isinstance(prelude, str):
            raise self.fail(
                f"prelude must be a string, not {_type_name(prelude)}", self.where.top.get("prelude")
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
            label = f"resource {spec.name!r}"
            if spec.name in names:
                raise self.fail(
                    f"{label}: duplicate name (resource #{names[spec.name] + 1} has it too)",
                    self.where.key_line(index, "name"),
                )
            if spec.key in keys:
                kind = "URI template" if spec.is_template else "URI"
                earlier = keys[spec.key]
                raise self.fail(
                    f"{label}: duplicate {kind} {spec.key!r} "
                    f"(already declared by resource #{earlier + 1}, {resources[earlier].name!r})",
                    self.where.key_line(index, "uri_template" if spec.is_template else "uri"),
                )
            names[spec.name] = index
            keys[spec.key] = index
            resources.append(spec)
        return Project(server=server, prelude=prelude, resources=resources)

    def _server(self, raw: Any) -> ServerSettings:
        if not isinstance(raw, dict):
            raise self.fail(f"[server] must be a table, not {_type_name(raw)}", self.where.top.get("server"))
        try:
            return _parse_server(raw)
        except _FieldError as exc:
            line = self.where.server.get(exc.key) or self.where.table_line("server")
            raise self.fail(f"[server]: {exc.message}", line) from exc

    def _resource(self, index: int, raw: Any) -> ResourceSpec:
        label = f"resource #{index + 1}"
        if isinstance(raw, dict) and isinstance(raw.get("name"), str) and raw["name"].strip():
            label = f"resource {raw['name']!r}"
        try:
            return _parse_resource(raw)
        except ValidationError as exc:
            key = exc.key if isinstance(exc, _FieldError) else None
            # The model's messages name the resource too; say it once.
            message = re.sub(r"^Resource '.*?'(: | )", "", exc.message)
            raise self.fail(f"{label}: {message}", self.where.key_line(index, key)) from exc


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
        raise _FieldError(key, f"{what or key} must be {expected}, not {_type_name(value)}")
    return value


def _parse_server(data: dict[str, Any]) -> ServerSettings:
    unknown = set(data) - _SERVER_KEYS
    if unknown:
        raise _FieldError(
            min(unknown),
            f"unknown key(s): {', '.join(sorted(unknown))} (known: {', '.join(sorted(_SERVER_KEYS))})",
        )
    settings = ServerSettings()
    for key in ("name", "version", "instructions", "cache_scope"):
        if key in data:
            setattr(settings, key, _expect(data[key], str, key))
    for key in ("notifications", "subscriptions"):
        if key in data:
            setattr(settings, key, _expect(data[key], bool, key))
    for key in ("workers", "memory_limit_mb", "page_size", "cache_ttl_ms"):
        if key in data:
            setattr(settings, key, _expect(data[key], int, key))
    if "reader_timeout" in data:
        settings.reader_timeout = float(_expect(data["reader_timeout"], (float, int), "reader_timeout"))
    problem = settings.problem()
    if problem is not None:
        raise _FieldError(*problem)
    return settings


def _str_list(value: Any, key: str, what: str | None = None) -> list[str]:
    items = _expect(value, list, key, what)
    for item in items:
        _expect(item, str, key, f"each of {what or key}")
    return list(items)


def _parse_resource(raw: Any) -> ResourceSpec:
    if not isinstance(raw, dict):
        raise ValidationError(f"a [[resources]] entry must be a table, not {_type_name(raw)}")
    data: dict[str, Any] = raw
    unknown = set(data) - _RESOURCE_KEYS
    if unknown:
        raise _FieldError(
            min(unknown),
            f"unknown key(s): {', '.join(sorted(unknown))} (known: {', '.join(sorted(_RESOURCE_KEYS))})",
        )
    spec = ResourceSpec()
    for key in ("name", "title", "description", "uri", "uri_template", "mime_type", "complete", "reader"):
        if key in data:
            setattr(spec, key, _expect(data[key], str, key))
    if not spec.name.strip():
        raise _FieldError("name", "name must not be empty")
    if spec.uri and spec.uri_template:
        raise _FieldError("uri_template", "Cannot set both URI and URITemplate (give uri or uri_template)")
    if not spec.uri and not spec.uri_template:
        raise ValidationError("needs a uri or a uri_template")
    if spec.uri:
        try:
            # The declaration's own URI checks, pointed at the uri key.
            ResourceSpec(name=spec.name, uri=spec.uri).to_resource(_placeholder_reader).validate()
        except ValidationError as exc:
            raise _FieldError("uri", exc.message) from exc
    if spec.uri_template:
        try:
            compiled = compile_template(spec.uri_template)
        except ValidationError as exc:
            raise _FieldError("uri_template", exc.message) from exc
    if "size" in data:
        spec.size = _expect(data["size"], int, "size")
        if spec.size < 0:
            raise _FieldError("size", f"size must not be negative, not {spec.size}")
    if "samples" in data:
        spec.samples = _str_list(data["samples"], "samples")
        if any(not sample.strip() for sample in spec.samples):
            raise _FieldError("samples", "a sample URI is empty")
    spec.icons = [_parse_icon(item) for item in _expect(data.get("icons", []), list, "icons")]
    if "annotations" in data:
        spec.annotations = _parse_annotations(_expect(data["annotations"], dict, "annotations"))
    if "completions" in data:
        table = _expect(data["completions"], dict, "completions")
        spec.completions = {
            name: _str_list(values, "completions", f"completions.{name}") for name, values in table.items()
        }
        if not spec.uri_template:
            raise _FieldError("completions", "completions need a uri_template")
        unknown = set(spec.completions) - set(compiled.variable_names)
        if unknown:
            raise _FieldError(
                "completions",
                f"completions name unknown variable(s) {', '.join(sorted(unknown))} "
                f"(the template has {', '.join(compiled.variable_names)})",
            )
    if "cache" in data:
        spec.cache = _parse_cache(_expect(data["cache"], dict, "cache"))
    # Anything the checks above missed, in the builder's words.
    spec.validate()
    return spec


def _parse_icon(raw: Any) -> Icon:
    icon = _expect(raw, dict, "icons", "each icon")
    extra = set(icon) - {"src", "mime_type", "sizes"}
    if extra:
        raise _FieldError(
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
        raise _FieldError("icons", exc.message) from exc


def _parse_annotations(ann: dict[str, Any]) -> Annotations:
    extra = set(ann) - {"audience", "priority", "last_modified"}
    if extra:
        raise _FieldError(
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
        raise _FieldError("annotations", exc.message) from exc


def _parse_cache(cache: dict[str, Any]) -> CacheHint:
    extra = set(cache) - {"ttl_ms", "scope"}
    if extra:
        raise _FieldError("cache", f"unknown cache key(s): {', '.join(sorted(extra))} (known: scope, ttl_ms)")
    ttl = _expect(cache.get("ttl_ms", 0), int, "cache", "cache.ttl_ms")
    scope = _expect(cache.get("scope", "private"), str, "cache", "cache.scope")
    try:
        return CacheHint(ttl, scope)
    except ValidationError as exc:
        raise _FieldError("cache", exc.message) from exc


@dataclass
class _Locations:
    """Where tables and keys sit in the file (1-based lines), found by a string-aware scan."""

    top: dict[str, int] = field(default_factory=dict)
    tables: dict[str, int] = field(default_factory=dict)
    server: dict[str, int] = field(default_factory=dict)
    resources: list[tuple[int, dict[str, int]]] = field(default_factory=list)

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
                if rest.startswith("[[") and name == "resources":
                    current = {}
                    found.resources.append((line, current))
                elif name == "server":
                    current = found.server
                else:
                    if name.startswith("resources.") and found.resources:
                        # A sub-table of the current resource, e.g. [[resources.icons]].
                        found.resources[-1][1].setdefault(name.split(".")[1], line)
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


# -- saving ------------------------------------------------------------------

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_LITERAL_UNSAFE = re.compile(r"'''|[\x00-\x08\x0b-\x1f\x7f]|\r")


def _string(value: str) -> str:
    out = ['"']
    for ch in value:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04x}")
        elif 0xD800 <= code <= 0xDFFF:
            # TOML (and UTF-8) cannot carry a lone surrogate; refuse before anything is written.
            raise ValidationError(
                f"cannot save the string {value[:40]!r}: it holds a lone surrogate U+{code:04X}"
            )
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Mapping):
        body = ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items())
        return "{ " + body + " }" if body else "{}"
    if isinstance(value, Sequence):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _string(key)


def _block(value: str) -> str:
    """A snippet as a multi-line literal string when it can be one, so it reads as code."""
    if "\n" in value and not _LITERAL_UNSAFE.search(value) and not value.endswith("'"):
        return "'''\n" + value + "'''"
    return _string(value)


def dumps_project(project: Project) -> str:
    """The project as TOML, in a stable key order; loading the result gives the same project."""
    lines = [f"format = {FORMAT_VERSION}"]
    # Top-level keys must come before the first table, or they would belong to it.
    if project.prelude:
        lines += ["", f"prelude = {_block(project.prelude)}"]
    lines += ["", "[server]"]
    defaults = ServerSettings()
    for key in ServerSettings.__dataclass_fields__:
        value = getattr(project.server, key)
        if key == "name" or (value != getattr(defaults, key) and value is not None):
            lines.append(f"{key} = {_value(value)}")
    for spec in project.resources:
        lines += ["", "[[resources]]", *_resource_lines(spec)]
    return "\n".join(lines) + "\n"


def _resource_lines(spec: ResourceSpec) -> list[str]:
    out: list[str] = []
    for key in ("name", "title", "description", "uri", "uri_template", "mime_type"):
        value = getattr(spec, key)
        if value or key == "name":
            out.append(f"{key} = {_value(value)}")
    if spec.size is not None:
        out.append(f"size = {spec.size}")
    if spec.samples:
        out.append(f"samples = {_value(spec.samples)}")
    if spec.icons:
        icons = []
        for icon in spec.icons:
            entry: dict[str, Any] = {"src": icon.src}
            if icon.mime_type:
                entry["mime_type"] = icon.mime_type
            if icon.sizes:
                entry["sizes"] = list(icon.sizes)
            icons.append(entry)
        out.append(f"icons = {_value(icons)}")
    if spec.annotations is not None and not spec.annotations.is_empty:
        ann: dict[str, Any] = {}
        if spec.annotations.audience:
            ann["audience"] = list(spec.annotations.audience)
        if spec.annotations.priority is not None:
            ann["priority"] = spec.annotations.priority
        if spec.annotations.last_modified:
            ann["last_modified"] = spec.annotations.last_modified
        out.append(f"annotations = {_value(ann)}")
    if spec.completions:
        out.append(f"completions = {_value(spec.completions)}")
    if spec.cache is not None:
        out.append(f"cache = {_value({'ttl_ms': spec.cache.ttl_ms, 'scope': spec.cache.scope})}")
    if spec.complete:
        out.append(f"complete = {_block(spec.complete)}")
    if spec.reader:
        out.append(f"reader = {_block(spec.reader)}")
    return out


def save_project(project: Project, path: str | os.PathLike[str] | None = None) -> Path:
    """Write the project atomically (temporary file, fsync, rename); returns the path written.

    A crash or error during the save leaves either the old file or the new
    one, never a truncated mix, and no temporary file behind. The file keeps
    the permissions of the one it replaces; a symlink stays a symlink.

    Raises:
        ValidationError: the project has no path yet, or holds a string TOML
            cannot carry (-32602); nothing is written then.
        OSError: the directory or disk refused the write; the old file is intact.
    """
    target = Path(path) if path is not None else project.path
    if target is None:
        raise ValidationError("The project has no file name yet; give a path to save it to")
    data = dumps_project(project).encode("utf-8")
    # Write through a symlink to the file it points at, as an editor should.
    real = Path(os.path.realpath(target))
    real.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            # mkstemp creates 0600; keep the mode the user had (or the umask default).
            os.fchmod(handle.fileno(), _file_mode(real))
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, real)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    _fsync_dir(real.parent)
    project.path = target
    logger.info("Saved project %s (%d resources, %d bytes)", target, len(project.resources), len(data))
    return target


def _file_mode(path: Path) -> int:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        pass
    umask = 0o022
    try:
        # Reading the umask via os.umask() would briefly change it for every thread.
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    umask = int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o666 & ~umask


def _fsync_dir(directory: Path) -> None:
    # The rename is durable only once the directory entry is on disk.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
