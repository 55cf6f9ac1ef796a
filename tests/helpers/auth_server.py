"""A local authorization-server stand-in: RFC 8414 metadata, JWKS and introspection on 127.0.0.1, test-made keys."""

from __future__ import annotations

import base64
import contextlib
import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

__all__ = ["AuthServer", "SigningKey", "running_auth_server"]

REALM = "/realms/test"


@dataclass
class SigningKey:
    """One key pair the stand-in signs with; `published` says whether its JWKS lists the public half."""

    kid: str
    alg: str
    private: Any
    published: bool = True

    @staticmethod
    def make(alg: str = "RS256", kid: str | None = None) -> SigningKey:
        private: Any
        if alg == "RS256":
            private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        elif alg == "ES256":
            private = ec.generate_private_key(ec.SECP256R1())
        elif alg == "EdDSA":
            private = ed25519.Ed25519PrivateKey.generate()
        else:
            raise ValueError(alg)
        return SigningKey(kid or f"{alg.lower()}-{uuid.uuid4().hex[:8]}", alg, private)

    def jwk(self) -> dict[str, Any]:
        public = self.private.public_key()
        algorithm: Any = {"RS256": RSAAlgorithm, "ES256": ECAlgorithm, "EdDSA": OKPAlgorithm}[self.alg]
        data: dict[str, Any] = json.loads(algorithm.to_jwk(public))
        data.update(kid=self.kid, use="sig", alg=self.alg)
        return data

    def public_pem(self) -> bytes:
        return bytes(self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))


@dataclass
class AuthServer:
    """What the stand-in serves and counts. Mutate `keys`, `jwks_down`, `opaque` from the test."""

    port: int = 0
    keys: list[SigningKey] = field(default_factory=list)
    jwks_down: bool = False
    metadata_down: bool = False
    opaque: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Opaque tokens the introspection endpoint knows, and what it answers for them."""
    jwks_hits: int = 0
    metadata_hits: int = 0
    introspection_hits: int = 0
    introspection_auth: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def issuer(self) -> str:
        return self.base + REALM

    @property
    def jwks_uri(self) -> str:
        return self.issuer + "/protocol/openid-connect/certs"

    @property
    def introspection_endpoint(self) -> str:
        return self.issuer + "/protocol/openid-connect/token/introspect"

    def key(self, alg: str = "RS256") -> SigningKey:
        return next(k for k in self.keys if k.alg == alg and k.published)

    def token(
        self,
        *,
        audience: str | list[str],
        scopes: str = "",
        key: SigningKey | None = None,
        subject: str = "user-1",
        client_id: str = "desk-app",
        lifetime: float = 300.0,
        issuer: str | None = None,
        headers: dict[str, Any] | None = None,
        **claims: Any,
    ) -> str:
        """A signed access token as Keycloak issues one (`azp` names the client)."""
        signer = key or self.keys[0]
        now = int(time.time())
        payload: dict[str, Any] = {
            "iss": issuer or self.issuer, "aud": audience, "sub": subject, "azp": client_id,
            "iat": now, "nbf": now, "exp": int(now + lifetime), "scope": scopes, **claims,
        }
        payload = {k: v for k, v in payload.items() if v is not None}
        header = {"kid": signer.kid, **(headers or {})}
        return jwt.encode(payload, signer.private, algorithm=signer.alg, headers=header)

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": self.issuer + "/protocol/openid-connect/auth",
            "token_endpoint": self.issuer + "/protocol/openid-connect/token",
            "jwks_uri": self.jwks_uri,
            "introspection_endpoint": self.introspection_endpoint,
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
        }


def _handler(state: AuthServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return  # quiet: the test asserts on counters

        def _json(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == f"/.well-known/oauth-authorization-server{REALM}":
                state.metadata_hits += 1
                if state.metadata_down:
                    self._json(503, {"error": "down"})
                else:
                    self._json(200, state.metadata())
            elif self.path == state.jwks_uri.removeprefix(state.base):
                state.jwks_hits += 1
                if state.jwks_down:
                    self._json(503, {"error": "down"})
                else:
                    self._json(200, {"keys": [k.jwk() for k in state.keys if k.published]})
            else:
                self._json(404, {"error": "not_found"})

        def do_POST(self) -> None:
            if self.path != state.introspection_endpoint.removeprefix(state.base):
                self._json(404, {"error": "not_found"})
                return
            state.introspection_hits += 1
            state.introspection_auth.append(self.headers.get("Authorization", ""))
            length = int(self.headers.get("Content-Length", "0"))
            form = parse_qs(self.rfile.read(length).decode("ascii"))
            token = form.get("token", [""])[0]
            self._json(200, state.opaque.get(token, {"active": False}))

    return Handler


_FIRST_KEYS: dict[str, SigningKey] = {}


def _first_key(alg: str) -> SigningKey:
    """Each algorithm's first key, made once per process (an RSA key takes up to a few hundred ms)."""
    kept = _FIRST_KEYS.get(alg)
    if kept is None:
        kept = _FIRST_KEYS[alg] = SigningKey.make(alg)
    return SigningKey(kept.kid, kept.alg, kept.private)


@contextlib.contextmanager
def running_auth_server(*algorithms: str) -> Iterator[AuthServer]:
    """A stand-in on a free 127.0.0.1 port with one published key per algorithm (RS256 when none given)."""
    state = AuthServer(keys=[_first_key(alg) for alg in (algorithms or ("RS256",))])
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="auth-stand-in",
                              daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(10)


def basic(client_id: str, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode("ascii")
