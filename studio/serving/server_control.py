"""The window's serving state: which transports run (HTTP, stdio, both), starting, stopping and restarting them."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TextIO
from urllib.parse import urlsplit

from PySide6.QtCore import QObject, Signal, Slot

from resources_qt.qt.protocol import StudioController
from studio.preferences.settings import StudioSettings
from studio.serving.server_panel import ServerPanel

logger = logging.getLogger(__name__)

__all__ = ["ServerControl"]


class ServerControl(QObject):
    """Starts and stops the facade's transports for the window and keeps the server panel showing them.

    HTTP (the panel's Start / Stop, F5) and stdio (`--stdio`: the client that
    launched the studio) are served by one engine at once: stopping HTTP leaves
    stdio serving, and a restart (from the settings page) starts again every
    transport that was served, HTTP on the same host and port.

    Signals:
        state_changed(): what is served changed (a transport started or stopped, the server failed).
        progress(str text): a start or stop was asked for ("Starting on 127.0.0.1:8765…", "Stopping…").
        message_posted(str text, int timeout_ms): a note for the status bar (a transport that failed).
    """

    state_changed = Signal()
    progress = Signal(str)
    message_posted = Signal(str, int)

    def __init__(
        self,
        *,
        controller: StudioController,
        panel: ServerPanel,
        settings: StudioSettings,
        report_error: Callable[[str, str], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._controller = controller
        self._panel = panel
        self._settings = settings
        self._report_error = report_error
        self._served: dict[str, str] = {}  # transport -> its URL ("stdio" for stdio), in start order
        self._http: tuple[str, int, str] | None = None  # (host, port, token) of the last HTTP start
        self._stdio: tuple[TextIO | None, TextIO | None] | None = None  # its streams; None: never asked
        self._restart: list[str] = []
        self.failure = ""
        panel.start_requested.connect(self._on_start_requested)
        panel.stop_requested.connect(self._on_stop_requested)
        controller.server_started.connect(self._on_server_started)
        controller.server_stopped.connect(self._on_server_stopped)
        controller.server_failed.connect(self._on_server_failed)
        controller.transport_stopped.connect(self._on_transport_stopped)

    # -- state --------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Some transport is served."""
        return bool(self._served)

    @property
    def transports(self) -> tuple[str, ...]:
        return tuple(self._served)

    @property
    def http_url(self) -> str:
        """The HTTP endpoint while HTTP is served, else ""."""
        return self._served.get("http", "")

    def where(self) -> str:
        """What is served, for the status bar: "http://127.0.0.1:8765/mcp", "over stdio", or both."""
        parts = [url if name == "http" else "over stdio" for name, url in self._served.items()]
        return " and ".join(parts)

    # -- asking ---------------------------------------------------------------------------

    def start_http(self, host: str, port: int, token: str = "") -> None:
        """Serve HTTP (beside stdio, if it is served); the panel shows the outcome."""
        self._http = (host, port, token)
        self._settings.save_http_endpoint(host, port)
        self.failure = ""
        if not self.running:
            # The bus belongs to the whole server: it is chosen when the first transport starts.
            try:
                self._controller.set_bus(self._panel.bus_url() or None)
            except (ValueError, RuntimeError) as exc:  # a bad URL, the redis extra missing
                self._panel.set_stopped(f"Bus: {exc}")
                self._report_error("Bus", str(exc))
                return
        self._panel.set_busy()
        self.progress.emit(f"Starting on {host}:{port}…")
        self._controller.start_http(host, port, token or None)

    def start_stdio(self, *, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        """Serve the client that launched the studio over stdin/stdout (or the given pipes)."""
        self._stdio = (stdin, stdout)
        self.failure = ""
        # The panel's Start / Stop is HTTP's: it stays usable while stdio starts.
        self._controller.start_stdio(stdin=stdin, stdout=stdout)

    def stop_http(self) -> None:
        """Stop HTTP only; stdio, if served, keeps serving."""
        if "http" not in self._served and self._served:
            self._panel.set_stopped()  # HTTP ended meanwhile: nothing would answer a stop
            return
        self._panel.set_busy()
        self.progress.emit("Stopping…")
        self._controller.stop_http()

    def stop(self) -> None:
        """Stop every transport."""
        self._panel.set_busy()
        self.progress.emit("Stopping…")
        self._controller.stop()

    def toggle_http(self) -> None:
        """F5: stop HTTP when it is served, else start it with the panel's endpoint."""
        if self.http_url or self._panel.is_running:
            self.stop_http()
        else:
            self.start_http(*self._panel.endpoint())

    def restart(self) -> bool:
        """Stop the server and start again every transport it served, HTTP on the same host and port.

        False when nothing is served.
        """
        if not self._served:
            return False
        self._restart = list(self._served)
        self.stop()
        return True

    # -- facade -> state ----------------------------------------------------------------------

    @Slot(str, int, str)
    def _on_start_requested(self, host: str, port: int, token: str) -> None:
        self.start_http(host, port, token)

    @Slot()
    def _on_stop_requested(self) -> None:
        self.stop_http()

    @Slot(str)
    def _on_server_started(self, url: str) -> None:
        # On stderr too: a studio launched by a stdio client logs where its HTTP endpoint is.
        logger.info("Serving %s", url)
        if url.startswith("http"):
            if self._http is not None and self._http[1] == 0:
                # "Any free port" was asked for: a restart keeps the one clients were given.
                bound = urlsplit(url).port
                if bound:
                    self._http = (self._http[0], bound, self._http[2])
            self._served["http"] = url
            self._panel.set_running(url)
        else:
            self._served["stdio"] = url
        self.failure = ""
        self._panel.set_serving(self.transports)
        self.state_changed.emit()

    @Slot(str, str)
    def _on_transport_stopped(self, transport: str, message: str) -> None:
        self._served.pop(transport, None)
        if transport == "http":
            self._panel.set_stopped(message)
        self._panel.set_serving(self.transports)
        if message:
            what = "HTTP" if transport == "http" else "stdio"
            self.message_posted.emit(f"{what} stopped: {message}", 10000)
        self.state_changed.emit()

    @Slot()
    def _on_server_stopped(self) -> None:
        self._served.clear()
        self._panel.set_stopped()
        self._panel.set_serving(())
        self.state_changed.emit()
        pending, self._restart = self._restart, []
        if "stdio" in pending and self._stdio is not None:
            self.start_stdio(stdin=self._stdio[0], stdout=self._stdio[1])
        if "http" in pending and self._http is not None:
            self.start_http(*self._http)

    @Slot(str)
    def _on_server_failed(self, message: str) -> None:
        self._served.clear()
        self._restart = []
        self.failure = message
        self._panel.set_stopped(message)
        self._panel.set_serving(())
        self.message_posted.emit(f"Server failed: {message}", 10000)
        self.state_changed.emit()
