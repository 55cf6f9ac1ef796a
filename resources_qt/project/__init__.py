"""Project files: one readable TOML file holding the server settings, a prelude, the resources and their tests."""

from resources_qt.project.atomic import write_atomic
from resources_qt.project.auth_settings import AuthConfig
from resources_qt.project.loader import load_project, loads_project
from resources_qt.project.model import FORMAT_VERSION, Project, ProjectError, ResourceSpec, ServerSettings
from resources_qt.project.writer import dumps_project, save_project

__all__ = [
    "FORMAT_VERSION",
    "AuthConfig",
    "Project",
    "ProjectError",
    "ResourceSpec",
    "ServerSettings",
    "dumps_project",
    "load_project",
    "loads_project",
    "save_project",
    "write_atomic",
]
