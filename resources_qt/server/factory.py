"""build_server: a ResourceServer configured from a project's [server] settings."""

from __future__ import annotations

from resources_qt.collection import Resources
from resources_qt.project import Project
from resources_qt.server.engine import ResourceServer

__all__ = ["build_server"]


def build_server(project: Project, resources: Resources) -> ResourceServer:
    """A server (not started) for `resources`, named, paged, cached and switched as `project` says."""
    settings = project.server
    server = ResourceServer(
        resources,
        name=settings.name,
        version=settings.version,
        instructions=settings.instructions,
        page_size=settings.page_size,
        cache=settings.cache,
    )
    server.enable_resource_notifications = settings.notifications
    server.enable_resource_subscriptions = settings.subscriptions
    return server
