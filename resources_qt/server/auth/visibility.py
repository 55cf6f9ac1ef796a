"""Per-resource scopes: which resources a caller's token lets it list, read, subscribe to and complete."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # loaded with the HTTP server; the window's preview uses the policy without the SDK
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

__all__ = ["EVERYONE", "Caller", "ScopePolicy", "View", "caller_of", "granted_scopes", "reading_as"]

View = frozenset[str] | None
"""What a caller may see: the scopes it holds among those any resource asks for, or None for everything
(stdio, HTTP without `[server.auth]`, the studio's own preview)."""


class ScopePolicy:
    """The scopes each resource needs, by resource name (a template's instances follow their template).

    Copy-on-write: readers on the server loop take the current map without a lock; edits (a reload, the
    studio) swap in a new one. An edit tightens the scopes *before* the collection changes (`tighten`) and
    sets them as served after (`replace`), so a resource never serves for a moment with fewer scopes than
    one of its versions declares.
    """

    def __init__(self, scopes: Mapping[str, Iterable[str]] | None = None) -> None:
        self._lock = threading.Lock()
        self._by_name: dict[str, frozenset[str]] = {}
        self._known: frozenset[str] = frozenset()
        if scopes:
            self.update(scopes)

    @staticmethod
    def of_specs(specs: Iterable[Any]) -> dict[str, list[str]]:
        """`{name: scopes}` of project `ResourceSpec`s (anything with `name` and `scopes`)."""
        return {spec.name: list(spec.scopes) for spec in specs}

    def tighten(self, scopes: Mapping[str, Iterable[str]]) -> None:
        """Before an edit is applied: each named resource needs its old scopes and the new ones, so neither
        version serves for a moment with less than its declaration asks (`replace` follows the edit)."""
        with self._lock:
            merged = dict(self._by_name)
            for name, needed in scopes.items():
                joined = merged.get(name, frozenset()) | frozenset(needed)
                if joined:
                    merged[name] = joined
            self._set(merged)

    def update(self, scopes: Mapping[str, Iterable[str]]) -> None:
        """Set the scopes of the resources named in `scopes` (others keep theirs until `retain`)."""
        with self._lock:
            merged = dict(self._by_name)
            for name, needed in scopes.items():
                frozen = frozenset(needed)
                if frozen:
                    merged[name] = frozen
                else:
                    merged.pop(name, None)
            self._set(merged)

    def replace(self, scopes: Mapping[str, Iterable[str]]) -> None:
        """Exactly these resources need scopes (a freshly built server)."""
        with self._lock:
            self._set({name: frozenset(needed) for name, needed in scopes.items() if needed})

    def retain(self, names: Iterable[str]) -> None:
        """Forget the resources not in `names` (they left the catalogue)."""
        keep = set(names)
        with self._lock:
            if set(self._by_name) - keep:
                self._set({name: needed for name, needed in self._by_name.items() if name in keep})

    def _set(self, by_name: dict[str, frozenset[str]]) -> None:
        known: set[str] = set()
        for needed in by_name.values():
            known |= needed
        self._by_name, self._known = by_name, frozenset(known)

    @property
    def restricts(self) -> bool:
        """Whether any resource needs a scope (when none does, every caller sees the same)."""
        return bool(self._by_name)

    @property
    def known(self) -> frozenset[str]:
        """Every scope some resource needs."""
        return self._known

    def needed(self, name: str) -> frozenset[str]:
        return self._by_name.get(name, frozenset())

    def visible(self, name: str, view: View) -> bool:
        """Whether a caller seeing `view` may see the resource called `name`."""
        if view is None:
            return True
        needed = self._by_name.get(name)
        return needed is None or needed <= view

    def view_of(self, granted: Iterable[str]) -> View:
        """The view of a caller holding `granted`: only the scopes that matter, so callers who see the same
        things share one view (and the read cache's entries)."""
        return frozenset(granted) & self._known


@dataclass(frozen=True, slots=True)
class Caller:
    """Who sent a request: what it may see, and whom its token speaks for (never the token itself)."""

    view: View = None
    subject: str = ""
    client_id: str = ""


EVERYONE = Caller()
"""A caller that sees everything and names no one: stdio, HTTP without `[server.auth]`, the studio."""


def _user(request: Any) -> AuthenticatedUser | None:
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

    scope = getattr(request, "scope", None)
    user = scope.get("user") if isinstance(scope, dict) else None
    return user if isinstance(user, AuthenticatedUser) else None


def granted_scopes(request: Any) -> tuple[str, ...] | None:
    """The scopes of the bearer token a Starlette request carried (checked by the SDK's auth middleware),
    or None when the request carries no authenticated user."""
    user = _user(request)
    return None if user is None else tuple(user.scopes)


def caller_of(request: Any, policy: ScopePolicy) -> Caller:
    """The caller of an HTTP request served with `[server.auth]`: its token's view, subject and client id.

    A request without a checked token (the bearer gate lets none through) sees only what needs no scope.
    """
    user = _user(request)
    if user is None:
        return Caller(view=frozenset() if policy.restricts else None)
    token = user.access_token
    view = policy.view_of(token.scopes) if policy.restricts else None
    return Caller(view=view, subject=token.subject or "", client_id=token.client_id)


def reading_as(specs: Iterable[Any], scopes: Iterable[str]) -> Callable[[str], bool]:
    """Whether a caller whose token holds `scopes` may see the resource of a name, among project `specs`
    (the studio's "read as": the same policy the server applies, without a token)."""
    policy = ScopePolicy(ScopePolicy.of_specs(specs))
    view = policy.view_of(scopes)
    return lambda name: policy.visible(name, view)
