"""Resource Studio's library: MCP resources, URI templates, project files and the server engine."""

from importlib import import_module
from typing import Any

from resources_qt import sdk_light

# Before anything imports the SDK: the window's first paint must not wait for the whole `mcp` package.
sdk_light.preload()

from resources_qt.collection import Match, Resources  # noqa: E402
from resources_qt.content import ResourceContent, to_contents  # noqa: E402
from resources_qt.errors import (  # noqa: E402
    INTERNAL_ERROR,
    INVALID_PARAMS,
    OPERATION_FAILED,
    RESOURCE_NOT_FOUND,
    NotFound,
    ReaderFailedError,
    ReaderMissingError,
    ResourceError,
    ResourceNotFoundError,
    ValidationError,
)
from resources_qt.resource import Annotations, CacheHint, Icon, Resource, ResourceBuilder  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "OPERATION_FAILED",
    "RESOURCE_NOT_FOUND",
    "Annotations",
    "CacheHint",
    "Icon",
    "Match",
    "NotFound",
    "ReaderFailedError",
    "ReaderMissingError",
    "Resource",
    "ResourceBuilder",
    "ResourceContent",
    "ResourceError",
    "ResourceNotFoundError",
    "Resources",
    "ValidationError",
    "__version__",
    "to_contents",
]


def __getattr__(name: str) -> object:
    # The engine pulls in uvicorn and starlette; load it only when asked for.
    if name == "ResourceServer":
        server: Any = import_module("resources_qt.server")
        return server.ResourceServer
    raise AttributeError(f"module 'resources_qt' has no attribute {name!r}")
