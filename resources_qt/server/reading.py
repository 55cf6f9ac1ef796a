"""The read path shared by resources/read and the studio's preview, with era-dependent error codes."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from resources_qt.collection import Match, Resources, ascii_uri
from resources_qt.content import ResourceContent
from resources_qt.errors import (
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    ResourceError,
    ResourceNotFoundError,
    ValidationError,
)

__all__ = ["PreviewOutcome", "not_found_code", "preview_read", "resolve"]


def not_found_code(protocol_version: str | None) -> int:
    """-32002 on handshake-era sessions (2025-11-25 and older), -32602 on 2026-07-28."""
    if protocol_version is None:  # the studio's preview before a server runs: no SDK types needed
        return RESOURCE_NOT_FOUND
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS  # loaded with the server that asks

    return INVALID_PARAMS if protocol_version in MODERN_PROTOCOL_VERSIONS else RESOURCE_NOT_FOUND


Visible = Callable[[str], bool]
"""Whether the caller may see the resource of that name (its `scopes`); see `resources_qt.server.auth`."""


def resolve(
    resources: Resources, uri: str, *, protocol_version: str | None, visible: Visible | None = None
) -> Match:
    """Direct first, then templates; raises `ResourceNotFoundError` with the era's code.

    With `visible`, what the caller may not see does not exist for it: a hidden direct resource gives way
    to the templates that would match behind it, and a URI only hidden ones match is not found, with the
    very error a URI that matches nothing gets.
    """
    if not isinstance(uri, str) or not uri.strip():
        raise ValidationError("URI must not be empty", data={"uri": uri})
    match = resources.resolve(uri)
    if match is not None and visible is not None and not visible(match.resource.name):
        match = next((m for m in resources.matches(ascii_uri(uri)) if visible(m.resource.name)), None)
    if match is None:
        raise ResourceNotFoundError(uri, code=not_found_code(protocol_version))
    return match


@dataclass(frozen=True, slots=True)
class PreviewOutcome:
    """The result of a preview read: contents, or the error a client would have got."""

    uri: str
    resource_name: str | None
    is_template: bool
    template: str | None
    params: Mapping[str, Any]
    contents: list[ResourceContent] | None
    error_code: int | None = None
    error_message: str | None = None
    error_data: Any = None
    elapsed_ms: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error_code is None


async def preview_read(
    resources: Resources, uri: str, *, protocol_version: str | None = None, visible: Visible | None = None
) -> PreviewOutcome:
    """Read `uri` like a client would (one that sees only what `visible` allows), never raising: errors land
    in the outcome."""
    started = time.perf_counter()
    match: Match | None = None
    try:
        match = resolve(resources, uri, protocol_version=protocol_version, visible=visible)
        contents = await match.resource.read(uri, match.params)
    except ResourceError as exc:  # the code, message and data the server's middleware sends a client
        if isinstance(exc, ResourceNotFoundError):  # a reader's NotFound: the era's code, as the server sends it
            exc = exc.for_era(not_found_code(protocol_version))
        return _outcome(uri, match, started, error=(exc.code, exc.message, exc.data))
    except Exception as exc:
        # Only the SDK raises MCPError: if it is not loaded (the window previews before it is), this is not one.
        sdk_errors = sys.modules.get("mcp.shared.exceptions")
        if sdk_errors is not None and isinstance(exc, sdk_errors.MCPError):
            return _outcome(uri, match, started, error=(exc.code, exc.message, exc.data))
        return _outcome(uri, match, started, error=(-32603, f"{type(exc).__name__}: {exc}", None))
    return _outcome(uri, match, started, contents=contents)


def _outcome(
    uri: str,
    match: Match | None,
    started: float,
    *,
    contents: list[ResourceContent] | None = None,
    error: tuple[int, str, Any] | None = None,
) -> PreviewOutcome:
    """`error` is (code, message, data), as in a JSON-RPC error."""
    resource = match.resource if match is not None else None
    return PreviewOutcome(
        uri=uri,
        resource_name=resource.name if resource is not None else None,
        is_template=bool(resource is not None and resource.is_template),
        template=resource.uri_template if resource is not None and resource.is_template else None,
        params=dict(match.params) if match is not None else {},
        contents=contents,
        error_code=error[0] if error is not None else None,
        error_message=error[1] if error is not None else None,
        error_data=error[2] if error is not None else None,
        elapsed_ms=(time.perf_counter() - started) * 1000.0,
    )
