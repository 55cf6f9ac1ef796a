"""Project files: one readable TOML file holding the server settings, a prelude and the resources."""

from resources_qt.project.loader import load_project, loads_project
from resources_qt.project.model import FORMAT_VERSION, Project, ProjectError, ResourceSpec, ServerSettings
from resources_qt.project.writer import dumps_project, save_project

__all__ = [
    "FORMAT_VERSION",
    "Project",
    "ProjectError",
    "ResourceSpec",
    "ServerSettings",
    "dumps_project",
    "load_project",
    "loads_project",
    "save_project",
]
