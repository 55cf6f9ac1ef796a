"""`[[upstreams]]`: other MCP servers a project's imported resources are read from (client mode's proxy)."""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "UPSTREAM_KEYS",
    "UPSTREAM_TIMEOUT_MAX",
    "UpstreamSpec",
    "parse_upstream",
    "upstream_entries",
    "upstream_problem",
]

UPSTREAM_TIMEOUT_MAX = 600.0
"""Longest `timeout` an upstream may give, in seconds."""
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_TOKEN_ENV = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


@dataclass
class UpstreamSpec:
    """One `[[upstreams]]` entry: a server the imported resources naming it are read from."""

    name: str = ""
    """What resources name in their `upstream` key (letters, digits, `_ - .`)."""
    url: str = ""
    """A Streamable HTTP endpoint (http://host:port/mcp); give this or `command`."""
    command: str = ""
    """A command line run over stdio (`python server.py`); give this or `url`."""
    era: Literal["auto", "handshake", "2026-07-28"] = "auto"
    """The protocol era: discover and fall back (auto), the initialize handshake, or 2026-07-28."""
    timeout: float = 30.0
    """Seconds a read through the upstream may take before it fails (the client then gets a reader error)."""
    token_env: str = ""
    """An environment variable holding the bearer token sent to `url` (the file never holds the token)."""

    def problem(self) -> tuple[str, str] | None:
        """The first invalid key as (key, message), or None."""
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            return "name", f"upstream name {self.name!r} must be 1-64 letters, digits, '_', '-' or '.'"
        label = f"upstream {self.name!r}"
        for key in ("url", "command", "token_env"):
            if not isinstance(getattr(self, key), str):
                return key, f"{label}: {key} must be a string"
        if bool(self.url.strip()) == bool(self.command.strip()):
            return "url", f"{label}: give url (Streamable HTTP) or command (stdio), one of them"
        if self.url and not self.url.lower().startswith(("http://", "https://")):
            return "url", f"{label}: url must start with http:// or https://, not {self.url!r}"
        if self.command:
            try:
                shlex.split(self.command)
            except ValueError as exc:
                return "command", f"{label}: the command line cannot be split ({exc})"
        if self.era not in ("auto", "handshake", "2026-07-28"):
            return "era", f"{label}: era must be auto, handshake or 2026-07-28, not {self.era!r}"
        timeout = self.timeout
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not math.isfinite(timeout) or not (
            0 < timeout <= UPSTREAM_TIMEOUT_MAX
        ):
            return "timeout", f"{label}: timeout must be above 0 and at most {UPSTREAM_TIMEOUT_MAX:g} s"
        if self.token_env and (not _TOKEN_ENV.fullmatch(self.token_env) or self.command):
            return "token_env", f"{label}: token_env names an environment variable, for a url"
        return None


UPSTREAM_KEYS = ("name", "url", "command", "era", "timeout", "token_env")


def parse_upstream(raw: Any) -> UpstreamSpec:
    """One parsed `[[upstreams]]` table; raises ValueError naming the key at fault (as `args[1]`)."""
    if not isinstance(raw, Mapping):
        raise ValueError(f"an [[upstreams]] entry must be a table, not {type(raw).__name__}", "name")
    unknown = sorted(set(raw) - set(UPSTREAM_KEYS))
    if unknown:
        raise ValueError(f"unknown key(s): {', '.join(unknown)} (known: {', '.join(UPSTREAM_KEYS)})", unknown[0])
    spec = UpstreamSpec()
    for key in UPSTREAM_KEYS:
        if key in raw:
            setattr(spec, key, raw[key])
    if isinstance(spec.timeout, int) and not isinstance(spec.timeout, bool):
        spec.timeout = float(spec.timeout)
    problem = spec.problem()
    if problem is not None:
        raise ValueError(problem[1], problem[0])
    return spec


def upstream_entries(spec: UpstreamSpec) -> dict[str, Any]:
    """The keys a file holds for `spec`, in order, defaults left out (name always)."""
    entries: dict[str, Any] = {"name": spec.name}
    for key, default in (("url", ""), ("command", ""), ("era", "auto"), ("timeout", 30.0), ("token_env", "")):
        value = getattr(spec, key)
        if value != default:
            entries[key] = value
    return entries


def upstream_problem(upstreams: list[UpstreamSpec], used: Mapping[str, str]) -> tuple[str, str] | None:
    """Invalid or duplicate upstreams, or a resource naming one not declared: (key, message), or None.

    `used` maps each resource that reads from an upstream to the upstream's name.
    """
    seen: set[str] = set()
    for index, spec in enumerate(upstreams):
        problem = spec.problem()
        if problem is not None:
            return problem[0], f"upstreams[{index}]: {problem[1]}"
        if spec.name in seen:
            return "name", f"upstreams[{index}]: duplicate upstream name {spec.name!r}"
        seen.add(spec.name)
    for resource, name in used.items():
        if name not in seen:
            known = ", ".join(sorted(seen)) or "none declared"
            return "upstream", f"resource {resource!r}: upstream {name!r} is not declared in [[upstreams]] ({known})"
    return None
