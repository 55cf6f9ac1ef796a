"""Reader snippets: the authoring contract, compile checks and isolated, hot-reloadable execution."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from resources_qt.snippets.binding import bind_project, configure_pool, create_pool, snippet_resource
    from resources_qt.snippets.diagnostics import SnippetDiagnostic, check_snippet
    from resources_qt.snippets.namespace import blob, current_uri, text
    from resources_qt.snippets.output import ReadOutputListener, SnippetOutput
    from resources_qt.snippets.pool import OutputListener, SnippetPool

# Imported on first use: a snippet worker imports this package for its own modules and must not pay for the
# pool, the dispatcher and the project loader it never uses (nor the window before its first paint).
_WHERE = {
    "bind_project": "binding", "configure_pool": "binding", "create_pool": "binding", "snippet_resource": "binding",
    "SnippetDiagnostic": "diagnostics", "check_snippet": "diagnostics",
    "blob": "namespace", "current_uri": "namespace", "text": "namespace",
    "ReadOutputListener": "output", "SnippetOutput": "output",
    "OutputListener": "pool", "SnippetPool": "pool",
}  # fmt: skip

__all__ = [
    "OutputListener",
    "ReadOutputListener",
    "SnippetDiagnostic",
    "SnippetOutput",
    "SnippetPool",
    "bind_project",
    "blob",
    "check_snippet",
    "configure_pool",
    "create_pool",
    "current_uri",
    "snippet_resource",
    "text",
]


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
