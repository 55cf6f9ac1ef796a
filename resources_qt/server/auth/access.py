"""One engine's access rules: `[server.auth]` for HTTP callers and the scopes each resource needs."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from resources_qt.collection import Resources
from resources_qt.errors import ResourceError
from resources_qt.project.auth_settings import AuthConfig
from resources_qt.server.auth.gate import ResourceServerAuth
from resources_qt.server.auth.visibility import EVERYONE, Caller, ScopePolicy, View, caller_of
from resources_qt.server.reading import resolve

__all__ = ["Access", "combined_with_token"]

logger = logging.getLogger(__name__)


def combined_with_token(config: AuthConfig | None, token: str | None) -> None:
    """Refuse a static bearer token beside `[server.auth]`: one of the two would silently not apply."""
    if config is not None and token:
        raise ValueError(
            "The project has [server.auth] (OAuth tokens from "
            f"{config.issuer}) and a static bearer token was given (--token or $RESOURCE_STUDIO_TOKEN): "
            "use one of the two; remove [server.auth] or drop the token"
        )


class Access:
    """What callers may see: everything, except over HTTP with `config` (`[server.auth]`) set, where a
    caller sees the resources whose `scopes` its token holds (a template's instances: the template's).

    The studio's preview asks with a view of its own (`seeing(view)`), as a caller with those scopes.
    """

    def __init__(self, resources: Resources) -> None:
        self.resources = resources
        self.config: AuthConfig | None = None
        """`[server.auth]`: taken by the next `start_http`."""
        self.scopes = ScopePolicy()

    def caller(self, ctx: Any) -> Caller:
        """Who sent the request `ctx` (a `ServerRequestContext`) serves; EVERYONE over stdio and without auth."""
        if self.config is None:
            return EVERYONE
        request = ctx.request
        if request is None:
            return EVERYONE  # stdio: the local client that launched the server
        return caller_of(request, self.scopes)

    def seeing(self, view: View) -> Callable[[str], bool] | None:
        """Whether a caller seeing `view` may see the resource of a name; None when it sees everything."""
        if view is None:
            return None
        scopes = self.scopes
        return lambda name: scopes.visible(name, view)

    def visible_to(self, uri: str, view: View) -> bool:
        """Whether a caller seeing `view` may be told about `uri` (subscribe, updated).

        A URI nothing matches names no resource, so no scope hides it; one only hidden resources match is
        hidden.
        """
        visible = self.seeing(view)
        if visible is None:
            return True
        try:
            if self.resources.resolve(uri) is None:
                return True
            resolve(self.resources, uri, protocol_version=None, visible=visible)
        except ResourceError:
            return False
        return True

    def supported_scopes(self) -> list[str]:
        """The scopes RFC 9728 metadata lists beside the required ones: every resource's."""
        return sorted(self.scopes.known)

    def http_auth(self, *, path: str, token: str | None) -> ResourceServerAuth | None:
        """What an HTTP app serving `path` needs for `[server.auth]`, or None without it."""
        config = self.config
        combined_with_token(config, token)
        if config is None:
            return None
        return ResourceServerAuth(config, path=path, supported_scopes=self.supported_scopes)
