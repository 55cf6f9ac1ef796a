"""`serve` as an OAuth 2.1 resource server: token checks, RFC 9728 metadata, 401/403, per-resource scopes."""

from resources_qt.server.auth.gate import ResourceServerAuth
from resources_qt.server.auth.keys import ALLOWED_ALGORITHMS, SigningKeys
from resources_qt.server.auth.verifier import OAuthVerifier
from resources_qt.server.auth.visibility import EVERYONE, Caller, ScopePolicy, View, caller_of, granted_scopes

__all__ = [
    "ALLOWED_ALGORITHMS",
    "EVERYONE",
    "Caller",
    "OAuthVerifier",
    "ResourceServerAuth",
    "ScopePolicy",
    "SigningKeys",
    "View",
    "caller_of",
    "granted_scopes",
]
