"""The issuer's signing keys (JWKS): discovered, cached, refetched for an unknown key at most every 10 s."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from jwt import PyJWK, PyJWKSet
from jwt.exceptions import PyJWKSetError, PyJWTError
from mcp.client.auth.utils import build_oauth_authorization_server_metadata_discovery_urls

from resources_qt.project.auth_settings import url_problem
from resources_qt.server.auth.fetch import FetchError, fetch_json

__all__ = ["ALLOWED_ALGORITHMS", "KEYS_MAX_AGE", "MAX_KEYS", "REFETCH_INTERVAL", "SigningKeys"]

logger = logging.getLogger(__name__)

ALLOWED_ALGORITHMS = ("RS256", "ES256", "EdDSA")
"""Asymmetric signatures only: `none` and HMAC (HS256 "keyed" with a public key) are never accepted."""

REFETCH_INTERVAL = 10.0
"""Seconds between two fetches of the key set: a flood of tokens naming unknown keys costs one fetch per 10 s."""

KEYS_MAX_AGE = 3600.0
"""Seconds after which the key set is refreshed in the background (keys the issuer withdrew stop working)."""

MAX_KEYS = 100
"""Keys of one set that are kept; a key set is a handful."""


class SigningKeys:
    """The verification keys of one issuer, by key id, for the server loop.

    Ordinary requests never fetch: a token's key is looked up in the cached set. A token naming a key the
    set lacks (the issuer rotated its keys) triggers one refetch, shared by every request waiting on it,
    and at most one per `REFETCH_INTERVAL`. While the key set (or the issuer's metadata) cannot be
    fetched, the cached keys keep working, tokens signed with other keys are refused, and the outage is
    logged once when it starts and once when it ends.
    """

    def __init__(
        self,
        *,
        issuer: str,
        jwks_uri: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        refetch_interval: float = REFETCH_INTERVAL,
        max_age: float = KEYS_MAX_AGE,
    ) -> None:
        self.issuer = issuer
        self._jwks_uri = jwks_uri
        self._clock = clock
        self._refetch_interval = refetch_interval
        self._max_age = max_age
        self._keys: tuple[PyJWK, ...] = ()
        self._fetched: float | None = None
        self._attempted: float | None = None
        self._inflight: asyncio.Task[None] | None = None
        self._down = False
        self.fetches = 0
        """Key set fetches attempted (metadata discovery included in the one it serves)."""

    @property
    def jwks_uri(self) -> str | None:
        """The key set's address: configured, or discovered from the issuer's metadata (None until then)."""
        return self._jwks_uri

    @property
    def reachable(self) -> bool:
        """False while the last fetch failed."""
        return not self._down

    def cached(self) -> tuple[PyJWK, ...]:
        return self._keys

    async def candidates(self, kid: str | None, alg: str) -> list[PyJWK]:
        """The keys that may have signed a token with header `kid` / `alg` ([] when none is known)."""
        found = self._lookup(kid, alg)
        now = self._clock()
        if found:
            if self._fetched is not None and now - self._fetched > self._max_age and self._may_fetch(now):
                self._start_fetch()  # in the background: this token's key is known and still works
            return found
        if not self._may_fetch(now):
            return []
        await asyncio.shield(self._start_fetch())
        return self._lookup(kid, alg)

    async def refresh(self) -> None:
        """Fetch the key set now unless a fetch is under way (then wait for that one)."""
        await asyncio.shield(self._start_fetch())

    def _may_fetch(self, now: float) -> bool:
        if self._inflight is not None:
            return True  # wait for the fetch under way rather than refuse
        return self._attempted is None or now - self._attempted >= self._refetch_interval

    def _start_fetch(self) -> asyncio.Task[None]:
        task = self._inflight
        if task is None:
            self._attempted = self._clock()
            task = asyncio.get_running_loop().create_task(self._fetch())
            self._inflight = task
            task.add_done_callback(self._fetch_done)
        return task

    def _fetch_done(self, task: asyncio.Task[None]) -> None:
        if self._inflight is task:
            self._inflight = None

    def _lookup(self, kid: str | None, alg: str) -> list[PyJWK]:
        if kid is not None:
            return [key for key in self._keys if key.key_id == kid]
        return [key for key in self._keys if key.algorithm_name == alg]

    async def _fetch(self) -> None:
        self.fetches += 1
        try:
            uri = self._jwks_uri or await self._discover()
            self._jwks_uri = uri
            keys = usable_keys(await fetch_json(uri))
        except FetchError as exc:
            if not self._down:
                logger.warning(
                    "The signing keys of %s could not be fetched: %s. Tokens signed with keys already known "
                    "keep working; others get 401 until it answers (retried at most every %.0f s)",
                    self.issuer, exc, self._refetch_interval,
                )  # fmt: skip
            else:
                logger.debug("The signing keys of %s are still unreachable: %s", self.issuer, exc)
            self._down = True
            return
        except Exception:  # never let a fetch take a request down: it answers 401 instead
            logger.warning("Fetching the signing keys of %s failed unexpectedly", self.issuer, exc_info=True)
            self._down = True
            return
        if self._down:
            logger.warning("The signing keys of %s are reachable again (%d keys)", self.issuer, len(keys))
        else:
            logger.info("Fetched %d signing keys of %s from %s", len(keys), self.issuer, uri)
        self._down = False
        self._keys = keys
        self._fetched = self._clock()

    async def _discover(self) -> str:
        """The `jwks_uri` of the issuer's RFC 8414 (or OpenID Connect) metadata, whose `issuer` must be ours."""
        problems: list[str] = []
        for url in build_oauth_authorization_server_metadata_discovery_urls(self.issuer, self.issuer):
            try:
                document = await fetch_json(url)
            except FetchError as exc:
                problems.append(str(exc))
                continue
            if not isinstance(document, dict):
                problems.append(f"{url} is not a metadata document")
                continue
            if document.get("issuer") != self.issuer:
                # RFC 8414 section 3.3: metadata naming another issuer must not be used.
                problems.append(f"{url} names the issuer {str(document.get('issuer'))[:200]!r}")
                continue
            uri = document.get("jwks_uri")
            if not isinstance(uri, str):
                problems.append(f"{url} has no jwks_uri")
                continue
            problem = url_problem(uri, "jwks_uri")
            if problem is not None:
                problems.append(f"{url}: {problem}")
                continue
            return uri
        raise FetchError("no usable authorization server metadata (" + "; ".join(problems) + ")")


def usable_keys(document: Any) -> tuple[PyJWK, ...]:
    """The signature keys of a JWKS document in an allowed algorithm (encryption and symmetric keys skipped)."""
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise FetchError("the key set is not a JWKS document (no keys array)")
    raw = [key for key in document["keys"][:MAX_KEYS] if isinstance(key, dict) and key.get("use", "sig") == "sig"]
    try:
        keys = PyJWKSet(raw).keys if raw else []
    except (PyJWKSetError, PyJWTError) as exc:
        raise FetchError(f"the key set holds no usable keys: {exc}") from exc
    kept = tuple(key for key in keys if key.algorithm_name in ALLOWED_ALGORITHMS)
    if not kept:
        raise FetchError(f"the key set holds no {', '.join(ALLOWED_ALGORITHMS)} signing keys")
    return kept
