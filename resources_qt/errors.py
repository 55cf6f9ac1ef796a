"""Resource-layer errors: every failure carries the JSON-RPC code the seed contract assigns it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.shared.exceptions import MCPError

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "OPERATION_FAILED",
    "RESOURCE_NOT_FOUND",
    "NotFound",
    "ReaderFailedError",
    "ReaderMissingError",
    "ResourceError",
    "ResourceNotFoundError",
    "ValidationError",
]

INVALID_PARAMS = -32602
"""A declaration or lookup argument was empty or invalid."""

INTERNAL_ERROR = -32603
"""The resource has no reader, so there is nothing to call."""

OPERATION_FAILED = -32000
"""The reader ran and did not deliver: it raised, returned nothing, timed out or crashed."""

RESOURCE_NOT_FOUND = -32002
"""No resource or template matches the URI (handshake-era code; 2026-07-28 uses -32602)."""


class ResourceError(Exception):
    """Base class of the resource layer's errors: a message with a fixed JSON-RPC code and optional data.

    Not an `MCPError`: that class comes with the SDK's protocol types (`mcp_types` and pydantic,
    about 0.3 s to import), which the window does not need before its first paint. The protocol
    boundary (the server's middleware, the preview) maps these with `to_mcp()`, so a client sees
    the same code, message and data as it would for an `MCPError`.
    """

    default_code: int = OPERATION_FAILED

    def __init__(self, message: str, *, code: int | None = None, data: Any = None) -> None:
        super().__init__(message)
        self.code: int = self.default_code if code is None else code
        self.message: str = message
        self.data: Any = data

    def __str__(self) -> str:
        return self.message

    def to_mcp(self) -> MCPError:
        """The SDK error a client receives for this one: the same code, message and data."""
        from mcp.shared.exceptions import MCPError

        return MCPError(self.code, self.message, self.data)


class ValidationError(ResourceError, ValueError):
    """A declaration, lookup or content argument is invalid (-32602).

    `field` names the setting or declaration key the error is about (for
    example ``"uri_template"`` or ``"workers"``), so a form can mark it; it is
    None when the problem is not about one field.
    """

    default_code = INVALID_PARAMS

    def __init__(
        self, message: str, *, field: str | None = None, code: int | None = None, data: Any = None
    ) -> None:
        super().__init__(message, code=code, data=data)
        self.field = field


class ReaderMissingError(ResourceError):
    """The resource has no reader assigned (-32603)."""

    default_code = INTERNAL_ERROR


class ReaderFailedError(ResourceError):
    """The reader raised, returned nothing usable, timed out or crashed (-32000)."""

    default_code = OPERATION_FAILED


class ResourceNotFoundError(ResourceError, LookupError):
    """No resource or template matches the URI.

    The code depends on the protocol era of the asking session, so the server
    picks it at the boundary; the default is the handshake-era -32002.
    """

    default_code = RESOURCE_NOT_FOUND

    def __init__(self, uri: str, *, code: int | None = None, message: str = "") -> None:
        super().__init__(message or f"Resource not found: {uri}", code=code, data={"uri": uri})
        self.uri = uri

    def for_era(self, code: int) -> ResourceNotFoundError:
        """The same error with the asking session's not-found code (the server knows it, a reader does not)."""
        return ResourceNotFoundError(self.uri, code=code, message=self.message)


class NotFound(ResourceNotFoundError):
    """Raised by a reader: nothing exists at this URI (the era's not-found error, with the reader's message).

    `raise NotFound(f"no ticket {params['id']}")` answers exactly as a URI nothing matches does (-32002 on
    handshake-era sessions, -32602 on 2026-07-28), instead of the -32000 a reader's other exceptions give.
    """

    def __init__(self, message: str = "", *, uri: str = "") -> None:
        super().__init__(uri, message=message or (f"Resource not found: {uri}" if uri else "Resource not found"))
        self.reason = message
        """What the reader said ("" for none: the URI's standard message is used once the URI is known)."""
