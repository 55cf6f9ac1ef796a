"""completion/complete for ref/resource refs: static lists filtered by prefix, or a complete() callable."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from resources_qt.collection import Resources
from resources_qt.errors import INVALID_PARAMS, OPERATION_FAILED, ResourceError
from resources_qt.resource import Resource

if TYPE_CHECKING:
    from mcp.shared.exceptions import MCPError

__all__ = ["MAX_VALUES", "complete_values", "find_template", "require_template"]

MAX_VALUES = 100
"""The spec caps a completion answer at 100 values; `total`/`hasMore` tell the rest."""


def find_template(
    resources: Resources, ref_uri: str, *, visible: Callable[[str], bool] | None = None
) -> Resource | None:
    """The resource a `ref/resource` names: by template (the usual case), else by direct URI; with `visible`,
    only one the caller may see (by name: its scopes)."""
    seen = visible or (lambda _name: True)
    for resource in resources:
        if resource.uri_template == ref_uri and seen(resource.name):
            return resource
    return next((r for r in resources if r.uri == ref_uri and seen(r.name)), None)


async def complete_values(
    resource: Resource, variable: str, value: str, context: Mapping[str, str]
) -> list[str]:
    """All completion values of `variable` for the typed `value` (empty when none are declared)."""
    completer = resource.completions.get(variable)
    if completer is None:
        return []
    if callable(completer):
        try:
            result: Any = completer(variable, value, dict(context))
            if inspect.isawaitable(result):
                result = await result
        except ResourceError:
            raise
        except Exception as exc:
            raise _mcp_error(
                OPERATION_FAILED,
                f"Completion of {variable!r} failed: {type(exc).__name__}: {exc}",
                {"variable": variable},
            ) from exc
        if result is None:
            return []
        if isinstance(result, str) or not isinstance(result, Sequence):
            raise _mcp_error(OPERATION_FAILED, f"Completion of {variable!r} must return a list of strings")
        return [str(v) for v in result]
    lowered = value.lower()
    return [str(v) for v in completer if str(v).lower().startswith(lowered)]


def require_template(resources: Resources, ref_uri: str, *, visible: Callable[[str], bool] | None = None) -> Resource:
    """The resource a `ref/resource` names, or -32602 naming the unknown URI (a hidden one is unknown too)."""
    resource = find_template(resources, ref_uri, visible=visible)
    if resource is None:
        raise _mcp_error(INVALID_PARAMS, f"Unknown resource template: {ref_uri}", {"uri": ref_uri})
    return resource


def _mcp_error(code: int, message: str, data: Any = None) -> MCPError:
    # Imported when one is raised: the window completes before the SDK is loaded, and rarely fails.
    from mcp.shared.exceptions import MCPError

    return MCPError(code, message, data)
