"""Bus URLs and channels: validation, password redaction, the channel derived from a server name."""

from __future__ import annotations

import re
from types import ModuleType
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "BUS_ENV",
    "CHANNEL_ENV",
    "EXTRA_HINT",
    "BusDependencyError",
    "check_bus_url",
    "default_channel",
    "import_redis",
    "redact",
]

BUS_ENV = "RESOURCE_STUDIO_BUS"
CHANNEL_ENV = "RESOURCE_STUDIO_BUS_CHANNEL"
EXTRA_HINT = "pip install 'mcp-resource-studio[redis]'"
_SCHEMES = ("redis", "rediss", "unix")
_CHANNEL_PREFIX = "resource-studio:"


class BusDependencyError(RuntimeError):
    """The `redis` package is not installed; the message names the extra that brings it."""


def import_redis() -> ModuleType:
    """The redis package (with redis.asyncio loaded), or BusDependencyError naming the extra."""
    try:
        import redis
        import redis.asyncio
        import redis.asyncio.retry
        import redis.backoff
    except ImportError:
        raise BusDependencyError(f"the notification bus needs the redis package: {EXTRA_HINT}") from None
    return redis


def check_bus_url(url: str) -> str:
    """`url` if it is a redis://, rediss:// or unix:// URL with a host (or path); else ValueError naming it."""
    if not isinstance(url, str) or not url.strip():
        raise ValueError("bus URL: must not be empty")
    url = url.strip()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"bus URL {redact(url)!r}: {exc}") from None
    if parts.scheme not in _SCHEMES:
        raise ValueError(f"bus URL {redact(url)!r}: the scheme must be redis://, rediss:// or unix://")
    if parts.scheme == "unix":
        if not parts.path:
            raise ValueError(f"bus URL {redact(url)!r}: a unix:// URL needs a socket path")
        return url
    if not parts.hostname:
        raise ValueError(f"bus URL {redact(url)!r}: needs a host, as in redis://HOST:PORT/DB")
    if port == 0:
        raise ValueError(f"bus URL {redact(url)!r}: port 0 is not a Redis port")
    database = parts.path.strip("/")
    if database and not database.isdigit():
        raise ValueError(f"bus URL {redact(url)!r}: the database must be a number, as in redis://HOST:PORT/0")
    return url


def redact(url: str) -> str:
    """`url` with any password replaced by ***, for logs and messages."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        user = parts.username or ""
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port is not None else ""
        netloc = f"{user}:***@{host}{port}"
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    except ValueError:
        return "<unparsable bus URL>"


def default_channel(server_name: str) -> str:
    """The channel replicas of one project share: `resource-studio:` + the server name as a slug."""
    slug = re.sub(r"[^a-z0-9]+", "-", server_name.lower()).strip("-")
    if not slug:
        raise ValueError("server name: gives no channel name; pass --bus-channel")
    return _CHANNEL_PREFIX + slug
