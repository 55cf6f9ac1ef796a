"""The project model: server settings, resource declarations with their snippets, and the whole project."""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from resources_qt.errors import ValidationError
from resources_qt.resource import Annotations, CacheHint, Icon, Reader, Resource

__all__ = ["FORMAT_VERSION", "Project", "ProjectError", "ResourceSpec", "ServerSettings"]

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
        self.to_resource(placeholder_reader).validate()
        for sample in self.samples:
            if not sample.strip():
                raise ValidationError(f"Resource {self.name!r}: a sample URI is empty")

    def sample_uris(self) -> list[str]:
        """The URIs to preview: the samples, or the URI itself for a direct resource."""
        if self.samples:
            return list(self.samples)
        return [self.uri] if self.uri else []


def placeholder_reader(uri: str, params: Mapping[str, Any]) -> str:
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
