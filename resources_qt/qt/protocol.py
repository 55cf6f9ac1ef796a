"""The typed boundary between the studio window and the engine facade: what a controller offers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol, TextIO, runtime_checkable

from PySide6.QtCore import QObject, SignalInstance

from resources_qt.project import Project, ResourceSpec

if TYPE_CHECKING:  # the window imports this module before first paint: no engine import here
    from resources_qt.server.events import SessionInfo

__all__ = ["StudioController"]


@runtime_checkable
class StudioController(Protocol):
    """What the window and `ServerSync` use of `ServerController`; a test double implements the same.

    Signals (as `SignalInstance` attributes; payloads as documented on `ServerController`):
    server_started, server_stopped, server_failed, transport_stopped, session_opened, session_closed,
    subscription_added, subscription_removed, traffic_logged, notification_sent,
    preview_finished, completions_ready, snippet_output, read_output.
    """

    server_started: SignalInstance
    server_stopped: SignalInstance
    server_failed: SignalInstance
    transport_stopped: SignalInstance
    session_opened: SignalInstance
    session_closed: SignalInstance
    subscription_added: SignalInstance
    subscription_removed: SignalInstance
    traffic_logged: SignalInstance
    notification_sent: SignalInstance
    preview_finished: SignalInstance
    completions_ready: SignalInstance
    snippet_output: SignalInstance
    read_output: SignalInstance
    instances_failed: SignalInstance
    instances_listed: SignalInstance
    data_changed: SignalInstance
    bus_state_changed: SignalInstance

    @property
    def is_running(self) -> bool: ...

    @property
    def url(self) -> str: ...

    @property
    def transports(self) -> tuple[str, ...]: ...

    @property
    def announce_edits(self) -> bool: ...

    @announce_edits.setter
    def announce_edits(self, value: bool) -> None: ...

    def parent(self) -> QObject | None: ...

    def setParent(self, parent: QObject | None) -> None: ...

    def apply_project(self, project: Project) -> None: ...

    def apply_resource(self, old_name: str | None, spec: ResourceSpec | None) -> None: ...

    def set_prelude(self, source: str) -> None: ...

    def set_capabilities(self, notifications: bool, subscriptions: bool) -> None: ...

    def start_http(self, host: str = "127.0.0.1", port: int = 0, token: str | None = None) -> None: ...

    def start_stdio(self, *, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None: ...

    def set_bus(self, url: str | None, *, channel: str | None = None) -> None: ...

    def stop(self) -> None: ...

    def stop_http(self) -> None: ...

    def send_resources_changed(self) -> None: ...

    def send_resource_updated(self, uri: str) -> None: ...

    def send_resource_updated_for_session(self, session_id: str, uri: str) -> None: ...

    def sessions(self) -> list[SessionInfo]: ...

    def watching(self) -> dict[str, str]: ...

    def instance_failures(self) -> dict[str, str]: ...

    def preview(self, uri: str) -> None: ...

    def complete(
        self, request_id: str, resource_name: str, variable: str, value: str, context: Mapping[str, str]
    ) -> None: ...

    def warm_up(self) -> None: ...

    def shutdown(self, *, timeout: float = 2.0) -> None: ...
