"""build_server: a ResourceServer configured from a project's [server] settings (the pool's: snippets.create_pool)."""

from __future__ import annotations

from resources_qt.collection import Resources
from resources_qt.project import Project
from resources_qt.server.engine import ResourceServer
from resources_qt.snippets import create_pool

__all__ = ["build_server", "create_pool"]


def build_server(project: Project, resources: Resources) -> ResourceServer:
    """A server (not started) for `resources`, named, paged, cached, limited and switched as `project` says."""
    settings = project.server
    server = ResourceServer(
        resources,
        name=settings.name,
        version=settings.version,
        instructions=settings.instructions,
        page_size=settings.page_size,
        cache=settings.cache,
        session_idle_timeout=settings.session_idle_timeout,
        max_sessions=settings.max_sessions,
        max_subscriptions=settings.max_subscriptions,
        max_uri_length=settings.max_uri_length,
        mask_errors=settings.mask_errors,
    )
    server.enable_resource_notifications = settings.notifications
    server.enable_resource_subscriptions = settings.subscriptions
    return server
