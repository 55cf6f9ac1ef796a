"""The cost of [server.auth] per read: a warm read with an OAuth token against the same read without, A B A B.

Two `resource-studio serve` processes serve one project, the second with `[server.auth]` (a local
authorization server in this process signs an RS256 token; the resource needs a scope the token holds,
so the per-resource visibility check runs too). A read of a resource with a cache hint is answered from
the server's read cache after the first, so what is compared is the request path itself: the bearer
middleware, the token check (a remembered token costs a hash) and the scope check. Run: `python
bench/auth_bench.py [--quick]`.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import PYTHON, REPO, Row, child_env, free_port, median, stop_process, wait_for_port
from bench.rpc_client import RpcSession

URI = "bench://profile"
TEXT = "a cached profile\n"
RESOURCE = "https://mcp.bench.example/mcp"
SCOPES = "mcp:read crm:read"
LEVELS = (1, 16)
GOAL = 1.10


class _Issuer:
    """RFC 8414 metadata and a JWKS on 127.0.0.1, and the RS256 key that signs the bench's token."""

    def __init__(self) -> None:
        import jwt
        from cryptography.hazmat.primitives.asymmetric import rsa
        from jwt.algorithms import RSAAlgorithm

        self._jwt = jwt
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        jwk = json.loads(RSAAlgorithm.to_jwk(self.key.public_key()))
        jwk.update(kid="bench", use="sig", alg="RS256")
        issuer = self
        self.jwks_hits = 0

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                if self.path.startswith("/.well-known/"):
                    body = {"issuer": issuer.issuer, "jwks_uri": issuer.issuer + "/certs",
                            "authorization_endpoint": issuer.issuer + "/auth", "token_endpoint": issuer.issuer + "/t"}
                else:
                    issuer.jwks_hits += 1
                    body = {"keys": [jwk]}
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.issuer = f"http://127.0.0.1:{self._httpd.server_address[1]}/realms/bench"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    def token(self) -> str:
        now = int(time.time())
        claims = {"iss": self.issuer, "aud": RESOURCE, "sub": "bench", "azp": "bench", "scope": SCOPES,
                  "iat": now, "exp": now + 3600}
        return str(self._jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": "bench"}))

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _projects(folder: Path, issuer: str) -> tuple[Path, Path]:
    from resources_qt.project import AuthConfig, Project, ResourceSpec, ServerSettings, save_project
    from resources_qt.resource import CacheHint

    spec = ResourceSpec(name="profile", uri=URI, mime_type="text/plain", cache=CacheHint(3_600_000, "private"),
                        reader=f"def read(uri, params):\n    return {TEXT!r}\n")
    plain = Project(server=ServerSettings(name="auth-bench", workers=1), resources=[spec])
    auth = AuthConfig(issuer=issuer, resource=RESOURCE, required_scopes=("mcp:read",))
    scoped = replace(spec, scopes=["crm:read"])
    authorized = Project(server=ServerSettings(name="auth-bench", workers=1, auth=auth), resources=[scoped])
    return save_project(plain, folder / "plain.toml"), save_project(authorized, folder / "auth.toml")


def _serve(project: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = child_env()
    env.pop("RESOURCE_STUDIO_TOKEN", None)
    proc = subprocess.Popen([PYTHON, "-m", "studio", "serve", str(project), "--http", f"127.0.0.1:{port}"],
                            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=log.open("wb"))  # fmt: skip
    wait_for_port(port, 30, proc)
    return proc, f"http://127.0.0.1:{port}/mcp"


async def _load(url: str, token: str | None, clients: int, seconds: float) -> tuple[float, float, int]:
    """(reads per second, median latency in ms, errors) of `clients` sessions reading URI for `seconds`."""
    headers = {"authorization": f"Bearer {token}"} if token else {}
    limits = httpx.Limits(max_connections=clients + 4, max_keepalive_connections=clients + 4)
    async with httpx.AsyncClient(limits=limits, timeout=30.0, headers=headers) as http:
        sessions = [RpcSession(http, url) for _ in range(clients)]
        await asyncio.gather(*(s.initialize() for s in sessions))
        latencies: list[float] = []
        errors = 0
        deadline = time.perf_counter() + seconds

        async def worker(session: RpcSession) -> None:
            nonlocal errors
            while time.perf_counter() < deadline:
                start = time.perf_counter()
                try:
                    if (await session.read(URI))["contents"][0]["text"] != TEXT:
                        errors += 1
                except Exception:
                    errors += 1
                latencies.append((time.perf_counter() - start) * 1000)

        began = time.perf_counter()
        await asyncio.gather(*(worker(s) for s in sessions))
        elapsed = time.perf_counter() - began
        await asyncio.gather(*(s.close() for s in sessions))
    return (len(latencies) - errors) / elapsed, median(latencies), errors


def measure(quick: bool) -> tuple[dict[int, list[tuple[float, float]]], dict[str, float]]:
    """Per level, the (latency ratio, throughput ratio) of each A B pair: with auth / without."""
    seconds = 1.5 if quick else 4.0
    pairs = 3 if quick else 7
    ratios: dict[int, list[tuple[float, float]]] = {}
    extra: dict[str, float] = {}
    issuer = _Issuer()
    with tempfile.TemporaryDirectory(prefix="bench-auth-") as tmp:
        folder = Path(tmp)
        plain_project, auth_project = _projects(folder, issuer.issuer)
        plain, plain_url = _serve(plain_project, folder / "plain.log")
        authorized, auth_url = _serve(auth_project, folder / "auth.log")
        token = issuer.token()
        try:
            asyncio.run(_load(plain_url, None, 2, 1.0))  # warm: imports, workers, the read cache, the key set
            asyncio.run(_load(auth_url, token, 2, 1.0))
            fetched = issuer.jwks_hits
            for clients in LEVELS:
                rows: list[tuple[float, float]] = []
                for _ in range(pairs):
                    base = asyncio.run(_load(plain_url, None, clients, seconds))
                    auth = asyncio.run(_load(auth_url, token, clients, seconds))
                    if base[2] or auth[2]:
                        raise RuntimeError(f"read errors: {base[2]} without auth, {auth[2]} with")
                    rows.append((auth[1] / base[1], base[0] / auth[0]))
                    extra.setdefault(f"auth_read_ms_plain_c{clients}", round(base[1], 3))
                    extra.setdefault(f"auth_read_ms_auth_c{clients}", round(auth[1], 3))
                ratios[clients] = rows
            extra["auth_jwks_fetches_while_measuring"] = issuer.jwks_hits - fetched
        finally:
            stop_process(plain)
            stop_process(authorized)
            issuer.close()
    return ratios, extra


def run(quick: bool) -> list[Row]:
    ratios, extra = measure(quick)
    details = []
    worst = 0.0
    for clients, rows in ratios.items():
        latency = median([r[0] for r in rows])
        throughput = median([r[1] for r in rows])
        extra[f"auth_read_latency_ratio_c{clients}"] = round(latency, 3)
        extra[f"auth_read_time_per_read_ratio_c{clients}"] = round(throughput, 3)
        worst = max(worst, latency, throughput)
        plain_ms, auth_ms = extra[f"auth_read_ms_plain_c{clients}"], extra[f"auth_read_ms_auth_c{clients}"]
        details.append(f"{clients} client(s): median latency x{latency:.3f}, time per read x{throughput:.3f} "
                       f"({plain_ms:.2f} -> {auth_ms:.2f} ms)")
    fetches = extra["auth_jwks_fetches_while_measuring"]
    detail = "; ".join(details) + f"; JWKS fetched {fetches:.0f} times while measuring"
    return [Row("auth_read_cost_ratio", "warm read with [server.auth] / without", round(worst, 3), "x",
                f"<= {GOAL:.2f}", worst <= GOAL, detail, extra)]


if __name__ == "__main__":
    for row in run("--quick" in sys.argv):
        print(f"{row.label}: x{row.value} (goal {row.goal}, {'met' if row.met else 'MISSED'})\n  {row.detail}")
        for key, value in row.extra.items():
            print(f"  {key}: {value}")
