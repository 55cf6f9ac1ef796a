"""The HTTP side of `[server.auth]`: RFC 9728 metadata routes, the SDK's bearer middleware, 401 and 403 answers."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, BearerAuthBackend
from mcp.server.auth.routes import cors_middleware
from mcp.shared.auth import ProtectedResourceMetadata
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from resources_qt.project.auth_settings import AuthConfig
from resources_qt.server.auth.verifier import OAuthVerifier

__all__ = ["METADATA_PATH", "BearerGate", "ResourceServerAuth", "challenge"]

logger = logging.getLogger(__name__)

METADATA_PATH = "/.well-known/oauth-protected-resource"
"""RFC 9728's well-known prefix; the endpoint's own document is at this + the endpoint's path."""


class ResourceServerAuth:
    """What `[server.auth]` adds to one HTTP app: its verifier, its metadata routes and its bearer gate.

    `supported_scopes()` is asked at each metadata request, so the document follows the catalogue (the
    required scopes and every resource's scopes).
    """

    def __init__(
        self,
        config: AuthConfig,
        *,
        path: str,
        supported_scopes: Callable[[], Sequence[str]],
        verifier: OAuthVerifier | None = None,
    ) -> None:
        config.validate()
        self.config = config
        self.path = path
        self.verifier = verifier if verifier is not None else OAuthVerifier(config)
        self.metadata_url = config.metadata_url
        self._supported = supported_scopes
        self._document: tuple[tuple[str, ...], bytes] | None = None

    def hosts(self) -> list[str]:
        """The Host names clients use for this server (the resource URL's), for DNS-rebinding protection."""
        parts = urlsplit(self.config.resource)
        host = parts.hostname or ""
        return [f"[{host}]" if ":" in host else host] if host else []

    def metadata_paths(self) -> list[str]:
        """Where the document is served: RFC 9728's path form for the resource URL and for this server's
        endpoint (a proxy may map one onto the other), and the root form."""
        paths = [urlsplit(self.metadata_url).path, METADATA_PATH + self.path, METADATA_PATH]
        return list(dict.fromkeys(paths))

    def routes(self) -> list[Route]:
        endpoint = cors_middleware(self._metadata, ["GET", "OPTIONS"])
        return [Route(path, endpoint=endpoint, methods=["GET", "OPTIONS"]) for path in self.metadata_paths()]

    def document(self) -> bytes:
        """The RFC 9728 document as JSON (rebuilt only when the scopes change)."""
        config = self.config
        scopes = tuple(dict.fromkeys([*config.required_scopes, *sorted(self._supported())]))
        kept = self._document
        if kept is not None and kept[0] == scopes:
            return kept[1]
        metadata = ProtectedResourceMetadata.model_validate(
            {
                "resource": config.resource,
                "authorization_servers": [config.issuer],
                "scopes_supported": list(scopes) or None,
                "bearer_methods_supported": ["header"],
            }
        )
        body = metadata.model_dump_json(exclude_none=True).encode("utf-8")
        self._document = (scopes, body)
        return body

    async def _metadata(self, request: Request) -> Response:
        headers = {"Cache-Control": "public, max-age=300"}
        return Response(self.document(), media_type="application/json", headers=headers)

    def wrap(self, app: ASGIApp) -> ASGIApp:
        """`app` (the MCP app) behind the SDK's bearer middleware and the gate that answers 401 / 403.

        Inside the gate the SDK's `AuthContextMiddleware` puts the caller's token in its context variable.
        """
        gated = BearerGate(
            AuthContextMiddleware(app),
            path=self.path,
            metadata_url=self.metadata_url,
            required_scopes=self.config.required_scopes,
        )
        return AuthenticationMiddleware(gated, backend=BearerAuthBackend(self.verifier))


def challenge(*, metadata_url: str, error: str | None = None, description: str = "", scope: str = "") -> str:
    """A `WWW-Authenticate: Bearer ...` value (RFC 6750 section 3, RFC 9728 section 5.1)."""
    parts: list[str] = []
    if error:
        parts.append(f'error="{error}"')
        if description:
            parts.append(f'error_description="{description}"')
    if scope:
        parts.append(f'scope="{scope}"')
    parts.append(f'resource_metadata="{metadata_url}"')
    return "Bearer " + ", ".join(parts)


class BearerGate:
    """ASGI: requests to the MCP endpoint need a checked bearer token holding the required scopes.

    The SDK's `AuthenticationMiddleware` + `BearerAuthBackend` (outside) checked the token; here a request
    without one gets 401 with the metadata URL, one whose token was refused 401 with
    `error="invalid_token"`, and one lacking required scopes 403 with `error="insufficient_scope"` and the
    scopes it needs. The SDK's own `RequireAuthMiddleware` says `invalid_token` when no token was sent and
    names no scope: RFC 6750 asks for neither.
    """

    def __init__(self, app: ASGIApp, *, path: str, metadata_url: str, required_scopes: Sequence[str]) -> None:
        self.app = app
        self._path = path
        self._metadata_url = metadata_url
        self._required = tuple(required_scopes)
        self._scope_text = " ".join(self._required)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") != self._path:
            await self.app(scope, receive, send)
            return
        user = scope.get("user")
        if not isinstance(user, AuthenticatedUser):
            if _bearer_given(scope):
                header = challenge(metadata_url=self._metadata_url, error="invalid_token",
                                   description="The access token is invalid or expired", scope=self._scope_text)
                await _refuse(send, 401, header, "invalid_token", "The access token is invalid or expired")
            else:
                header = challenge(metadata_url=self._metadata_url, scope=self._scope_text)
                await _refuse(send, 401, header, "invalid_request", "Authorization required: send a bearer token")
            return
        granted = user.scopes
        if any(needed not in granted for needed in self._required):
            header = challenge(metadata_url=self._metadata_url, error="insufficient_scope",
                               description="The access token lacks a required scope", scope=self._scope_text)
            await _refuse(send, 403, header, "insufficient_scope", f"Required scopes: {self._scope_text}")
            return
        await self.app(scope, receive, send)


def _bearer_given(scope: Scope) -> bool:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            return bool(value[:7].lower() == b"bearer ")
    return False


async def _refuse(send: Send, status: int, www_authenticate: str, error: str, description: str) -> None:
    body = json.dumps({"error": error, "error_description": description}).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode("ascii")),
                (b"www-authenticate", www_authenticate.encode("latin-1")),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
