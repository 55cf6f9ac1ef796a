"""Log lines a client cannot forge: control characters in a formatted message are escaped."""

from __future__ import annotations

import logging

__all__ = ["EscapingFormatter", "escape_controls"]

_TABLE = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
_TABLE.update({0x2028: "\\u2028", 0x2029: "\\u2029"})


def escape_controls(text: str) -> str:
    """`text` with newlines, terminal escapes and other control characters written as `\\xNN`."""
    return text.translate(_TABLE)


class EscapingFormatter(logging.Formatter):
    """Escapes the message line, whatever the caller (our code or the SDK's) put in it.

    Our own log calls pass client strings with %r already; this catches the
    libraries' calls (the SDK logs, for example, a client's session id
    header), so one request can never forge a log line or send terminal
    escapes to the operator's terminal. Tracebacks stay multi-line.
    """

    def formatMessage(self, record: logging.LogRecord) -> str:
        return escape_controls(super().formatMessage(record))
