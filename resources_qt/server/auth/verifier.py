"""The SDK `TokenVerifier` of `[server.auth]`: JWT access tokens checked against the issuer's keys (PyJWT)."""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import jwt
from jwt.exceptions import InvalidSignatureError, PyJWTError
from mcp.server.auth.provider import AccessToken

from resources_qt.project.auth_settings import AuthConfig
from resources_qt.server.auth.fetch import FetchError, fetch_json
from resources_qt.server.auth.keys import ALLOWED_ALGORITHMS, SigningKeys

__all__ = [
    "INTROSPECTION_ID_ENV",
    "INTROSPECTION_SECRET_ENV",
    "LEEWAY",
    "MAX_TOKEN_LENGTH",
    "OAuthVerifier",
    "token_scopes",
]

logger = logging.getLogger(__name__)

LEEWAY = 30
"""Seconds of clock difference allowed on `exp`, `nbf` and `iat`."""

MAX_TOKEN_LENGTH = 16 * 1024
"""A longer bearer token is refused unparsed."""

VERIFIED_ENTRIES = 4096
"""Tokens remembered as checked (by digest, never the token): a client reuses its token for many requests."""

VERIFIED_TTL = 300.0
"""Seconds a checked token is remembered, at most (never past its `exp`)."""

MAX_SCOPES = 256
"""Scopes of one token that are read."""

MAX_INTROSPECTIONS = 16
"""Introspection requests in flight at once; more opaque tokens at once are refused, not queued."""

INTROSPECTION_TTL = 60.0

INTROSPECTION_ID_ENV = "RESOURCE_STUDIO_INTROSPECTION_CLIENT_ID"
INTROSPECTION_SECRET_ENV = "RESOURCE_STUDIO_INTROSPECTION_CLIENT_SECRET"
"""The resource server's own client credentials for RFC 7662 introspection (never in the project file)."""


class OAuthVerifier:
    """Checks bearer tokens the way `[server.auth]` says; `verify_token` never raises.

    A JWT is accepted when its signature verifies against one of the issuer's keys in an allowed algorithm
    (RS256, ES256, EdDSA; the header's `alg` must be the key's), its `iss` is the issuer, its `aud` (a
    string or a list) holds the audience, and `exp` / `nbf` hold with `LEEWAY`. A token that is not a JWT
    goes to the RFC 7662 introspection endpoint when one is configured. A checked token is remembered by
    its SHA-256 digest until it expires (at most `VERIFIED_TTL`), so a client's next request costs a hash.
    """

    def __init__(
        self,
        config: AuthConfig,
        *,
        keys: SigningKeys | None = None,
        clock: Callable[[], float] = time.time,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.keys = keys if keys is not None else SigningKeys(issuer=config.issuer, jwks_uri=config.jwks_uri)
        self._clock = clock
        self._verified: OrderedDict[bytes, tuple[AccessToken, float]] = OrderedDict()
        env = os.environ if environ is None else environ
        client_id, secret = env.get(INTROSPECTION_ID_ENV), env.get(INTROSPECTION_SECRET_ENV)
        self._introspection_auth = (client_id, secret) if client_id and secret else None
        self._introspecting = 0
        self._introspection_down = False
        self.checked = 0
        """Tokens checked in full (a remembered token does not count)."""

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's `AccessToken` (scopes, client id, subject; never the token itself), or None."""
        if not token or len(token) > MAX_TOKEN_LENGTH:
            return None
        digest = hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()
        now = self._clock()
        kept = self._verified.get(digest)
        if kept is not None:
            if kept[1] > now:
                self._verified.move_to_end(digest)
                return kept[0]
            del self._verified[digest]
        try:
            found = await self._check(token, now)
        except Exception:  # a token must get 401, never a 500 from the middleware
            logger.warning("Checking a bearer token failed unexpectedly; it is refused", exc_info=True)
            return None
        if found is None:
            return None
        access, until = found
        self._verified[digest] = (access, until)
        while len(self._verified) > VERIFIED_ENTRIES:
            self._verified.popitem(last=False)
        return access

    async def _check(self, token: str, now: float) -> tuple[AccessToken, float] | None:
        self.checked += 1
        if token.count(".") == 2:
            return await self._check_jwt(token, now)
        if self.config.introspection_endpoint:
            return await self._introspect(token, now)
        logger.debug("Bearer token refused: not a JWT, and no introspection_endpoint is configured")
        return None

    async def _check_jwt(self, token: str, now: float) -> tuple[AccessToken, float] | None:
        try:
            header = jwt.get_unverified_header(token)
        except PyJWTError as exc:
            logger.debug("Bearer token refused: %s", exc)
            return None
        alg, kid = header.get("alg"), header.get("kid")
        if alg not in ALLOWED_ALGORITHMS or not (kid is None or isinstance(kid, str)):
            logger.debug("Bearer token refused: alg %r is not one of %s", alg, ", ".join(ALLOWED_ALGORITHMS))
            return None
        config = self.config
        for key in await self.keys.candidates(kid, alg):
            try:
                claims: dict[str, Any] = jwt.decode(
                    token,
                    key=key,
                    algorithms=list(ALLOWED_ALGORITHMS),
                    issuer=config.issuer,
                    audience=config.token_audience,
                    leeway=LEEWAY,
                    options={"require": ["exp", "iss", "aud"]},
                )
            except InvalidSignatureError:
                continue  # a key without a kid: another one of the set may have signed it
            except PyJWTError as exc:
                logger.debug("Bearer token refused: %s", exc)
                return None
            return _accepted(claims, config, now)
        logger.debug("Bearer token refused: no known key (kid %r) verifies it", kid)
        return None

    async def _introspect(self, token: str, now: float) -> tuple[AccessToken, float] | None:
        endpoint = self.config.introspection_endpoint
        assert endpoint is not None
        if self._introspecting >= MAX_INTROSPECTIONS:
            logger.debug("Bearer token refused: %d introspections are in flight already", self._introspecting)
            return None
        self._introspecting += 1
        try:
            document = await fetch_json(
                endpoint, form={"token": token, "token_type_hint": "access_token"}, basic=self._introspection_auth
            )
        except FetchError as exc:
            if not self._introspection_down:
                logger.warning("Token introspection at %s failed: %s; opaque tokens get 401 meanwhile", endpoint, exc)
            self._introspection_down = True
            return None
        finally:
            self._introspecting -= 1
        if self._introspection_down:
            logger.warning("Token introspection at %s answers again", endpoint)
            self._introspection_down = False
        if not isinstance(document, dict) or document.get("active") is not True:
            return None
        config = self.config
        if document.get("iss", config.issuer) != config.issuer or not _has_audience(document, config):
            logger.debug("Introspected token refused: issued by %r for %r", document.get("iss"), document.get("aud"))
            return None
        exp = document.get("exp")
        if isinstance(exp, int | float) and not isinstance(exp, bool) and exp + LEEWAY < now:
            return None
        accepted = _accepted({**document, "iss": config.issuer}, config, now)
        return accepted[0], min(accepted[1], now + INTROSPECTION_TTL)


def _has_audience(claims: Mapping[str, Any], config: AuthConfig) -> bool:
    aud = claims.get("aud")
    wanted = config.token_audience
    return aud == wanted or (isinstance(aud, list) and wanted in aud)


def token_scopes(claims: Mapping[str, Any]) -> list[str]:
    """The scopes a token grants: `scope` (RFC 9068 / 7662, space separated) or `scp` (a list or a string)."""
    raw = claims.get("scope", claims.get("scp"))
    if isinstance(raw, str):
        items: list[Any] = raw.split()
    elif isinstance(raw, list):
        items = raw
    else:
        return []
    return [item for item in items[:MAX_SCOPES] if isinstance(item, str) and item]


def _accepted(claims: Mapping[str, Any], config: AuthConfig, now: float) -> tuple[AccessToken, float]:
    client_id = next(
        (value for name in ("client_id", "azp", "cid", "appid") if isinstance(value := claims.get(name), str)), ""
    )
    subject = claims.get("sub")
    exp = claims.get("exp")
    expires = int(exp) if isinstance(exp, int | float) and not isinstance(exp, bool) else None
    access = AccessToken(
        token="",  # never kept: sessions, logs and the traffic log show the subject and client id only
        client_id=client_id,
        scopes=token_scopes(claims),
        # The SDK refuses a token past expires_at with no leeway of its own: the leeway is given here.
        expires_at=expires + LEEWAY if expires is not None else None,
        resource=config.resource,
        subject=subject if isinstance(subject, str) else None,
        claims={"iss": config.issuer},
    )
    until = now + VERIFIED_TTL
    if expires is not None:
        until = min(until, expires + LEEWAY)
    return access, until
