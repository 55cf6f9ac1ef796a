"""Reader snippets: the authoring contract, compile checks and isolated, hot-reloadable execution."""

from resources_qt.snippets.binding import bind_project, configure_pool, create_pool, snippet_resource
from resources_qt.snippets.diagnostics import SnippetDiagnostic, check_snippet
from resources_qt.snippets.namespace import blob, current_uri, text
from resources_qt.snippets.output import ReadOutputListener, SnippetOutput
from resources_qt.snippets.pool import OutputListener, SnippetPool

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
