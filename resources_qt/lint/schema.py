"""The project file's JSON Schema (draft 2020-12), generated from the model's own declarations.

The `[server]` keys come from `settings_table.SETTINGS` (type, range, choices, default, help), the
resource keys from `ResourceSpec` and the dataclasses its fields hold, the test keys from
`testing.spec` (`TEST_KEYS`, `Expectation`); descriptions are the fields' own docstrings. Only what
those declarations cannot say (a size is not negative, a priority lies in 0..1) sits in `_BOUNDS`.
The schema keeps to keywords that draft 4 validators (Taplo's) read the same way.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import itertools
import json
import logging
import textwrap
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from resources_qt.project.atomic import write_atomic
from resources_qt.project.auth_settings import AUTH_KEYS, MAX_SCOPES, MAX_URL_LENGTH
from resources_qt.project.model import (
    FORMAT_VERSION,
    WATCH_INTERVAL_MAX,
    WATCH_INTERVAL_MIN,
    ResourceSpec,
    WatchSpec,
)
from resources_qt.project.settings_table import SETTINGS, Setting
from resources_qt.project.upstreams import UPSTREAM_TIMEOUT_MAX, UpstreamSpec
from resources_qt.project.writer import SCHEMA_DIRECTIVE, SCHEMA_FILE_NAME
from resources_qt.resource import Annotations, CacheHint, Icon
from resources_qt.testing.spec import EXPECTATION_KEYS, TEST_KEYS, Expectation, TestSpec

__all__ = [
    "DRAFT",
    "SCHEMA_DIRECTIVE",
    "SCHEMA_FILE_NAME",
    "project_schema",
    "schema_text",
    "write_schema_beside",
]

logger = logging.getLogger(__name__)

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "urn:resource-studio:project:1"

_DEFS: dict[type, str] = {
    ResourceSpec: "resource",
    UpstreamSpec: "upstream",
    Icon: "icon",
    Annotations: "annotations",
    CacheHint: "cache",
    WatchSpec: "watch",
    TestSpec: "test",
    Expectation: "expectation",
}
_KEYS: dict[type, tuple[str, ...]] = {TestSpec: TEST_KEYS, Expectation: EXPECTATION_KEYS}
"""Dataclasses whose file keys are a declared subset of their fields (TestSpec's `named` is no key)."""

_BOUNDS: dict[tuple[type, str], dict[str, Any]] = {
    (ResourceSpec, "size"): {"minimum": 0},
    (UpstreamSpec, "timeout"): {"minimum": 0, "not": {"enum": [0]}, "maximum": UPSTREAM_TIMEOUT_MAX},
    (WatchSpec, "interval"): {"minimum": WATCH_INTERVAL_MIN, "maximum": WATCH_INTERVAL_MAX},
    (Annotations, "priority"): {"minimum": 0, "maximum": 1},
    (CacheHint, "ttl_ms"): {"minimum": 0},
    (Expectation, "contents"): {"minimum": 0},
    (Expectation, "blob_sha256"): {"pattern": "^[0-9a-fA-F]{64}$"},
    # Above 0, said so that draft 4 (a boolean `exclusiveMinimum`) and 2020-12 (a number) read it alike.
    (Expectation, "max_ms"): {"minimum": 0, "not": {"enum": [0]}},
}
"""Checks of the model that its types cannot say."""

_TOP_HELP = {
    "format": f"The project file format; this version of Resource Studio reads {FORMAT_VERSION}",
    "prelude": "Python run in every snippet worker before any snippet: shared helpers and data",
    "server": "The server's identity, capabilities and limits",
    "upstreams": "Other MCP servers that imported resources are read from (the server proxies them)",
    "resources": "The resources and URI templates, each with its reader snippet",
    "tests": "Resource tests: a URI to read and what the read must answer",
}


@functools.cache
def project_schema() -> dict[str, Any]:
    """The schema of a project file; TOML date-times are strings to it, as to Taplo."""
    from resources_qt.project.loader import _TOP_KEYS  # the loader's own list of top-level keys

    defs: dict[str, Any] = {}
    properties: dict[str, Any] = {
        "format": {"description": _TOP_HELP["format"], "type": "integer", "enum": [FORMAT_VERSION]},
        "prelude": {"description": _TOP_HELP["prelude"], "type": "string"},
        "server": _server_schema(),
        "upstreams": {"description": _TOP_HELP["upstreams"], "type": "array", "items": _ref(UpstreamSpec, defs)},
        "resources": {"description": _TOP_HELP["resources"], "type": "array", "items": _ref(ResourceSpec, defs)},
        "tests": {"description": _TOP_HELP["tests"], "type": "array", "items": _ref(TestSpec, defs)},
    }
    if set(properties) != set(_TOP_KEYS):
        raise RuntimeError(f"the schema's top-level keys {sorted(properties)} are not the loader's {sorted(_TOP_KEYS)}")
    return {
        "$schema": DRAFT,
        "$id": SCHEMA_ID,
        "title": "Resource Studio project",
        "description": "A Resource Studio project file: MCP resources, their reader snippets and their tests",
        "type": "object",
        "properties": properties,
        "required": ["format"],
        "additionalProperties": False,
        "$defs": dict(sorted(defs.items())),
    }


def _server_schema() -> dict[str, Any]:
    properties = {row.key: _setting_schema(row) for row in SETTINGS}
    properties["name"]["pattern"] = r"\S"  # ServerSettings.problem: a name of blanks is no name
    properties["auth"] = _auth_schema()
    return {"description": _TOP_HELP["server"], "type": "object", "properties": properties,
            "additionalProperties": False}


def _auth_schema() -> dict[str, Any]:
    """`[server.auth]`, from its key table (resources_qt/project/auth_settings.py)."""
    properties: dict[str, Any] = {}
    for row in AUTH_KEYS:
        if row.kind == "scopes":
            schema: dict[str, Any] = {"type": "array", "items": {"type": "string", "pattern": r"^[!#-\[\]-~]+$"},
                                      "maxItems": MAX_SCOPES}  # fmt: skip
        else:
            schema = {"type": "string", "minLength": 1}
            if row.kind == "url":
                schema["maxLength"] = MAX_URL_LENGTH
        properties[row.key] = {"description": row.help, **schema}
    return {"description": "serve over HTTP as an OAuth 2.1 resource server of `issuer` (README: Authorization)",
            "type": "object", "properties": properties, "additionalProperties": False,
            "required": [row.key for row in AUTH_KEYS if row.required]}


def _setting_schema(row: Setting) -> dict[str, Any]:
    kinds = {str: "string", bool: "boolean", int: "integer", float: "number"}
    description = row.help + (f" ({row.range_text()})" if row.range_text() else "")
    schema: dict[str, Any] = {"description": description, "type": kinds[row.kind]}
    if row.least is not None:
        schema["minimum"] = row.least
    if row.most is not None:
        schema["maximum"] = row.most
    if row.choices:
        schema["enum"] = list(row.choices)
    if row.default is not None:
        schema["default"] = row.default
    if row.word:  # `workers = "auto"`: the word, or a number in the range
        number = {k: schema.pop(k) for k in ("type", "minimum", "maximum") if k in schema}
        schema["anyOf"] = [number, {"const": row.word}]
    return schema


def _ref(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    name = _DEFS[cls]
    if name not in defs:
        defs[name] = {}  # placeholder first: a dataclass may refer to itself
        defs[name] = _dataclass_schema(cls, defs)
    return {"$ref": f"#/$defs/{name}"}


def _dataclass_schema(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    hints = get_type_hints(cls)
    docs = _field_docs(cls)
    keys = _KEYS.get(cls) or tuple(item.name for item in dataclasses.fields(cls))
    properties: dict[str, Any] = {}
    for key in keys:
        schema = _type_schema(hints[key], defs)
        schema.update(_BOUNDS.get((cls, key), {}))
        if key in docs:
            schema = {"description": docs[key], **schema}
        properties[key] = schema
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    summary = (inspect.getdoc(cls) or "").split("\n", 1)[0].strip()
    return {"description": summary, **schema} if summary else schema


def _type_schema(hint: Any, defs: dict[str, Any]) -> dict[str, Any]:
    if hint is Any:
        return {}
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType):
        # Optional keys are absent from the file, never null (TOML has no null).
        present = [arg for arg in args if arg is not type(None)]
        if len(present) == 1:
            return _type_schema(present[0], defs)
        return {"anyOf": [_type_schema(arg, defs) for arg in present]}
    if origin is Literal:
        kinds = {type(arg) for arg in args}
        base = _type_schema(kinds.pop(), defs) if len(kinds) == 1 else {}
        return {**base, "enum": list(args)}
    if origin in (list, tuple):
        return {"type": "array", "items": _type_schema(args[0], defs)}
    if origin is dict:
        return {"type": "object", "additionalProperties": _type_schema(args[1], defs)}
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _ref(hint, defs)
    simple = {str: "string", bool: "boolean", int: "integer", float: "number"}
    if hint in simple:
        return {"type": simple[hint]}
    raise TypeError(f"no JSON Schema for the type {hint!r}")


def _field_docs(cls: type) -> dict[str, str]:
    """The docstrings written under the class's fields (`x: int = 0` then `\"\"\"...\"\"\"`), first paragraph."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):
        return {}  # no source (a frozen build): the schema goes without descriptions
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for field_node, after in itertools.pairwise(body):
        if (isinstance(field_node, ast.AnnAssign) and isinstance(field_node.target, ast.Name)
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)):
            docs[field_node.target.id] = " ".join(after.value.value.split("\n\n", 1)[0].split())
    return docs


def schema_text() -> str:
    """The schema as the file `resource-studio schema` prints and `write_schema_beside` writes."""
    return json.dumps(project_schema(), indent=2, ensure_ascii=False) + "\n"


def write_schema_beside(project_path: str | Path) -> Path:
    """Write `resource-studio.schema.json` next to the project file (only when missing or different).

    The `#:schema` line the writer puts at the top of a project names this file, so an editor with
    TOML schema support validates and completes the project. Returns the schema file's path.

    Raises:
        OSError: the folder refused the write.
    """
    target = Path(project_path).parent / SCHEMA_FILE_NAME
    text = schema_text()
    try:
        current = target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        current = None
    if current != text:
        write_atomic(target, text)
        logger.info("Wrote the project schema %s", target)
    return target
