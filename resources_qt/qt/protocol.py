"""The typed boundary between the studio window and the engine facade: what a controller offers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, TextIO, runtime_checkable

from PySide6.QtCore import QObject, SignalInstance

from resources_qt.notifications import Notification
from resources_qt.project import Project, ResourceSpec

if TYPE_CHECKING:  # the window imports this module before first paint: no engine import here
    from resources_qt.server.events import SessionInfo

__all__ = ["CONTROLLER_SIGNALS", "StudioController"]


CONTROLLER_SIGNALS: dict[str, tuple[str, ...]] = {
    # signal: the payload's types, as Qt names them (a Python class is "PyObject"; its class is in the comment)
    "server_started": ("QString",),  # the HTTP URL, or "stdio"
    "server_stopped": (),
    "server_failed": ("QString",),  # why
    "transport_stopped": ("QString", "QString"),  # "http" / "stdio", why ("" when asked to stop)
    "session_opened": ("PyObject",),  # SessionInfo
    "session_closed": ("QString",),  # session id
    "subscription_added": ("QString", "QString"),  # session id, URI
    "subscription_removed": ("QString", "QString"),  # session id, URI
    "traffic_logged": ("QVariantList",),  # list[Traffic], a batch at most every 50 ms
    "notification_sent": ("QString", "QString", "int"),  # method, URI ("" for list_changed), recipients
    "preview_finished": ("PyObject",),  # PreviewOutcome
    "completions_ready": ("QString", "QVariantList"),  # request id, list[str]
    "snippet_output": ("QString", "QString"),  # resource key, what it printed
    "read_output": ("PyObject",),  # SnippetOutput: one read's streams in order
    "instances_failed": ("QString", "QString"),  # resource, message
    "instances_listed": ("QString", "int"),  # resource, count
    # resource, time, list[str] URIs sent `updated`, list[str] changed files (project-relative; [] for a poll)
    "data_changed": ("QString", "double", "QVariantList", "QVariantList"),
    "bus_state_changed": ("bool", "QString"),  # connected, redacted URL
    "metrics_sampled": ("PyObject",),  # MetricsSample: the last second's reads, once a second while serving
}
"""Every signal a controller has, with its payload: the one statement of the window-facade boundary."""


@runtime_checkable
class StudioController(Protocol):
    """What the window and `ServerSync` use of `ServerController`; a test double implements the same.

    Its signals and their payloads are `CONTROLLER_SIGNALS` (a test holds `ServerController` to them).
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
    metrics_sampled: SignalInstance

    @property
    def project(self) -> Project: ...

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

    def notify(self, notification: Notification) -> None: ...

    def set_read_as(self, scopes: Sequence[str] | None) -> None: ...

    def listed_as(self, scopes: Sequence[str]) -> list[str]: ...

    def sessions(self) -> list[SessionInfo]: ...

    def watching(self) -> dict[str, str]: ...

    def instance_failures(self) -> dict[str, str]: ...

    def preview(self, uri: str) -> None: ...

    def complete(
        self, request_id: str, resource_name: str, variable: str, value: str, context: Mapping[str, str]
    ) -> None: ...

    def warm_up(self) -> None: ...

    def shutdown(self, *, timeout: float = 2.0) -> None: ...
