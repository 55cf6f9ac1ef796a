"""Bounded JSON over HTTP from the authorization server: a timeout, a size cap, one-line failures."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx2

__all__ = ["FETCH_TIMEOUT", "MAX_DOCUMENT_BYTES", "FetchError", "fetch_json"]

FETCH_TIMEOUT = 5.0
"""Seconds a metadata, JWKS or introspection request may take."""

MAX_DOCUMENT_BYTES = 1024 * 1024
"""A larger answer is refused unread: a JWKS or metadata document is a few kilobytes."""


class FetchError(Exception):
    """The document could not be had: unreachable, refused, too big or not JSON (the message says which)."""


async def fetch_json(
    url: str,
    *,
    form: Mapping[str, str] | None = None,
    basic: tuple[str, str] | None = None,
    timeout: float = FETCH_TIMEOUT,
) -> Any:
    """GET `url` (POST `form` when given) and parse its JSON answer; `FetchError` naming the reason otherwise.

    Redirects are not followed: a key set or metadata document must come from the address configured or
    advertised, not wherever a redirect points.
    """
    try:
        async with httpx2.AsyncClient(timeout=timeout, follow_redirects=False) as client:
            method = "POST" if form is not None else "GET"
            headers = {"Accept": "application/json"}
            async with client.stream(method, url, data=dict(form) if form is not None else None,
                                     auth=basic, headers=headers) as response:  # fmt: skip
                if response.status_code != 200:
                    raise FetchError(f"HTTP {response.status_code} from {url}")
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_DOCUMENT_BYTES:
                        raise FetchError(f"the answer of {url} is over {MAX_DOCUMENT_BYTES} bytes")
    except httpx2.HTTPError as exc:
        text = " ".join(str(exc).split()) or type(exc).__name__
        raise FetchError(f"{url}: {text}") from exc
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise FetchError(f"the answer of {url} is not JSON") from exc
