"""Project files: one readable TOML file holding the server settings, a prelude and the resources."""

from __future__ import annotations

import math
import os
import re
import tempfile
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, cast

from resources_qt.errors import ValidationError
from resources_qt.resource import Annotations, CacheHint, Icon, Reader, Resource

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
        if not self.name.strip():
            raise ValidationError("server.name must not be empty")
        if not (self.reader_timeout > 0 and math.isfinite(self.reader_timeout)):
            raise ValidationError(f"server.reader_timeout must be a positive number, not {self.reader_timeout}")
        if self.workers < 1:
            raise ValidationError(f"server.workers must be at least 1, not {self.workers}")
        if self.memory_limit_mb < 16:
            raise ValidationError(f"server.memory_limit_mb must be at least 16, not {self.memory_limit_mb}")
        if self.page_size < 1:
            raise ValidationError(f"server.page_size must be at least 1, not {self.page_size}")
        if self.cache_ttl_ms is not None:
            CacheHint(self.cache_ttl_ms, self.cache_scope)

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
        return replace(self, server=replace(self.server), resources=[replace(r) for r in self.resources])


# -- loading -----------------------------------------------------------------

_TOP_KEYS = {"format", "server", "prelude", "resources"}
_SERVER_KEYS = {f for f in ServerSettings.__dataclass_fields__}
_RESOURCE_KEYS = {f for f in ResourceSpec.__dataclass_fields__}
_RESOURCE_HEADER = re.compile(r"^\s*\[\[\s*resources\s*\]\]", re.MULTILINE)
_TOML_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)")


def load_project(path: str | os.PathLike[str]) -> Project:
    """Read and validate a project file.

    Raises:
        ProjectError: the file is missing, unreadable, not TOML, of an
            unknown format, or declares an invalid or duplicate resource.
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
    """Parse and validate project TOML; see `load_project`."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_POSITION.search(str(exc))
        line = int(found.group(1)) if found else None
        message = _TOML_POSITION.sub("", str(exc)).strip()
        raise ProjectError(f"invalid TOML: {message}", source=source, line=line) from exc
    header_lines = [text.count("\n", 0, m.start()) + 1 for m in _RESOURCE_HEADER.finditer(text)]
    return _parse(data, source, header_lines)


def _parse(data: dict[str, Any], source: str, header_lines: list[int]) -> Project:
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise ProjectError(f"unknown top-level key(s): {', '.join(sorted(unknown))}", source=source)
    fmt = data.get("format")
    if fmt != FORMAT_VERSION:
        raise ProjectError(
            f"unsupported format {fmt!r}; this version of Resource Studio reads format = {FORMAT_VERSION}",
            source=source,
        )
    server_data = data.get("server", {})
    if not isinstance(server_data, dict):
        raise ProjectError("[server] must be a table", source=source)
    try:
        server = _parse_server(server_data)
        server.validate()
    except (ValidationError, TypeError, ValueError) as exc:
        raise ProjectError(_message(exc), source=source) from exc
    prelude = data.get("prelude", "")
    if not isinstance(prelude, str):
        raise ProjectError("prelude must be a string", source=source)
    raw_resources = data.get("resources", [])
    if not isinstance(raw_resources, list):
        raise ProjectError("resources must be an array of tables ([[resources]])", source=source)
    resources: list[ResourceSpec] = []
    names: dict[str, int] = {}
    keys: dict[str, int] = {}
    for index, raw in enumerate(raw_resources):
        line = header_lines[index] if index < len(header_lines) else None
        label = f"resource #{index + 1}"
        if isinstance(raw, dict) and isinstance(raw.get("name"), str) and raw["name"]:
            label = f"resource {raw['name']!r}"
        try:
            spec = _parse_resource(raw)
            spec.validate()
        except (ValidationError, TypeError, ValueError) as exc:
            raise ProjectError(f"{label}: {_message(exc)}", source=source, line=line) from exc
        if spec.name in names:
            raise ProjectError(
                f"{label}: duplicate name (resource #{names[spec.name] + 1} has it too)", source=source, line=line
            )
        if spec.key in keys:
            raise ProjectError(
                f"{label}: {spec.key!r} is already declared by resource #{keys[spec.key] + 1}",
                source=source,
                line=line,
            )
        names[spec.name] = index
        keys[spec.key] = index
        resources.append(spec)
    return Project(server=server, prelude=prelude, resources=resources)


def _message(exc: Exception) -> str:
    return exc.message if isinstance(exc, ValidationError) else str(exc)


def _expect(value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ValidationError(f"{what} must be {names}, not {type(value).__name__}")
    return value


def _parse_server(data: dict[str, Any]) -> ServerSettings:
    unknown = set(data) - _SERVER_KEYS
    if unknown:
        raise ValidationError(f"unknown [server] key(s): {', '.join(sorted(unknown))}")
    settings = ServerSettings()
    for key in ("name", "version", "instructions", "cache_scope"):
        if key in data:
            setattr(settings, key, _expect(data[key], str, f"server.{key}"))
    for key in ("notifications", "subscriptions"):
        if key in data:
            setattr(settings, key, _expect(data[key], bool, f"server.{key}"))
    for key in ("workers", "memory_limit_mb", "page_size", "cache_ttl_ms"):
        if key in data:
            setattr(settings, key, _expect(data[key], int, f"server.{key}"))
    if "reader_timeout" in data:
        timeout = _expect(data["reader_timeout"], (int, float), "server.reader_timeout")
        if isinstance(timeout, bool):
            raise ValidationError("server.reader_timeout must be a number of seconds")
        settings.reader_timeout = float(timeout)
    return settings


def _str_list(value: Any, what: str) -> list[str]:
    items = _expect(value, list, what)
    for item in items:
        _expect(item, str, f"each of {what}")
    return list(items)


def _parse_resource(raw: Any) -> ResourceSpec:
    data = _expect(raw, dict, "a [[resources]] entry")
    unknown = set(data) - _RESOURCE_KEYS
    if unknown:
        raise ValidationError(f"unknown key(s): {', '.join(sorted(unknown))}")
    spec = ResourceSpec()
    for key in ("name", "title", "description", "uri", "uri_template", "mime_type", "complete", "reader"):
        if key in data:
            setattr(spec, key, _expect(data[key], str, key))
    if spec.uri and spec.uri_template:
        raise ValidationError("Cannot set both URI and URITemplate (uri and uri_template)")
    if "size" in data:
        spec.size = _expect(data["size"], int, "size")
    if "samples" in data:
        spec.samples = _str_list(data["samples"], "samples")
    for item in _expect(data.get("icons", []), list, "icons"):
        icon = _expect(item, dict, "each icon")
        extra = set(icon) - {"src", "mime_type", "sizes"}
        if extra:
            raise ValidationError(f"unknown icon key(s): {', '.join(sorted(extra))}")
        sizes = _str_list(icon.get("sizes", []), "icon sizes")
        spec.icons.append(Icon(_expect(icon.get("src", ""), str, "icon src"), icon.get("mime_type"), tuple(sizes)))
    if "annotations" in data:
        ann = _expect(data["annotations"], dict, "annotations")
        extra = set(ann) - {"audience", "priority", "last_modified"}
        if extra:
            raise ValidationError(f"unknown annotation key(s): {', '.join(sorted(extra))}")
        priority = ann.get("priority")
        if priority is not None:
            priority = float(_expect(priority, (int, float), "annotations.priority"))
        audience = _str_list(ann.get("audience", []), "annotations.audience")
        last_modified = ann.get("last_modified")
        if last_modified is not None:
            last_modified = str(last_modified)
        spec.annotations = Annotations(tuple(cast(Any, audience)), priority, last_modified)
    if "completions" in data:
        table = _expect(data["completions"], dict, "completions")
        spec.completions = {name: _str_list(values, f"completions.{name}") for name, values in table.items()}
    if "cache" in data:
        cache = _expect(data["cache"], dict, "cache")
        extra = set(cache) - {"ttl_ms", "scope"}
        if extra:
            raise ValidationError(f"unknown cache key(s): {', '.join(sorted(extra))}")
        spec.cache = CacheHint(
            _expect(cache.get("ttl_ms", 0), int, "cache.ttl_ms"), _expect(cache.get("scope", "private"), str, "scope")
        )
    return spec


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

    A crash during the save leaves either the old file or the new one,
    never a truncated mix.
    """
    target = Path(path) if path is not None else project.path
    if target is None:
        raise ValidationError("The project has no file name yet; give a path to save it to")
    text = dumps_project(project)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)
    project.path = target
    return target


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
