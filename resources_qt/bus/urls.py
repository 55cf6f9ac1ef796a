"""Bus URLs and channels: validation, password redaction and password files, the channel from a server name."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from types import ModuleType
from urllib.parse import parse_qsl, quote, unquote, urlsplit

__all__ = [
    "BUS_ENV",
    "CHANNEL_ENV",
    "EXTRA_HINT",
    "MAX_PASSWORD_FILE_BYTES",
    "BusDependencyError",
    "check_bus_url",
    "check_password",
    "default_channel",
    "import_redis",
    "password_option",
    "read_password_file",
    "redact",
    "url_has_password",
]

BUS_ENV = "RESOURCE_STUDIO_BUS"
CHANNEL_ENV = "RESOURCE_STUDIO_BUS_CHANNEL"
EXTRA_HINT = "pip install 'mcp-resource-studio[redis]'"
_SCHEMES = ("redis", "rediss", "unix")
_CHANNEL_PREFIX = "resource-studio:"
_ENCODE_HINT = "write '#' as %23, '/' as %2F, '?' as %3F, '@' as %40 and '%' as %25, or keep it out of the URL"
_HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,251}[A-Za-z0-9])?")
_KEY = re.compile(r"[a-z_]{1,40}")
_VALUE = re.compile(r"[A-Za-z0-9._-]{0,40}")
# Query parameters (redis-py's) whose values say nothing secret; every other value is shown as ***.
_SHOWN_VALUES = frozenset({
    "db", "socket_timeout", "socket_connect_timeout", "socket_keepalive", "retry_on_timeout", "max_connections",
    "health_check_interval", "ssl_check_hostname", "ssl_cert_reqs", "timeout", "protocol",
})

MAX_PASSWORD_FILE_BYTES = 4096
"""A password file larger than this is refused: it holds one password, not a key or a config file."""


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
    """`url` (stripped) if it is a usable redis://, rediss:// or unix:// URL; else ValueError saying what is wrong.

    The message never contains the URL or any part of it that could hold a
    password: a malformed URL is described, not echoed.
    """
    _parse(url)
    return url.strip()


def url_has_password(url: str) -> bool:
    """Whether the (valid) URL carries a password, in its user part or as a `password=` query parameter."""
    parts = _parse(url)
    return parts.password is not None or any(key == "password" for key, _ in parts.query)


def redact(url: str) -> str:
    """`url` for logs and messages: passwords and unknown query values as ***, a malformed URL not shown at all."""
    try:
        parts = _parse(url)
    except ValueError:
        return "<malformed bus URL>"
    userinfo = ""
    if parts.password is not None:
        userinfo = f"{quote(parts.username, safe='')}:***@" if parts.username else ":***@"
    if parts.scheme == "unix":
        location = quote(parts.path, safe="/._-~")
    else:
        host = f"[{parts.host}]" if ":" in parts.host else parts.host
        port = f":{parts.port}" if parts.port is not None else ""
        location = f"{host}{port}" + (f"/{parts.database}" if parts.database else "")
    query = "&".join(_shown_parameter(key, value) for key, value in parts.query)
    return f"{parts.scheme}://{userinfo}{location}" + (f"?{query}" if query else "")


def check_password(url: str, password: str | None) -> str | None:
    """`password` if it may go with `url` (not empty, and the URL carries none); None stays None."""
    if password is None:
        return None
    if not isinstance(password, str) or not password:
        raise ValueError("bus password: must not be empty")
    if url_has_password(url):
        raise ValueError("bus URL: carries a password too; give the password once, in the URL or apart from it")
    return password


def password_option(password: str | None) -> dict[str, str]:
    """redis-py's `password=` keyword for `from_url` (the URL's own password, if any, would override it)."""
    return {} if password is None else {"password": password}


def read_password_file(path: str) -> str:
    """The password a file holds (one line; a final newline is dropped); ValueError naming the problem, not the
    content. Symbolic links are followed: secret managers (Kubernetes, Docker) mount their files as links."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_PASSWORD_FILE_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"{path}: {exc.strerror or type(exc).__name__}") from None
    if len(data) > MAX_PASSWORD_FILE_BYTES:
        raise ValueError(f"{path}: larger than {MAX_PASSWORD_FILE_BYTES} bytes; it must hold the password alone")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text") from None
    text = text.removesuffix("\n").removesuffix("\r")
    if "\n" in text or "\r" in text:
        raise ValueError(f"{path}: must hold the password on one line")
    if not text:
        raise ValueError(f"{path}: is empty")
    return text


@dataclass(frozen=True)
class _Parts:
    scheme: str
    username: str
    password: str | None
    host: str
    port: int | None
    database: str
    path: str
    query: tuple[tuple[str, str], ...]


def _parse(url: object) -> _Parts:
    if not isinstance(url, str) or not url.strip():
        raise ValueError("bus URL: must not be empty")
    url = url.strip()
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        raise ValueError("bus URL: must not contain spaces or control characters")
    scheme, separator, rest = url.partition("://")
    if not separator or scheme not in _SCHEMES:
        raise ValueError("bus URL: the scheme must be redis://, rediss:// or unix://")
    if "#" in rest:
        # A URL fragment means nothing to Redis: this is a '#' in a password, which ends the URL early.
        raise ValueError(f"bus URL: holds a '#'; in a password, {_ENCODE_HINT}")
    parts = urlsplit(url)
    userinfo, at, _ = parts.netloc.rpartition("@")
    try:
        port = parts.port
    except ValueError:
        port = -1
    if "@" in parts.path or (not at and "@" in parts.query and (not parts.hostname or port == -1)):
        # The user part ended at a '/' or '?' of the password, so its '@' landed in the path or the query.
        raise ValueError(f"bus URL: holds an '@' after the host; in a password, {_ENCODE_HINT}")
    username, password = "", None
    if at:
        name, colon, secret = userinfo.partition(":")
        if not colon:
            raise ValueError("bus URL: the part before '@' has no ':' (a user name alone cannot log in): "
                             "write redis://:PASSWORD@HOST or redis://USER:PASSWORD@HOST")
        username, password = unquote(name), unquote(secret)
    query = tuple(parse_qsl(parts.query, keep_blank_values=True))
    if scheme == "unix":
        if not parts.path:
            raise ValueError("bus URL: a unix:// URL needs a socket path, as in unix:///run/redis.sock")
        return _Parts(scheme, username, password, "", None, "", unquote(parts.path), query)
    host = parts.hostname or ""
    if port == -1:
        raise ValueError("bus URL: the port must be a number in 1-65535 (out of range or not a number)")
    if not host:
        raise ValueError("bus URL: needs a host, as in redis://HOST:PORT/DB")
    if not _HOST.fullmatch(host) and not _is_ip(host):
        raise ValueError("bus URL: the host is not a host name or an IP address")
    if port == 0:
        raise ValueError("bus URL: port 0 is not a Redis port")
    database = parts.path.strip("/")
    if database and not database.isdigit():
        raise ValueError("bus URL: the database must be a number, as in redis://HOST:PORT/0")
    return _Parts(scheme, username, password, host, port, database, "", query)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _shown_parameter(key: str, value: str) -> str:
    shown_key = key if _KEY.fullmatch(key) else "***"
    shown_value = value if key in _SHOWN_VALUES and _VALUE.fullmatch(value) else "***"
    return f"{shown_key}={shown_value}"


def default_channel(server_name: str) -> str:
    """The channel replicas of one project share: `resource-studio:` + the server name as a slug."""
    slug = re.sub(r"[^a-z0-9]+", "-", server_name.lower()).strip("-")
    if not slug:
        raise ValueError("server name: gives no channel name; pass --bus-channel")
    return _CHANNEL_PREFIX + slug
