"""Template instances: running a template's `instances` snippet and turning its answer into direct resources."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from resources_qt.errors import ResourceError, ValidationError
from resources_qt.resource import Annotations, Resource
from resources_qt.snippets import SnippetPool

__all__ = ["MAX_INSTANCES", "InstanceLister", "InstancesError", "instances_source", "parse_instances"]

logger = logging.getLogger(__name__)

MAX_INSTANCES = 10_000
"""Instances one template may list; more is a malformed answer (a listing must stay answerable)."""

_OPTIONAL = ("name", "title", "description", "mime_type", "size", "annotations")


class InstancesError(Exception):
    """An `instances` answer that cannot be listed; the message says which item and why."""


def instances_source(source: str) -> str:
    """The user's `instances` snippet with an entry point the pool's read call can run.

    The snippet runs as a reader whose `read` returns the instances as JSON
    text: same workers, folder, `PROJECT_DIR`, timeout and error reporting as
    a reader. The lines are appended, so errors keep the user's line numbers.
    """
    return (
        source
        + "\n\n"
        + "def read(_uri, _params):  # added by Resource Studio: runs instances()\n"
        + "    import inspect as _inspect, json as _json\n"
        + "    _found = instances()\n"
        + "    if _inspect.isawaitable(_found):\n"
        + "        async def _finish():\n"
        + "            return _json.dumps(await _found, default=str)\n"
        + "        return _finish()\n"
        + "    return _json.dumps(_found, default=str)\n"
    )


def parse_instances(template: Resource, answer: object) -> list[Resource]:
    """The instances snippet's answer as direct resources read through `template`'s reader.

    Each item is a dict of the template's variables (plus optional `name`,
    `title`, `description`, `mime_type`, `size`, `annotations`) or a concrete
    URI string the template matches. Raises `InstancesError` naming the first
    bad item; nothing is half-listed.
    """
    if isinstance(answer, str | bytes) or not isinstance(answer, list):
        raise InstancesError(f"instances() must return a list, not {type(answer).__name__}")
    if len(answer) > MAX_INSTANCES:
        raise InstancesError(f"instances() returned {len(answer)} items; at most {MAX_INSTANCES} are listed")
    compiled = template.compiled_template
    variables = compiled.variable_names
    out: list[Resource] = []
    seen: set[str] = set()
    for index, item in enumerate(answer):
        where = f"instances()[{index}]"
        extra: Mapping[str, Any] = {}
        if isinstance(item, str):
            params = compiled.match(item)
            if params is None:
                raise InstancesError(f"{where}: {item!r} does not match the template {template.uri_template!r}")
            uri = item
            values = [str(params.get(v, "")) for v in variables]
        elif isinstance(item, dict):
            unknown = set(item) - set(variables) - set(_OPTIONAL)
            if unknown:
                raise InstancesError(
                    f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))} (the template's variables "
                    f"are {', '.join(variables)}; optional: {', '.join(_OPTIONAL)})"
                )
            missing = [v for v in variables if v not in item]
            if missing:
                raise InstancesError(f"{where}: missing the template variable(s) {', '.join(missing)}")
            values = []
            for variable in variables:
                value = item[variable]
                if isinstance(value, bool) or not isinstance(value, str | int | float):
                    raise InstancesError(f"{where}: {variable} must be a string, not {type(value).__name__}")
                values.append(str(value))
            uri = compiled.expand(dict(zip(variables, values, strict=True)))
            if compiled.match(uri) is None:
                raise InstancesError(f"{where}: {uri!r} (expanded) does not match the template")
            extra = item
        else:
            raise InstancesError(f"{where} must be a dict of the template's variables or a URI string, "
                                 f"not {type(item).__name__}")
        if uri in seen:
            continue  # listed twice: once is enough
        seen.add(uri)
        out.append(_instance(template, uri, values, extra, where))
    return out


def _instance(template: Resource, uri: str, values: list[str], extra: Mapping[str, Any], where: str) -> Resource:
    name = extra.get("name") or f"{template.name} ({', '.join(values)})"
    fields: dict[str, Any] = {}
    for key in ("name", "title", "description", "mime_type"):
        value = extra.get(key)
        if value is not None and not isinstance(value, str):
            raise InstancesError(f"{where}: {key} must be a string, not {type(value).__name__}")
    size = extra.get("size")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
        raise InstancesError(f"{where}: size must be a non-negative integer, not {size!r}")
    annotations = template.annotations
    raw = extra.get("annotations")
    if raw is not None:
        if not isinstance(raw, dict) or set(raw) - {"audience", "priority", "last_modified"}:
            raise InstancesError(f"{where}: annotations must be a dict of audience, priority, last_modified")
        try:
            audience = raw.get("audience", [])
            annotations = Annotations(tuple(audience), raw.get("priority"), raw.get("last_modified"))
        except (ValidationError, TypeError) as exc:
            raise InstancesError(f"{where}: annotations: {exc}") from exc
    fields.update(
        name=str(name),
        uri=uri,
        title=extra.get("title") or template.title,
        description=extra.get("description") or template.description,
        mime_type=extra.get("mime_type") or template.mime_type,
        icons=template.icons,
        annotations=annotations,
        size=size,
        reader=template.reader,
        cache=template.cache,
    )
    resource = Resource(**fields)
    try:
        resource.validate()
    except ValidationError as exc:
        raise InstancesError(f"{where}: {exc.message}") from exc
    return resource


class InstanceLister:
    """Runs `instances` snippets in the pool (under the reader timeout) and parses their answers."""

    def __init__(self, pool: SnippetPool) -> None:
        self._pool = pool

    async def list(self, template: Resource, source: str) -> list[Resource]:
        """The template's instances; raises `InstancesError` with the snippet's or the parser's words."""
        try:
            contents = await self._pool.read(
                key=f"{template.name}#instances",
                source=instances_source(source),
                uri=f"instances:{template.name}",
                params={},
                mime_type="application/json",
            )
        except ResourceError as exc:  # the snippet failed, timed out, or the pool refused the call
            # The pool words it as a read; say what actually ran.
            uri = f"instances:{template.name}"
            message = (
                str(exc.message)
                .replace(f"Resource reader failed for URI {uri}:", "instances() failed:")
                .replace(f"Resource reader for URI {uri}", "instances()")
            )
            raise InstancesError(message) from exc
        text = contents[0].text if contents and contents[0].text is not None else ""
        try:
            answer = json.loads(text)
        except ValueError as exc:
            raise InstancesError(f"instances() returned something that is not a list: {text[:80]!r}") from exc
        return parse_instances(template, answer)
