"""The `/metrics` listener: a small threaded HTTP server of its own, off the server loop, for Prometheus scrapes."""

from __future__ import annotations

import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from resources_qt.server.http import is_loopback

__all__ = ["METRICS_PATH", "MetricsListener", "check_metrics_bind"]

logger = logging.getLogger(__name__)

METRICS_PATH = "/metrics"
MAX_SCRAPES = 8
"""Scrapes answered at once; a further connection is closed at once (a scraper never holds more threads)."""
SCRAPE_TIMEOUT = 10.0
"""Seconds a scrape connection may take to send its request (a slow client cannot hold a thread longer)."""


def check_metrics_bind(host: str, *, public: bool) -> None:
    """Refuse a non-loopback address unless `public` (`--metrics-public`): the metrics name the project's
    resources and its traffic, and have no authentication of their own."""
    if not host:
        raise ValueError("--metrics: the host to bind must not be empty")
    if not is_loopback(host) and not public:
        raise ValueError(
            f"Refusing to serve metrics on non-loopback address {host}: pass --metrics-public, or bind 127.0.0.1"
        )


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], registry: CollectorRegistry, family: socket.AddressFamily) -> None:
        self.address_family = family
        self.registry = registry
        self.slots = threading.BoundedSemaphore(MAX_SCRAPES)
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


class _Handler(BaseHTTPRequestHandler):
    timeout = SCRAPE_TIMEOUT
    server: _Server

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] != METRICS_PATH:
            self.send_error(404, f"Metrics are at {METRICS_PATH}")
            return
        encoder, content_type = choose_encoder(self.headers.get("Accept", ""))
        try:
            body = encoder(self.server.registry)
        except Exception:
            logger.exception("Collecting the metrics failed")
            self.send_error(500, "Collecting the metrics failed")
            return
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("metrics %s - " + format, self.client_address[0], *args)


class MetricsListener:
    """Serves `registry` at http://HOST:PORT/metrics on threads of its own until `close()`.

    A scrape runs the registry's collectors on its thread: counters are read under their own locks and the
    state gauges take the session registry's and the pool's locks briefly; the server loop never waits for a
    scrape, and a scrape never waits for the loop.

    Raises:
        OSError: the port is busy or the address unusable.
    """

    def __init__(self, registry: CollectorRegistry, host: str, port: int) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._server = _Server((host, port), registry, family)
        self.host = host
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="metrics-http", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{METRICS_PATH}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5.0)
