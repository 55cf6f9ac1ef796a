"""build_server: a ResourceServer configured from a project's [server] settings (the pool's: snippets.create_pool)."""

from __future__ import annotations

from resources_qt.collection import Resources
from resources_qt.project import Project
from resources_qt.project.settings_table import settings_for
from resources_qt.server.auth.visibility import ScopePolicy
from resources_qt.server.engine import ResourceServer
from resources_qt.snippets import create_pool

__all__ = ["build_server", "create_pool"]


def build_server(project: Project, resources: Resources) -> ResourceServer:
    """A server (not started) for `resources`, named, paged, cached, limited and switched as `project` says."""
    settings = project.server
    server = ResourceServer(
        resources,
        **settings_for(settings, "identity"),
        **settings_for(settings, "engine"),
        cache=settings.cache,
    )
    for name, value in settings_for(settings, "capabilities").items():
        setattr(server, name, value)
    # `[server.auth]` and what each resource's `scopes` ask (resources_qt.server.auth).
    server.access.config = settings.auth
    server.access.scopes.replace(ScopePolicy.of_specs(project.resources))
    return server
