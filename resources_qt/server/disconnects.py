"""A client that hangs up mid-request is not a server error: the SDK's ERROR log for it is demoted to INFO."""

from __future__ import annotations

import logging

from starlette.requests import ClientDisconnect

__all__ = ["SDK_HTTP_LOGGER", "ClientDisconnectFilter", "install_disconnect_filter"]

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
