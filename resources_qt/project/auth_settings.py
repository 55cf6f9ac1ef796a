"""`[server.auth]` and per-resource `scopes` declared once: the keys, how each is checked, the settings page's rows."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from resources_qt.errors import ValidationError

__all__ = [
    "AUTH_KEYS",
    "MAX_SCOPES",
    "MAX_SCOPE_LENGTH",
    "MAX_URL_LENGTH",
    "AuthConfig",
    "AuthKey",
    "auth_entries",
    "auth_key",
    "parse_auth",
    "scope_problem",
    "scopes_problem",
    "split_scopes",
    "url_problem",
]

MAX_SCOPES = 64
"""Scopes one list may hold (`required_scopes`, a resource's `scopes`)."""

MAX_SCOPE_LENGTH = 256
MAX_URL_LENGTH = 2048

# RFC 6749 section 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ): printable ASCII but space, '"' and '\'.
_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")

_NOT_IN_URLS = '"<>\\^`{|}'
"""Characters RFC 3986 never allows in a URL (and that would break a quoted WWW-Authenticate value)."""

Kind = Literal["url", "text", "scopes"]


@dataclass(frozen=True, slots=True)
class AuthKey:
    """One `[server.auth]` key: what it holds and how the settings page shows it."""

    key: str
    kind: Kind
    label: str
    """The settings page's label, with its `&` mnemonic."""
    help: str
    widget: str
    """The object name of the settings page's field."""
    required: bool = False
    placeholder: str = ""

    @property
    def path(self) -> str:
        """The key as a `[server]` path (`auth.issuer`): what errors and `field` name."""
        return f"auth.{self.key}"


AUTH_KEYS: tuple[AuthKey, ...] = (
    AuthKey("issuer", "url", "&Issuer", "The authorization server whose tokens are accepted (the tokens' iss)",
            "authIssuerEdit", required=True, placeholder="https://auth.example.com/realms/support"),
    AuthKey("resource", "url", "&Resource URL",
            "This server's canonical URL, as clients reach it (RFC 9728 resource)", "authResourceEdit",
            required=True, placeholder="https://mcp.example.com/mcp"),
    AuthKey("audience", "text", "&Audience", "What tokens must name in aud; empty: the resource URL",
            "authAudienceEdit", placeholder="the resource URL"),
    AuthKey("jwks_uri", "url", "&JWKS URL", "Where the signing keys are; empty: from the issuer's metadata",
            "authJwksEdit", placeholder="from the issuer's metadata"),
    AuthKey("required_scopes", "scopes", "Required &scopes", "Scopes every request's token needs (space separated)",
            "authRequiredScopesEdit", placeholder="none"),
    AuthKey("introspection_endpoint", "url", "&Introspection",
            "RFC 7662 endpoint for opaque (non-JWT) tokens; empty: JWTs only", "authIntrospectionEdit",
            placeholder="not used"),
)  # fmt: skip

_BY_KEY: Mapping[str, AuthKey] = {row.key: row for row in AUTH_KEYS}


def auth_key(key: str) -> AuthKey:
    """The row of `key` (KeyError naming the known keys)."""
    try:
        return _BY_KEY[key]
    except KeyError:
        raise KeyError(f"{key!r} is not a [server.auth] key (known: {', '.join(_BY_KEY)})") from None


@dataclass(frozen=True, slots=True)
class AuthConfig:
    """The `[server.auth]` table: `serve` over HTTP as an OAuth 2.1 resource server of `issuer`.

    Frozen (tuples, not lists): a project copy shares it safely.
    """

    issuer: str = ""
    resource: str = ""
    audience: str | None = None
    """What tokens' `aud` must hold; None: `resource`."""
    jwks_uri: str | None = None
    """None: the `jwks_uri` of the issuer's RFC 8414 / OpenID metadata."""
    required_scopes: tuple[str, ...] = ()
    introspection_endpoint: str | None = None

    @property
    def token_audience(self) -> str:
        return self.audience or self.resource

    @property
    def metadata_url(self) -> str:
        """Where clients find this server's RFC 9728 metadata: the well-known prefix inserted before the
        resource URL's path (section 3.1), as the SDK's `build_resource_metadata_url` builds it."""
        parts = urlsplit(self.resource)
        path = parts.path if parts.path != "/" else ""
        return f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{path}"

    def problem(self) -> tuple[str, str] | None:
        """The first invalid key as (`auth.<key>`, message naming it), or None."""
        for row in AUTH_KEYS:
            value = getattr(self, row.key)
            message = _value_problem(row, value)
            if message is not None:
                return row.path, message
        return None

    def validate(self) -> None:
        problem = self.problem()
        if problem is not None:
            raise ValidationError(problem[1], field=problem[0])


def _value_problem(row: AuthKey, value: object) -> str | None:
    name = row.path
    if value is None or value == "" or value == ():
        return f"{name} must be set" if row.required else None
    if row.kind == "scopes":
        if not isinstance(value, tuple | list):
            return f"{name} must be an array of scopes, not {type(value).__name__}"
        return scopes_problem(value, name)
    if not isinstance(value, str):
        return f"{name} must be a string, not {type(value).__name__}"
    if row.kind == "text":
        if len(value) > MAX_URL_LENGTH:
            return f"{name} must be at most {MAX_URL_LENGTH} characters, not {len(value)}"
        if not value.isprintable() or value != value.strip():
            return f"{name} must be printable text without surrounding spaces, not {value!r}"
        return None
    return url_problem(value, name, allow_query=row.key not in ("issuer", "resource"))


def url_problem(value: str, name: str, *, allow_query: bool = True) -> str | None:
    """Why `value` is not an https URL (http only on this machine), naming `name`; None when it is one."""
    if len(value) > MAX_URL_LENGTH:
        return f"{name} must be at most {MAX_URL_LENGTH} characters, not {len(value)}"
    shown = value if len(value) <= 80 else value[:80] + "…"
    if not value.isascii() or any(ch.isspace() or not ch.isprintable() or ch in _NOT_IN_URLS for ch in value):
        return (
            f"{name} must be an ASCII URL without spaces, control characters or any of {_NOT_IN_URLS}, "
            f"not {shown!r}"
        )
    try:
        parts = urlsplit(value)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number or out of range
    except ValueError as exc:
        return f"{name} is not a valid URL ({exc}): {shown!r}"
    if parts.scheme not in ("https", "http") or not host:
        return f"{name} must be an https:// URL, not {shown!r}"
    if parts.scheme == "http" and not _is_loopback(host):
        return f"{name} must use https (http only for this machine: localhost, 127.0.0.1, ::1), not {shown!r}"
    if parts.username is not None or parts.password is not None:
        return f"{name} must not hold a user name or password, not {shown!r}"
    if parts.fragment or value.endswith("#"):
        return f"{name} must not have a fragment (#...), not {shown!r}"
    if not allow_query and (parts.query or value.endswith("?")):
        return f"{name} must not have a query (?...), not {shown!r}"
    return None


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def scope_problem(scope: object, name: str) -> str | None:
    """Why `scope` is not an RFC 6749 scope token (printable ASCII, no space, quote or backslash), or None."""
    if not isinstance(scope, str):
        return f"each of {name} must be a string, not {type(scope).__name__}"
    if not scope:
        return f"{name}: a scope is empty"
    if len(scope) > MAX_SCOPE_LENGTH:
        return f"{name}: a scope is {len(scope)} characters long; the limit is {MAX_SCOPE_LENGTH}"
    if not _SCOPE_TOKEN.fullmatch(scope):
        return f"{name}: {scope!r} is not a scope (printable ASCII without spaces, quotes or backslashes)"
    return None


def scopes_problem(scopes: Sequence[object], name: str) -> str | None:
    """Why a list of scopes is refused (too many, one invalid, one twice), or None."""
    if len(scopes) > MAX_SCOPES:
        return f"{name} holds {len(scopes)} scopes; the limit is {MAX_SCOPES}"
    seen: set[object] = set()
    for scope in scopes:
        problem = scope_problem(scope, name)
        if problem is not None:
            return problem
        if scope in seen:
            return f"{name}: {scope!r} is listed twice"
        seen.add(scope)
    return None


def split_scopes(text: str) -> list[str]:
    """Scopes typed in one field: separated by spaces or commas (as in a token's `scope` claim)."""
    return [part for part in re.split(r"[\s,]+", text) if part]


def parse_auth(raw: object) -> AuthConfig:
    """A parsed `[server.auth]` table as a checked `AuthConfig`; `ValidationError` naming `auth.<key>` otherwise."""
    if not isinstance(raw, dict):
        raise ValidationError(f"auth must be a table ([server.auth]), not {type(raw).__name__}", field="auth")
    data: dict[str, Any] = raw
    unknown = set(data) - set(_BY_KEY)
    if unknown:
        first = min(unknown)
        raise ValidationError(
            f"unknown key(s) {', '.join('auth.' + key for key in sorted(unknown))} in [server.auth] "
            f"(known: {', '.join(sorted(_BY_KEY))})",
            field=f"auth.{first}",
        )
    values: dict[str, Any] = {}
    for row in AUTH_KEYS:
        if row.key not in data:
            continue
        value = data[row.key]
        if value == "" and not row.required:
            continue  # an empty optional key is the key left out
        if row.kind == "scopes":
            if not isinstance(value, list):
                raise ValidationError(
                    f"{row.path} must be an array of scopes, not {type(value).__name__}", field=row.path
                )
            value = tuple(value)
        elif not isinstance(value, str):
            raise ValidationError(f"{row.path} must be a string, not {type(value).__name__}", field=row.path)
        problem = _value_problem(row, value)
        if problem is not None:
            raise ValidationError(problem, field=row.path)
        values[row.key] = value
    config = AuthConfig(**values)
    config.validate()  # the required keys
    return config


def auth_entries(config: AuthConfig | None) -> dict[str, Any]:
    """The `[server.auth]` keys to write, in the table's order, leaving out what is not set ({} for None)."""
    if config is None:
        return {}
    out: dict[str, Any] = {}
    for row in AUTH_KEYS:
        value = getattr(config, row.key)
        if row.kind == "scopes":
            if value:
                out[row.key] = list(value)
        elif value or row.required:
            out[row.key] = value
    return out
