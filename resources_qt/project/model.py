"""The project model: server settings, resource declarations with their snippets, and the whole project."""

from __future__ import annotations

import copy
import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from resources_qt.errors import ValidationError
from resources_qt.live.patterns import pattern_problem
from resources_qt.project.auth_settings import AuthConfig, scopes_problem
from resources_qt.project.settings_table import CACHE_TTL_MAX_MS, SETTINGS, default
from resources_qt.project.upstreams import UpstreamSpec, upstream_problem
from resources_qt.resource import Annotations, CacheHint, Icon, Reader, Resource
from resources_qt.snippets.kinds import RESOURCE_KINDS
from resources_qt.testing.spec import TestSpec

if TYPE_CHECKING:
    from resources_qt.project.layout import Layout

__all__ = [
    "CACHE_TTL_MAX_MS",
    "FORMAT_VERSION",
    "SERVER_RANGES",
    "WATCH_INTERVAL_MIN",
    "Project",
    "ProjectError",
    "ResourceSpec",
    "ServerSettings",
    "WatchSpec",
]

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1


class ProjectError(ValidationError):
    """A project file could not be loaded or saved; the message names the file, the place and the problem."""

    def __init__(
        self, message: str, *, source: str = "", line: int | None = None, field: str | None = None
    ) -> None:
        where = source + (f":{line}" if line is not None else "")
        super().__init__(f"{where}: {message}" if where else message, field=field)
        self.source = source
        self.line = line


SERVER_RANGES: dict[str, tuple[float, float, str]] = {
    row.key: (row.least, row.most, f" {row.unit}" if row.unit else "")
    for row in SETTINGS
    if row.least is not None and row.most is not None
}
"""The numeric keys' (least, most, unit shown in the message), derived from `settings_table.SETTINGS`."""
"""Inclusive bounds of the numeric `[server]` settings; anything outside is refused naming the key and range."""


@dataclass
class ServerSettings:
    """The `[server]` table: identity, capabilities and runtime limits.

    Each key is declared once, in `settings_table.SETTINGS` (its default, range, label, help and where it
    applies); this class only gives the keys their static types. A field without a row fails the model's test.
    """

    name: str = default("name")
    version: str = default("version")
    instructions: str = default("instructions")
    notifications: bool = default("notifications")
    subscriptions: bool = default("subscriptions")
    reader_timeout: float = default("reader_timeout")
    workers: int | Literal["auto"] = default("workers")
    readers: Literal["process", "thread"] = default("readers")
    memory_limit_mb: int = default("memory_limit_mb")
    page_size: int = default("page_size")
    cache_ttl_ms: int | None = default("cache_ttl_ms")
    cache_scope: Literal["public", "private"] = default("cache_scope")
    max_queued_reads: int = default("max_queued_reads")
    resource_concurrency: int | Literal["auto"] = default("resource_concurrency")
    max_processes: int = default("max_processes")
    max_file_size_mb: int = default("max_file_size_mb")
    max_subscriptions: int = default("max_subscriptions")
    max_uri_length: int = default("max_uri_length")
    max_sessions: int = default("max_sessions")
    session_idle_timeout: float = default("session_idle_timeout")
    mask_errors: bool = default("mask_errors")
    auth: AuthConfig | None = None
    """The `[server.auth]` sub-table (declared in `auth_settings`): None serves HTTP without OAuth."""

    def validate(self) -> None:
        """Raise `ValidationError` (-32602) naming the first invalid setting (its `field` is the key)."""
        problem = self.problem()
        if problem is not None:
            raise ValidationError(f"[server] {problem[1]}", field=problem[0])

    def problem(self) -> tuple[str, str] | None:
        """The first invalid setting as (key, message), or None."""
        if not isinstance(self.name, str) or not self.name.strip():
            return "name", "name must not be empty"
        for row in SETTINGS:
            message = row.problem(getattr(self, row.key))
            if message is not None:
                return row.key, message
        if self.auth is not None:
            if not isinstance(self.auth, AuthConfig):
                return "auth", f"auth must be an AuthConfig, not {type(self.auth).__name__}"
            return self.auth.problem()
        return None

    @property
    def cache(self) -> CacheHint | None:
        return None if self.cache_ttl_ms is None else CacheHint(self.cache_ttl_ms, self.cache_scope)


WATCH_INTERVAL_MIN = 0.1
"""Shortest `watch.interval` a project may give, in seconds."""

WATCH_INTERVAL_MAX = 86_400.0
"""Longest `watch.interval`: one day."""


@dataclass
class WatchSpec:
    """A resource's `watch` table: files whose changes mean new content, and a polling interval."""

    files: list[str] = field(default_factory=list)
    """Glob patterns relative to the project folder (`data/*.csv`, `notes/**/*.md`)."""
    interval: float | None = None
    """Seconds between re-reads of each subscribed URI (an update is sent when the content changed)."""

    @property
    def is_empty(self) -> bool:
        return not self.files and self.interval is None

    def problem(self) -> tuple[str, str] | None:
        """The first invalid part as (key, message), or None."""
        for pattern in self.files:
            message = watch_pattern_problem(pattern)
            if message is not None:
                return "watch", message
        interval = self.interval
        if interval is not None:
            if isinstance(interval, bool) or not isinstance(interval, int | float):
                return "watch", f"watch.interval must be a number, not {type(interval).__name__}"
            if not (math.isfinite(interval) and WATCH_INTERVAL_MIN <= interval <= WATCH_INTERVAL_MAX):
                return "watch", (
                    f"watch.interval must be between {WATCH_INTERVAL_MIN:g} and {WATCH_INTERVAL_MAX:g} s, "
                    f"not {interval}"
                )
        return None


def watch_pattern_problem(pattern: str) -> str | None:
    """Why a `watch.files` pattern is refused (empty, absolute, outside the project, or one the matcher
    cannot take), or None."""
    if not pattern.strip():
        return "watch.files: a pattern is empty"
    if "\0" in pattern:
        return f"watch.files: the pattern {pattern!r} holds a NUL character"
    if pattern.startswith(("/", "\\", "~")) or (len(pattern) > 1 and pattern[1] == ":"):
        return f"watch.files: the pattern {pattern!r} is absolute; give it relative to the project folder"
    if ".." in pattern.replace("\\", "/").split("/"):
        return f"watch.files: the pattern {pattern!r} reaches outside the project folder (..)"
    # What the matcher cannot take (a backwards range, an empty set, a pattern over the size limit): the
    # builder, the loader and the engine all ask here.
    return pattern_problem(pattern)


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
    scopes: list[str] = field(default_factory=list)
    """OAuth scopes a caller's token needs to list, read, subscribe to or complete this resource (HTTP with
    `[server.auth]`; stdio and HTTP without it see everything)."""
    unchecked_values: bool = False
    """Opt-out of the template value checks (no `/` in a simple `{var}`, no `..`, NUL or absolute path)."""
    watch: WatchSpec | None = None
    """What tells subscribers the content changed: watched files and/or a polling interval."""
    instances: str = ""
    """Snippet source of `def instances()`: the concrete URIs a template lists (templates only)."""
    reader: str = ""
    """Snippet source of `def read(uri, params)`."""
    upstream: str = ""
    """The `[[upstreams]]` entry this resource is read from (client mode's import): the server proxies it."""

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
        try:
            self.to_resource(placeholder_reader).validate()
        except ValidationError as exc:
            raise ValidationError(exc.message, field=self._field_at_fault()) from exc
        for sample in self.samples:
            if not sample.strip():
                raise ValidationError(f"Resource {self.name!r}: a sample URI is empty", field="samples")
        scopes = scopes_problem(self.scopes, "scopes")
        if scopes is not None:
            raise ValidationError(f"Resource {self.name!r}: {scopes}", field="scopes")
        if self.watch is not None:
            problem = self.watch.problem()
            if problem is not None:
                raise ValidationError(f"Resource {self.name!r}: {problem[1]}", field=problem[0])
        if self.upstream and self.reader.strip():
            raise ValidationError(f"Resource {self.name!r}: it is read from upstream {self.upstream!r} or by its "
                                  "reader, not both", field="upstream")  # fmt: skip
        if not self.is_template:
            for kind in RESOURCE_KINDS:
                if kind.template_only and getattr(self, kind.key).strip():
                    raise ValidationError(f"Resource {self.name!r}: {kind.needs_template()}", field=kind.key)

    def _field_at_fault(self) -> str | None:
        """Which key the builder's first complaint is about, found by checking the keys one by one."""
        if not isinstance(self.name, str) or not self.name.strip():
            return "name"
        for attr in ("uri", "uri_template", "title", "description", "mime_type"):
            if not isinstance(getattr(self, attr), str):
                return attr
        if self.size is not None and (isinstance(self.size, bool) or not isinstance(self.size, int)):
            return "size"
        if self.uri and self.uri_template:
            return "uri_template"
        if not self.uri and not self.uri_template:
            return None
        if self.uri:
            if _fails(ResourceSpec(name=self.name, uri=self.uri)):
                return "uri"
        elif _fails(ResourceSpec(name=self.name, uri_template=self.uri_template)):
            return "uri_template"
        if self.completions and _fails(
            ResourceSpec(name=self.name, uri=self.uri, uri_template=self.uri_template, completions=self.completions)
        ):
            return "completions"
        if self.size is not None and self.size < 0:
            return "size"
        return None

    def copy(self) -> ResourceSpec:
        """A copy that shares nothing mutable with this spec: its lists, tables and watch are its own.

        The other fields are strings, numbers and frozen values (`Icon`, `Annotations`, `CacheHint`).
        """
        twin = copy.copy(self)
        twin.icons = list(self.icons)
        twin.samples = list(self.samples)
        twin.scopes = list(self.scopes)
        twin.completions = {name: list(values) for name, values in self.completions.items()}
        if self.watch is not None:
            twin.watch = WatchSpec(files=list(self.watch.files), interval=self.watch.interval)
        return twin

    def sample_uris(self) -> list[str]:
        """The URIs to preview: the samples, or the URI itself for a direct resource."""
        if self.samples:
            return list(self.samples)
        return [self.uri] if self.uri else []


def placeholder_reader(uri: str, params: Mapping[str, Any]) -> str:
    return ""


def _check_kind_fields() -> None:
    # A kind added to the registry without its field would be dropped by the loader and writer silently.
    fields_ = ResourceSpec.__dataclass_fields__
    for kind in RESOURCE_KINDS:
        if kind.key not in fields_ or fields_[kind.key].default != "":
            raise TypeError(f"ResourceSpec needs a str field {kind.key!r} for the {kind.name} snippet kind")


_check_kind_fields()


def _fails(spec: ResourceSpec) -> bool:
    try:
        spec.to_resource(placeholder_reader).validate()
    except ValidationError:
        return True
    return False


@dataclass
class Project:
    """A whole project: settings, the shared prelude, the resources and the resource tests, in file order."""

    server: ServerSettings = field(default_factory=ServerSettings)
    prelude: str = ""
    resources: list[ResourceSpec] = field(default_factory=list)
    path: Path | None = None
    tests: list[TestSpec] = field(default_factory=list)
    """The `[[tests]]` entries: reads and what they must answer (see `resources_qt.testing`)."""
    upstreams: list[UpstreamSpec] = field(default_factory=list)
    """The `[[upstreams]]` entries: servers imported resources are read from (see `upstreams`)."""
    # Init fields (keyword-only, private) so that `dataclasses.replace` carries the layout, built or not.
    _layout: Layout | None = field(default=None, repr=False, compare=False, kw_only=True)
    _build_layout: Callable[[], Layout | None] | None = field(default=None, repr=False, compare=False, kw_only=True)

    @property
    def layout(self) -> Layout | None:
        """How the file it was read from (or last saved to) is laid out, so a save keeps comments and style.

        Set by the loader (built on first use: see `defer_layout`) and the writer; None for a
        project built in code (it is written in the standard layout).
        """
        build = self._build_layout
        if build is not None:
            try:
                self._layout = build()
            except Exception:  # a layout that cannot be rebuilt costs the file its style, never the save
                logger.warning("Project layout not rebuilt; the next save writes the standard layout", exc_info=True)
                self._layout = None
            self._build_layout = None
        return self._layout

    @layout.setter
    def layout(self, value: Layout | None) -> None:
        self._build_layout = None
        self._layout = value

    def defer_layout(self, build: Callable[[], Layout | None]) -> None:
        """`layout` is `build()`, called when it is first asked for (a save), not now.

        `build` must not depend on this project's later state: the model may be edited in place
        meanwhile, and the layout is of the file as it was read.
        """
        self._layout = None
        self._build_layout = build

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
                raise ValidationError(f"{label}: {exc.message}", field=exc.field) from exc
            for kind, value in (("name", spec.name), ("address", spec.key)):
                token = f"{kind}:{value}"
                if token in seen:
                    raise ValidationError(
                        f"{label}: duplicate {kind} {value!r} (also used by {seen[token]})",
                        field="name" if kind == "name" else ("uri_template" if spec.is_template else "uri"),
                    )
                seen[token] = spec.name
        problem = upstream_problem(self.upstreams, {s.name: s.upstream for s in self.resources if s.upstream})
        if problem is not None:
            raise ValidationError(problem[1], field=problem[0])

    def copy(self) -> Project:
        """A copy that shares nothing mutable with this project (lists and tables included).

        Field by field rather than `copy.deepcopy`, which took 40 ms for 1,000 resources (the
        facade copies every project it is given); the layout is frozen and shared.
        """
        return Project(server=copy.copy(self.server), prelude=self.prelude,
                       resources=[spec.copy() for spec in self.resources], path=self.path,
                       tests=copy.deepcopy(self.tests), upstreams=[copy.copy(u) for u in self.upstreams],
                       _layout=self._layout,
                       _build_layout=self._build_layout)  # fmt: skip
