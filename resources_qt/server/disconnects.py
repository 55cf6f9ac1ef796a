"""Clients that hang up mid-request: their reads stop waiting for a worker, and the SDK's ERROR log is INFO."""

from __future__ import annotations

import logging
from contextvars import Token

from starlette.requests import ClientDisconnect, Request

from resources_qt.snippets.caller import HungUp, watch_caller

__all__ = ["SDK_HTTP_LOGGER", "ClientDisconnectFilter", "install_disconnect_filter", "watch_hang_up"]

SDK_HTTP_LOGGER = "mcp.server.streamable_http"
"""The SDK logger that reports a POST whose body never arrived as `Error handling POST request`."""


class ClientDisconnectFilter(logging.Filter):
    """Rewrites records whose exception is `ClientDisconnect` as one INFO line without the traceback.

    mcp 2.3 logs `logger.exception("Error handling POST request")` when a
    client closes its socket before the body is read, which for a server with
    thousands of clients (and for every browser tab closed mid-read) would
    fill an operator's error log with tracebacks for nothing they can fix.
    Everything else the SDK logs passes untouched.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, ClientDisconnect):
            original = record.getMessage()
            record.levelno = logging.INFO
            record.levelname = logging.getLevelName(logging.INFO)
            record.msg = "client disconnected before its request body arrived (%s)"
            record.args = (original,)
            record.exc_info = None
            record.exc_text = None
        return True


_FILTER = ClientDisconnectFilter()


def install_disconnect_filter() -> None:
    """Attach the filter to the SDK's HTTP logger once (idempotent: one shared instance)."""
    sdk_logger = logging.getLogger(SDK_HTTP_LOGGER)
    if _FILTER not in sdk_logger.filters:
        sdk_logger.addFilter(_FILTER)


def watch_hang_up(request: object) -> Token[tuple[HungUp, object] | None] | None:
    """Reads the handler awaits next give up their queue place if the client of `request` hangs up.

    None (nothing watched) unless `request` is an HTTP request; undo with
    `resources_qt.snippets.caller.forget_caller`. uvicorn does not cancel a
    request whose client left, so a read of a slow resource would keep its
    place in the worker queue (and count toward `max_queued_reads`) for nobody.
    """
    if not isinstance(request, Request):
        return None  # stdio, or a transport without an HTTP request
    return watch_caller(_hung_up, request)


async def _hung_up(request: Request) -> None:
    # The body has been read by the time a handler runs; the next ASGI message is `http.disconnect`,
    # which the server sends when the connection drops (or once the response went out, by when
    # nothing waits on this any more).
    receive = request.receive
    while (await receive())["type"] != "http.disconnect":
        pass
