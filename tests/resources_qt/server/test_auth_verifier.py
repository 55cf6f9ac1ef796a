"""OAuthVerifier and SigningKeys against the local authorization-server stand-in: every refusal, caching, outages."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from typing import Any

import jwt
import pytest
from helpers.auth_server import AuthServer, SigningKey, basic, running_auth_server

from resources_qt.project import AuthConfig
from resources_qt.server.auth.keys import SigningKeys
from resources_qt.server.auth.verifier import INTROSPECTION_ID_ENV, INTROSPECTION_SECRET_ENV, LEEWAY, OAuthVerifier

RESOURCE = "https://mcp.example.com/mcp"


@pytest.fixture
def stand_in() -> Iterator[AuthServer]:
    with running_auth_server("RS256", "ES256", "EdDSA") as server:
        yield server


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _verifier(server: AuthServer, clock: Clock | None = None, **config: Any) -> OAuthVerifier:
    auth = AuthConfig(issuer=server.issuer, resource=RESOURCE, **config)
    keys = SigningKeys(issuer=auth.issuer, jwks_uri=auth.jwks_uri, clock=clock or time.monotonic)
    return OAuthVerifier(auth, keys=keys, environ={})


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.mark.parametrize("alg", ["RS256", "ES256", "EdDSA"])
def test_a_token_signed_by_a_published_key_is_accepted_with_its_scopes_subject_and_client(
    stand_in: AuthServer, alg: str
) -> None:
    verifier = _verifier(stand_in)
    token = stand_in.token(audience=RESOURCE, scopes="mcp:read crm:read", key=stand_in.key(alg))
    access = _run(verifier.verify_token(token))
    assert access is not None
    assert access.scopes == ["mcp:read", "crm:read"] and access.subject == "user-1" and access.client_id == "desk-app"
    assert access.token == "" and access.claims == {"iss": stand_in.issuer}
    assert stand_in.metadata_hits == 1 and stand_in.jwks_hits == 1  # discovered from the RFC 8414 document


def test_audience_may_be_a_list_and_scp_a_list(stand_in: AuthServer) -> None:
    verifier = _verifier(stand_in)
    token = stand_in.token(audience=["account", RESOURCE], scopes=None, scp=["a", "b"])  # type: ignore[arg-type]
    access = _run(verifier.verify_token(token))
    assert access is not None and access.scopes == ["a", "b"]


def _refused(verifier: OAuthVerifier, token: str) -> bool:
    return _run(verifier.verify_token(token)) is None


def test_wrong_issuer_audience_expiry_and_not_yet_valid_are_refused(stand_in: AuthServer) -> None:
    verifier = _verifier(stand_in)
    now = time.time()
    assert _refused(verifier, stand_in.token(audience=RESOURCE, issuer="http://127.0.0.1:1/realms/other"))
    assert _refused(verifier, stand_in.token(audience="https://other.example.com/mcp"))
    assert _refused(verifier, stand_in.token(audience=RESOURCE, aud=None))  # no audience at all
    assert _refused(verifier, stand_in.token(audience=RESOURCE, lifetime=-(LEEWAY + 5)))
    assert _refused(verifier, stand_in.token(audience=RESOURCE, nbf=int(now + LEEWAY + 60)))
    assert _refused(verifier, stand_in.token(audience=RESOURCE, exp=None))  # a token must expire
    # Within the leeway both ways: accepted.
    assert not _refused(verifier, stand_in.token(audience=RESOURCE, lifetime=-(LEEWAY - 10)))
    assert not _refused(verifier, stand_in.token(audience=RESOURCE, nbf=int(now + LEEWAY - 10)))


def test_audience_setting_replaces_the_resource(stand_in: AuthServer) -> None:
    verifier = _verifier(stand_in, audience="mcp-server")
    assert not _refused(verifier, stand_in.token(audience="mcp-server"))
    assert _refused(verifier, stand_in.token(audience=RESOURCE))


def test_alg_none_and_hs256_keyed_with_the_public_key_are_refused(stand_in: AuthServer) -> None:
    verifier = _verifier(stand_in)
    rsa = stand_in.key("RS256")
    claims = jwt.decode(stand_in.token(audience=RESOURCE), options={"verify_signature": False})
    unsigned = jwt.encode(claims, None, algorithm="none", headers={"kid": rsa.kid})
    # The classic confusion: an HMAC over the token keyed with the issuer's public key (which anyone has).
    signed_with_public = _hs256(claims, rsa.public_pem(), kid=rsa.kid)
    assert _refused(verifier, unsigned)
    assert _refused(verifier, signed_with_public)
    assert not _refused(verifier, stand_in.token(audience=RESOURCE))


def _hs256(claims: dict[str, Any], secret: bytes, *, kid: str) -> str:
    import base64
    import hashlib
    import hmac
    import json

    def b64(data: bytes) -> bytes:
        return base64.urlsafe_b64encode(data).rstrip(b"=")

    head = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": kid}).encode())
    body = b64(json.dumps(claims).encode())
    signature = b64(hmac.new(secret, head + b"." + body, hashlib.sha256).digest())
    return (head + b"." + body + b"." + signature).decode()


def test_a_forged_signature_and_garbage_are_refused_never_raised(stand_in: AuthServer) -> None:
    verifier = _verifier(stand_in)
    good = stand_in.token(audience=RESOURCE)
    head, _body, _sig = good.split(".")
    other = stand_in.token(audience=RESOURCE, subject="admin").split(".")
    assert _refused(verifier, f"{head}.{other[1]}.{_sig}")  # claims swapped under a valid signature
    for garbage in ("", "a.b.c", "not-a-jwt", "x" * 100_000, "ey.ey.ey", "\udcff.a.b"):
        assert _refused(verifier, garbage)


def test_an_unknown_kid_refetches_once_per_ten_seconds_and_keys_are_cached(stand_in: AuthServer) -> None:
    clock = Clock()
    verifier = _verifier(stand_in, clock=clock, jwks_uri=stand_in.jwks_uri)

    async def scenario() -> None:
        first = stand_in.token(audience=RESOURCE)
        assert await verifier.verify_token(first) is not None
        assert stand_in.jwks_hits == 1 and stand_in.metadata_hits == 0  # jwks_uri given: no discovery
        for index in range(20):  # ordinary requests (new tokens, known key) never fetch
            assert await verifier.verify_token(stand_in.token(audience=RESOURCE, jti=str(index))) is not None
        assert stand_in.jwks_hits == 1
        # Rotation: a token signed with a key the cached set lacks triggers one refetch...
        rotated = SigningKey.make("RS256")
        stand_in.keys.append(rotated)
        clock.now += 11
        assert await verifier.verify_token(stand_in.token(audience=RESOURCE, key=rotated)) is not None
        assert stand_in.jwks_hits == 2
        # ...and a flood of unknown kids costs one fetch per 10 s, concurrent ones sharing it.
        stranger = SigningKey.make("RS256")
        tokens = [stand_in.token(audience=RESOURCE, key=stranger, jti=str(i)) for i in range(30)]
        results = await asyncio.gather(*(verifier.verify_token(t) for t in tokens[:10]))
        assert results == [None] * 10 and stand_in.jwks_hits == 2  # fetched 0 s ago: not again
        clock.now += 10
        results = await asyncio.gather(*(verifier.verify_token(t) for t in tokens[10:]))
        assert results == [None] * 20 and stand_in.jwks_hits == 3

    _run(scenario())


def test_the_jwks_down_keeps_cached_keys_working_logs_once_and_refuses_the_rest(
    stand_in: AuthServer, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    verifier = _verifier(stand_in, clock=clock)
    rotated = SigningKey.make("ES256")

    async def scenario() -> None:
        assert await verifier.verify_token(stand_in.token(audience=RESOURCE)) is not None
        stand_in.jwks_down = True
        stand_in.keys.append(rotated)
        for step in range(4):
            clock.now += 11
            assert await verifier.verify_token(stand_in.token(audience=RESOURCE, key=rotated, jti=str(step))) is None
            assert await verifier.verify_token(stand_in.token(audience=RESOURCE, jti=str(step))) is not None
        assert not verifier.keys.reachable
        stand_in.jwks_down = False
        clock.now += 11
        assert await verifier.verify_token(stand_in.token(audience=RESOURCE, key=rotated)) is not None

    with caplog.at_level(logging.WARNING, logger="resources_qt.server.auth"):
        _run(scenario())
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("resources_qt.server.auth")]
    assert len(lines) == 2, lines
    assert "could not be fetched" in lines[0] and "HTTP 503" in lines[0] and "reachable again" in lines[1]
    assert stand_in.jwks_hits == 6


def test_metadata_naming_another_issuer_is_not_used(stand_in: AuthServer, caplog: pytest.LogCaptureFixture) -> None:
    auth = AuthConfig(issuer=stand_in.issuer + "/", resource=RESOURCE)  # not the issuer its metadata names
    verifier = OAuthVerifier(auth, environ={})
    token = stand_in.token(audience=RESOURCE, issuer=auth.issuer)
    with caplog.at_level(logging.WARNING, logger="resources_qt.server.auth"):
        assert _run(verifier.verify_token(token)) is None
    assert any("no usable authorization server metadata" in r.getMessage() for r in caplog.records)


def test_a_checked_token_is_remembered_until_it_expires(stand_in: AuthServer) -> None:
    clock = Clock()
    clock.now = time.time()
    auth = AuthConfig(issuer=stand_in.issuer, resource=RESOURCE)
    verifier = OAuthVerifier(auth, clock=clock, environ={})
    token = stand_in.token(audience=RESOURCE, lifetime=60)

    async def scenario() -> None:
        for _ in range(5):
            assert await verifier.verify_token(token) is not None
        assert verifier.checked == 1
        clock.now += 60 + LEEWAY + 1  # the memory's clock only: PyJWT still finds the token valid
        assert await verifier.verify_token(token) is not None
        assert verifier.checked == 2  # checked again rather than taken from memory

    _run(scenario())


def test_opaque_tokens_are_introspected_with_the_servers_own_credentials(stand_in: AuthServer) -> None:
    auth = AuthConfig(issuer=stand_in.issuer, resource=RESOURCE, introspection_endpoint=stand_in.introspection_endpoint)
    env = {INTROSPECTION_ID_ENV: "mcp-server", INTROSPECTION_SECRET_ENV: "s3cret"}
    verifier = OAuthVerifier(auth, environ=env)
    now = int(time.time())
    stand_in.opaque["opaque-1"] = {"active": True, "iss": stand_in.issuer, "aud": RESOURCE, "exp": now + 60,
                                   "scope": "mcp:read", "sub": "u2", "client_id": "cli"}
    stand_in.opaque["other-aud"] = {"active": True, "iss": stand_in.issuer, "aud": "elsewhere", "exp": now + 60}
    stand_in.opaque["inactive"] = {"active": False}
    access = _run(verifier.verify_token("opaque-1"))
    assert access is not None and access.scopes == ["mcp:read"] and access.subject == "u2"
    assert _refused(verifier, "other-aud") and _refused(verifier, "inactive") and _refused(verifier, "unknown")
    assert stand_in.introspection_auth[0] == basic("mcp-server", "s3cret")
    # Without an introspection endpoint an opaque token is refused unasked.
    hits = stand_in.introspection_hits
    assert _refused(_verifier(stand_in), "opaque-1") and stand_in.introspection_hits == hits
