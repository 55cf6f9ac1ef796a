"""The Qt facade over the engine: widgets talk to ServerController, never to the engine itself."""

from resources_qt.qt.controller import ServerController
from resources_qt.server.events import SessionInfo, TrafficEntry
from resources_qt.server.reading import PreviewOutcome

__all__ = ["PreviewOutcome", "ServerController", "SessionInfo", "TrafficEntry"]
