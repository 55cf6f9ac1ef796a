"""The house style of project files: each setting, resource and test rendered as readable TOML text."""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from resources_qt.errors import ValidationError
from resources_qt.project.auth_settings import auth_entries
from resources_qt.project.model import FORMAT_VERSION, Project, ResourceSpec, ServerSettings
from resources_qt.project.upstreams import UpstreamSpec, upstream_entries
from resources_qt.snippets.kinds import KINDS, PRELUDE, RESOURCE_KINDS
from resources_qt.testing.spec import TestSpec, test_to_dict

__all__ = [
    "BLOCK_KEYS",
    "block",
    "plain",
    "render_key",
    "resource_entries",
    "resource_text",
    "server_entries",
    "server_text",
    "string",
    "test_entries",
    "test_text",
    "top_text",
    "value",
]

BLOCK_KEYS = frozenset(kind.key for kind in KINDS)
"""Keys holding snippets: written as multi-line strings so they read as code."""

RESOURCE_KINDS_LAST = sorted(RESOURCE_KINDS, key=lambda kind: kind.required)
"""Snippets end an entry, the required reader last: it is the longest, and the optional ones lead up to it."""

RESOURCE_ORDER = (
    "name",
    "title",
    "description",
    "uri",
    "uri_template",
    "mime_type",
    "size",
    "samples",
    "icons",
    "annotations",
    "completions",
    "cache",
    "scopes",
    "unchecked_values",
    "watch",
    *(kind.key for kind in RESOURCE_KINDS_LAST),
)

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
# What a multi-line literal ('''...''') cannot hold: its own delimiter, control characters, a bare CR.
_LITERAL_UNSAFE = re.compile(r"'''|[\x00-\x08\x0b-\x1f\x7f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _check_encodable(text: str) -> None:
    bad = _SURROGATE.search(text)
    if bad:
        # TOML (and UTF-8) cannot carry a lone surrogate; refuse before anything is written.
        raise ValidationError(
            f"cannot save the string {text[:40]!r}: it holds a lone surrogate U+{ord(bad.group()):04X}"
        )


_ESCAPES = {code: f"\\u{code:04x}" for code in (*range(0x20), 0x7F)}
_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\", ord("\n"): "\\n", ord("\t"): "\\t", ord("\r"): "\\r"})


def string(text: str) -> str:
    """A one-line basic string, escaped only where TOML requires it."""
    # str.translate, not tomlkit's escaper: saving 1,000 resources renders ~10,000 strings.
    _check_encodable(text)
    return '"' + text.translate(_ESCAPES) + '"'


def _number(item: bool | float) -> str:
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, int):
        return str(item)
    if math.isnan(item):
        return "nan"
    if math.isinf(item):
        return "inf" if item > 0 else "-inf"
    return repr(item)


def block(text: str) -> str:
    """A snippet as a multi-line string that reads as code.

    `'''` (nothing escaped) when the text allows it; otherwise `\"\"\"` with
    only backslashes, control characters and runs of three quotes escaped.
    A one-line text stays a one-line string.
    """
    _check_encodable(text)
    if "\n" not in text:
        return string(text)
    if not _LITERAL_UNSAFE.search(text) and not text.endswith("'"):
        return "'''\n" + text + "'''"
    out: list[str] = []
    quotes = 0
    last = len(text) - 1
    for index, ch in enumerate(text):
        code = ord(ch)
        if ch == '"':
            # A third quote in a row would close the string, and so would a quote right before the end.
            quotes += 1
            escape = quotes == 3 or index == last
            out.append('\\"' if escape else '"')
            quotes = 0 if escape else quotes
            continue
        quotes = 0
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\r":
            out.append("\\r")
        elif ch not in "\n\t" and (code < 0x20 or code == 0x7F):
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    body = "".join(out)
    return '"""\n' + body + '"""'


def key(name: str) -> str:
    return name if _BARE_KEY.match(name) else string(name)


def value(item: Any) -> str:
    """Any TOML value in the house style: inline tables `{ a = 1 }`, arrays `[1, 2]`."""
    if isinstance(item, bool | int | float):
        return _number(item)
    if isinstance(item, str):
        return string(item)
    if isinstance(item, Mapping):
        body = ", ".join(f"{key(k)} = {value(v)}" for k, v in item.items())
        return "{ " + body + " }" if body else "{}"
    if isinstance(item, Sequence):
        return "[" + ", ".join(value(v) for v in item) + "]"
    raise TypeError(f"cannot write {type(item).__name__} to TOML")


def render_key(name: str, item: Any) -> str:
    return block(item) if name in BLOCK_KEYS and isinstance(item, str) else value(item)


def plain(item: Any) -> Any:
    """A parsed TOML value as the model sees it: dates as ISO text, tables and arrays as plain dicts and lists."""
    if isinstance(item, datetime.date | datetime.time):
        return item.isoformat()
    if isinstance(item, Mapping):
        return {str(k): plain(v) for k, v in item.items()}
    if isinstance(item, list | tuple):
        return [plain(v) for v in item]
    return item


def _lines(header: str, entries: Mapping[str, Any]) -> str:
    return header + "\n" + "".join(f"{name} = {render_key(name, item)}\n" for name, item in entries.items())


def top_text(project: Project) -> str:
    text = f"format = {FORMAT_VERSION}\n"
    if project.prelude:
        # Top-level keys must come before the first table, or they would belong to it.
        text += f"\n{PRELUDE.key} = {block(project.prelude)}\n"
    return text


SERVER_TABLES = ("auth",)
"""`[server]` fields written as sub-tables (`[server.auth]`), not as keys."""


def server_entries(server: ServerSettings) -> dict[str, Any]:
    """The `[server]` keys to write: the name, and every setting that differs from its default.

    Sub-tables (`[server.auth]`: `auth_entries`) are not among them.
    """
    defaults = ServerSettings()
    out: dict[str, Any] = {}
    for name in ServerSettings.__dataclass_fields__:
        if name in SERVER_TABLES:
            continue
        item = getattr(server, name)
        if name == "name" or (item != getattr(defaults, name) and item is not None):
            out[name] = item
    return out


def server_text(server: ServerSettings) -> str:
    text = _lines("[server]", server_entries(server))
    auth = auth_entries(server.auth)
    if auth:
        text += "\n" + _lines("[server.auth]", auth)
    return text


def resource_entries(spec: ResourceSpec) -> dict[str, Any]:
    """The `[[resources]]` keys to write, in the house order, leaving out what is empty."""
    out: dict[str, Any] = {}
    for name in ("name", "title", "description", "uri", "uri_template", "mime_type", "upstream"):
        item = getattr(spec, name)
        if item or name == "name":
            out[name] = item
    if spec.size is not None:
        out["size"] = spec.size
    if spec.samples:
        out["samples"] = list(spec.samples)
    if spec.icons:
        icons = []
        for icon in spec.icons:
            entry: dict[str, Any] = {"src": icon.src}
            if icon.mime_type:
                entry["mime_type"] = icon.mime_type
            if icon.sizes:
                entry["sizes"] = list(icon.sizes)
            icons.append(entry)
        out["icons"] = icons
    if spec.annotations is not None and not spec.annotations.is_empty:
        ann: dict[str, Any] = {}
        if spec.annotations.audience:
            ann["audience"] = list(spec.annotations.audience)
        if spec.annotations.priority is not None:
            ann["priority"] = spec.annotations.priority
        if spec.annotations.last_modified:
            ann["last_modified"] = spec.annotations.last_modified
        out["annotations"] = ann
    if spec.completions:
        out["completions"] = {name: list(values) for name, values in spec.completions.items()}
    if spec.cache is not None:
        out["cache"] = {"ttl_ms": spec.cache.ttl_ms, "scope": spec.cache.scope}
    if spec.scopes:
        out["scopes"] = list(spec.scopes)
    if spec.unchecked_values:
        out["unchecked_values"] = True
    if spec.watch is not None and not spec.watch.is_empty:
        watch: dict[str, Any] = {}
        if spec.watch.files:
            watch["files"] = list(spec.watch.files)
        if spec.watch.interval is not None:
            watch["interval"] = spec.watch.interval
        out["watch"] = watch
    for kind in RESOURCE_KINDS_LAST:
        source = getattr(spec, kind.key)
        if source:
            out[kind.key] = source
    return out


def resource_text(spec: ResourceSpec) -> str:
    return _lines("[[resources]]", resource_entries(spec))


def upstream_text(spec: UpstreamSpec) -> str:
    return _lines("[[upstreams]]", upstream_entries(spec))


def test_entries(spec: TestSpec) -> dict[str, Any]:
    return dict(test_to_dict(spec))


def test_text(spec: TestSpec) -> str:
    return _lines("[[tests]]", test_entries(spec))


test_entries.__test__ = False  # type: ignore[attr-defined]  # not pytest tests, whatever their names say
test_text.__test__ = False  # type: ignore[attr-defined]
