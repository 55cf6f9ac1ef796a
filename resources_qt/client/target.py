"""What the studio connects to: a Streamable HTTP URL (with a bearer token and an era) or a stdio command line."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Literal

from resources_qt.client.errors import RemoteError

__all__ = ["ERAS", "Era", "Target", "parse_target"]

Era = Literal["auto", "handshake", "2026-07-28"]
ERAS: tuple[Era, ...] = ("auto", "handshake", "2026-07-28")
"""How the protocol version is chosen: discover and fall back, the initialize handshake, or 2026-07-28 directly."""


@dataclass(frozen=True)
class Target:
    """One server to connect to: `url` for Streamable HTTP, else `command` (argv) for stdio."""

    url: str = ""
    command: tuple[str, ...] = ()
    token: str = field(default="", repr=False)
    """A bearer token sent as `Authorization: Bearer …` (HTTP only); never shown or logged."""
    era: Era = "auto"
    cwd: str | None = None
    """The working folder of a stdio command (None: the studio's)."""

    @property
    def is_http(self) -> bool:
        return bool(self.url)

    @property
    def sdk_mode(self) -> str:
        """The SDK client's `mode=`: "auto", "legacy" or a modern protocol version."""
        return "legacy" if self.era == "handshake" else self.era

    @property
    def label(self) -> str:
        """The target as the user typed it (the token left out)."""
        return self.url or shlex.join(self.command)


def parse_target(text: str, *, token: str = "", era: str = "auto", cwd: str | None = None) -> Target:
    """`text` as a target: an http(s) URL, else a command line split like a POSIX shell would.

    Raises:
        RemoteError: the text is empty, the command line cannot be split, or `era` is unknown.
    """
    if era not in ERAS:
        raise RemoteError(f"era: expected one of {', '.join(ERAS)}, got {era!r}")
    chosen: Era = "handshake" if era == "handshake" else "2026-07-28" if era == "2026-07-28" else "auto"
    stripped = text.strip()
    if not stripped:
        raise RemoteError("target: give a URL (http://…/mcp) or a command line (python server.py)")
    if stripped.lower().startswith(("http://", "https://")):
        if any(ch.isspace() for ch in stripped):
            raise RemoteError(f"target: a URL holds no spaces: {stripped!r}")
        return Target(url=stripped, token=token.strip(), era=chosen)
    try:
        argv = tuple(shlex.split(stripped))
    except ValueError as exc:
        raise RemoteError(f"target: the command line cannot be split ({exc})") from exc
    if token.strip():
        raise RemoteError("token: a bearer token goes with a URL; a stdio command gets none")
    return Target(command=argv, era=chosen, cwd=cwd)
