"""The `[HOST:]PORT` argument of `--http`, shared by the window and headless `serve`."""

from __future__ import annotations

__all__ = ["DEFAULT_HOST", "parse_http_address"]

DEFAULT_HOST = "127.0.0.1"


def parse_http_address(text: str) -> tuple[str, int]:
    """`PORT`, `HOST:PORT` or `[IPV6]:PORT` as (host, port); the host defaults to 127.0.0.1.

    Raises:
        ValueError: the text is not of that form or the port is out of range;
            the message names the option and the value.
    """
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = DEFAULT_HOST, text
    host = host.strip() or DEFAULT_HOST
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(f"--http expects [HOST:]PORT, not {text!r}") from None
    if not 0 <= port <= 65535:
        raise ValueError(f"--http port must be between 0 and 65535, not {port}")
    return host, port
