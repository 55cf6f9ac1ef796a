"""`serve` as an OAuth 2.1 resource server: real serve processes, a local authorization server, SDK clients."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import mcp_types as types
import pytest
from engine_support import MODES, connect, wait_for
from helpers.auth_server import AuthServer, SigningKey, running_auth_server
from helpers.bus_fleet import ROOT, Replica
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated

from resources_qt.project import AuthConfig, Project, ResourceSpec, ServerSettings, save_project
from resources_qt.project.model import WatchSpec
from resources_qt.resource import CacheHint

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

RESOURCE = "https://mcp.example.com/mcp"
METADATA_URL = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
READ = "mcp:read"
CRM = f"{READ} crm:read"
ADMIN = f"{CRM} crm:admin"
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
HIDDEN = "crm://customers/42/profile"


def auth_project(issuer: str, folder: Path) -> Path:
    """A support desk with public, crm:read and crm:admin resources; watched files drive `updated`."""
    (folder / "data").mkdir(exist_ok=True)
    for name in ("crm.txt", "status.txt"):
        (folder / "data" / name).write_text("0", encoding="utf-8")
    counter = "COUNT = [0]\n"
    resources = [
        ResourceSpec(name="status", uri="desk://status", mime_type="text/plain",
                     watch=WatchSpec(files=["data/status.txt"]),
                     # Its content is the watched file's: a change is announced only where content changed.
                     reader="def read(uri, params):\n    return (PROJECT_DIR / 'data' / 'status.txt').read_text()\n"),
        ResourceSpec(name="customer_profile", uri_template="crm://customers/{id}/profile", mime_type="text/plain",
                     scopes=["crm:read"], completions={"id": ["42", "43"]},
                     instances="def instances():\n    return [{'id': '42'}, {'id': '43'}]\n",
                     cache=CacheHint(60_000, "private"), watch=WatchSpec(files=["data/crm.txt"]),
                     reader="def read(uri, params):\n    COUNT[0] += 1\n    return f\"{params['id']} #{COUNT[0]}\"\n"),
        ResourceSpec(name="vip", uri="crm://vip", mime_type="text/plain", scopes=["crm:admin"],
                     reader="def read(uri, params):\n    return 'vip list'\n"),
        ResourceSpec(name="special_note", uri="notes://special", mime_type="text/plain", scopes=["crm:admin"],
                     reader="def read(uri, params):\n    return 'admin note'\n"),
        ResourceSpec(name="note", uri_template="notes://{id}", mime_type="text/plain",
                     reader="def read(uri, params):\n    return 'note ' + params['id']\n"),
    ]
    auth = AuthConfig(issuer=issuer, resource=RESOURCE, required_scopes=(READ,))
    project = Project(server=ServerSettings(name="Auth desk", notifications=True, subscriptions=True, workers=1,
                                            auth=auth), prelude=counter, resources=resources)
    return save_project(project, folder / "desk.toml")


class Served:
    def __init__(self, issuer: AuthServer, replica: Replica, url: str) -> None:
        self.issuer = issuer
        self.replica = replica
        self.url = url
        self.base = url.removesuffix("/mcp")

    def token(self, scopes: str, **claims: Any) -> str:
        return self.issuer.token(audience=RESOURCE, scopes=scopes, **claims)

    @asynccontextmanager
    async def client(self, scopes: str | None, mode: str, **kwargs: Any) -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {self.token(scopes)}"} if scopes is not None else {}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=20) as http,
            connect(streamable_http_client(self.url, http_client=http), mode, **kwargs) as client,
        ):
            yield client


def _started(replica: Replica) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = re.search(r"Serving .* at (http://\S+/mcp)", replica.stderr())
        if found:
            return found.group(1)
        if replica.process.poll() is not None:
            raise AssertionError(f"serve exited with {replica.process.returncode}: {replica.stderr()}")
        time.sleep(0.05)
    raise AssertionError(f"serve did not start: {replica.stderr()}")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with running_auth_server("RS256", "ES256", "EdDSA") as issuer:
        folder = tmp_path_factory.mktemp("auth")
        replica = Replica(auth_project(issuer.issuer, folder), "--log-level", "info")
        try:
            yield Served(issuer, replica, _started(replica))
        finally:
            replica.stop()


# -- metadata, 401, 403 -------------------------------------------------------------------


def test_the_metadata_document_is_served_at_the_path_form_and_the_root(served: Served) -> None:
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        response = httpx.get(served.base + path, timeout=10)
        assert response.status_code == 200, path
        assert response.json() == {
            "resource": RESOURCE,
            "authorization_servers": [served.issuer.issuer],
            "scopes_supported": [READ, "crm:admin", "crm:read"],
            "bearer_methods_supported": ["header"],
        }


def _post(served: Served, token: str | None, *, raw_header: str | None = None) -> httpx.Response:
    headers = dict(HEADERS)
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if raw_header is not None:
        headers["Authorization"] = raw_header
    return httpx.post(served.url, json=INIT, headers=headers, timeout=10)


def _challenge(response: httpx.Response) -> dict[str, str]:
    header = response.headers["www-authenticate"]
    assert header.startswith("Bearer ")
    return dict(re.findall(r'(\w+)="([^"]*)"', header))


def test_no_token_is_401_pointing_at_the_metadata_without_an_error(served: Served) -> None:
    for response in (_post(served, None), _post(served, None, raw_header="Basic dXNlcjpwdw==")):
        assert response.status_code == 401
        assert _challenge(response) == {"resource_metadata": METADATA_URL, "scope": READ}


def test_a_malformed_token_is_401_invalid_token(served: Served) -> None:
    for token in ("garbage", "a.b.c", "x" * 20_000):
        response = _post(served, token)
        assert response.status_code == 401
        challenge = _challenge(response)
        assert challenge["error"] == "invalid_token" and challenge["resource_metadata"] == METADATA_URL


def test_an_expired_token_is_401(served: Served) -> None:
    response = _post(served, served.token(READ, lifetime=-120))
    assert response.status_code == 401 and _challenge(response)["error"] == "invalid_token"


def test_a_token_for_another_audience_is_401(served: Served) -> None:
    token = served.issuer.token(audience="https://other.example.com/mcp", scopes=READ)
    response = _post(served, token)
    assert response.status_code == 401 and _challenge(response)["error"] == "invalid_token"


def test_a_token_of_another_issuer_is_401(served: Served) -> None:
    response = _post(served, served.token(READ, issuer="https://evil.example.com/realms/test"))
    assert response.status_code == 401 and _challenge(response)["error"] == "invalid_token"


def test_alg_none_and_hs256_keyed_with_the_public_key_are_401(served: Served) -> None:
    import base64
    import hashlib
    import hmac

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    rsa = served.issuer.key("RS256")
    claims = json.loads(base64.urlsafe_b64decode(served.token(READ).split(".")[1] + "=="))
    body = b64(json.dumps(claims).encode())
    unsigned = f"{b64(json.dumps({'alg': 'none', 'kid': rsa.kid}).encode())}.{body}."
    head = b64(json.dumps({"alg": "HS256", "kid": rsa.kid}).encode())
    mac = b64(hmac.new(rsa.public_pem(), f"{head}.{body}".encode(), hashlib.sha256).digest())
    for token in (unsigned, f"{head}.{body}.{mac}"):
        response = _post(served, token)
        assert response.status_code == 401 and _challenge(response)["error"] == "invalid_token"
    assert _post(served, served.token(READ)).status_code == 200


def test_missing_required_scopes_is_403_insufficient_scope(served: Served) -> None:
    response = _post(served, served.token("crm:read"))
    assert response.status_code == 403
    challenge = _challenge(response)
    assert challenge["error"] == "insufficient_scope" and challenge["scope"] == READ


@pytest.mark.parametrize("alg", ["RS256", "ES256", "EdDSA"])
def test_every_allowed_algorithm_is_accepted(served: Served, alg: str) -> None:
    token = served.issuer.token(audience=RESOURCE, scopes=READ, key=served.issuer.key(alg))
    assert _post(served, token).status_code == 200


# -- per-resource scopes ------------------------------------------------------------------------


async def _listing(client: Client) -> tuple[list[str], list[str]]:
    listed = await client.list_resources(cursor=None, cache_mode="bypass")
    templates = await client.list_resource_templates(cursor=None, cache_mode="bypass")
    return [r.uri for r in listed.resources], [t.uri_template for t in templates.resource_templates]


@pytest.mark.parametrize("mode", MODES)
async def test_a_caller_lists_only_what_its_scopes_allow(served: Served, mode: str) -> None:
    async with served.client(READ, mode) as plain, served.client(CRM, mode) as crm, served.client(ADMIN, mode) as admin:
        assert await _listing(plain) == (["desk://status"], ["notes://{id}"])
        direct, templates = await _listing(crm)
        assert direct == ["desk://status", "crm://customers/42/profile", "crm://customers/43/profile"]
        assert templates == ["crm://customers/{id}/profile", "notes://{id}"]
        direct, _ = await _listing(admin)
        assert direct == ["desk://status", "crm://vip", "notes://special", "crm://customers/42/profile",
                          "crm://customers/43/profile"]


async def _error(call: Any) -> MCPError:
    with pytest.raises(MCPError) as caught:
        await call
    return caught.value


@pytest.mark.parametrize("mode", MODES)
async def test_what_a_caller_may_not_see_reads_as_not_found(served: Served, mode: str) -> None:
    async with served.client(READ, mode) as plain, served.client(ADMIN, mode) as admin:
        hidden = await _error(plain.read_resource(HIDDEN, cache_mode="bypass"))
        unknown = await _error(plain.read_resource("crm://nothing/here", cache_mode="bypass"))
        assert hidden.code == unknown.code == (-32002 if mode == "legacy" else -32602)
        assert hidden.message == unknown.message.replace("crm://nothing/here", HIDDEN)
        assert hidden.data == {"uri": HIDDEN}
        assert (await _error(plain.read_resource("crm://vip", cache_mode="bypass"))).code == unknown.code
        # A hidden direct resource gives way to the template behind it, as if it did not exist.
        note = await plain.read_resource("notes://special", cache_mode="bypass")
        assert note.contents[0].text == "note special"
        special = await admin.read_resource("notes://special", cache_mode="bypass")
        assert special.contents[0].text == "admin note"


@pytest.mark.parametrize("mode", MODES)
async def test_completions_of_a_hidden_template_answer_as_an_unknown_one(served: Served, mode: str) -> None:
    ref = types.ResourceTemplateReference(uri="crm://customers/{id}/profile")
    unknown_ref = types.ResourceTemplateReference(uri="crm://unknown/{id}")
    async with served.client(READ, mode) as plain, served.client(CRM, mode) as crm:
        hidden = await _error(plain.complete(ref, argument={"name": "id", "value": "4"}))
        unknown = await _error(plain.complete(unknown_ref, argument={"name": "id", "value": "4"}))
        assert hidden.code == unknown.code and hidden.message == unknown.message.replace(
            unknown_ref.uri, ref.uri)
        shown = await crm.complete(ref, argument={"name": "id", "value": "4"})
        assert shown.completion.values == ["42", "43"]


async def test_read_cache_entries_are_per_scope_set(served: Served) -> None:
    uri = "crm://customers/77/profile"
    async with (
        served.client(CRM, "2026-07-28") as crm,
        served.client(f"{CRM} openid profile", "2026-07-28") as crm_too,
        served.client(ADMIN, "2026-07-28") as admin,
        served.client(READ, "2026-07-28") as plain,
    ):
        first = (await crm.read_resource(uri, cache_mode="bypass")).contents[0].text
        again = (await crm.read_resource(uri, cache_mode="bypass")).contents[0].text
        # Scopes no resource asks for do not split the cache: this caller sees what the first one sees.
        shared = (await crm_too.read_resource(uri, cache_mode="bypass")).contents[0].text
        other = (await admin.read_resource(uri, cache_mode="bypass")).contents[0].text
        assert (await _error(plain.read_resource(uri, cache_mode="bypass"))).code == -32602
    count = int(first.split("#")[1])
    assert again == shared == first and other == f"77 #{count + 1}"


# -- subscriptions and updated -----------------------------------------------------------------------


def _touch(path: Path) -> None:
    path.write_text(str(time.monotonic_ns()), encoding="utf-8")


@asynccontextmanager
async def _subscriber(served: Served, scopes: str, mode: str) -> AsyncIterator[list[str]]:
    """A subscriber of HIDDEN and desk://status; the list holds the URIs of the updates it got, in order."""
    got: list[str] = []
    uris = [HIDDEN, "desk://status"]

    async def on_message(message: Any) -> None:
        if mode == "legacy" and isinstance(message, types.ResourceUpdatedNotification):
            got.append(str(message.params.uri))

    async with served.client(scopes, mode, message_handler=on_message) as client:
        if mode == "legacy":
            for uri in uris:
                await client.subscribe_resource(uri)
            yield got
            return
        async with client.listen(resource_subscriptions=uris) as stream:
            import asyncio

            async def consume() -> None:
                async for event in stream:
                    if isinstance(event, ResourceUpdated):
                        got.append(event.uri)

            task = asyncio.create_task(consume())
            try:
                yield got
            finally:
                task.cancel()


@pytest.mark.parametrize("mode", MODES)
async def test_a_hidden_resource_is_not_subscribable_and_sends_no_updated(served: Served, mode: str) -> None:
    data = served.replica.project.parent / "data"
    async with _subscriber(served, CRM, mode) as crm, _subscriber(served, READ, mode) as plain:
        # Legacy GET streams open in the background: retouch until each subscriber hears of its file.
        await _until_heard(crm, HIDDEN, data / "crm.txt")
        await _until_heard(plain, "desk://status", data / "status.txt")
        # The crm change was sent before the status change; a subscriber told of both hears them in order.
        _touch(data / "crm.txt")
        await wait_for(lambda: crm.count(HIDDEN) >= 2)
        before = len(plain)
        _touch(data / "status.txt")
        await wait_for(lambda: len(plain) > before)
    assert HIDDEN not in plain and set(plain) == {"desk://status"}


async def _until_heard(got: list[str], uri: str, path: Path) -> None:
    deadline = time.monotonic() + 20
    while uri not in got:
        assert time.monotonic() < deadline, f"{uri} never announced"
        _touch(path)
        try:
            await wait_for(lambda: uri in got, timeout=1.0)
        except AssertionError:
            continue


# -- keys: cached, refetched on an unknown kid, an outage --------------------------------------------


def test_ordinary_requests_never_fetch_keys_and_an_unknown_kid_fetches_once(served: Served) -> None:
    assert _post(served, served.token(READ)).status_code == 200
    hits = served.issuer.jwks_hits
    for index in range(10):
        assert _post(served, served.token(READ, jti=str(index))).status_code == 200
    assert served.issuer.jwks_hits == hits
    strangers = [SigningKey.make("ES256") for _ in range(3)]
    answers = [_post(served, served.issuer.token(audience=RESOURCE, scopes=READ, key=k)).status_code
               for k in strangers]
    assert answers == [401, 401, 401]
    assert served.issuer.jwks_hits <= hits + 1  # one refetch at most, within 10 s


def test_the_jwks_down_answers_401_logged_once_and_known_keys_keep_working(tmp_path: Path) -> None:
    with running_auth_server("RS256") as issuer:
        issuer.jwks_down = True
        replica = Replica(auth_project(issuer.issuer, tmp_path))
        try:
            url = _started(replica)
            token = issuer.token(audience=RESOURCE, scopes=READ)

            def post() -> int:
                headers = {**HEADERS, "Authorization": f"Bearer {token}"}
                return httpx.post(url, json=INIT, headers=headers, timeout=10).status_code

            # Down from the start: refused (never a 500), and fetched once however many requests come.
            assert [post() for _ in range(5)] == [401] * 5
            assert issuer.jwks_hits == 1
            issuer.jwks_down = False
            deadline = time.monotonic() + 20
            while post() != 200:  # the next fetch comes at most 10 s after the last one
                assert time.monotonic() < deadline, replica.stderr()
                time.sleep(0.2)
            assert issuer.jwks_hits == 2
            # Down again: the cached key keeps working, nothing is fetched for it.
            issuer.jwks_down = True
            assert [post() for _ in range(3)] == [200] * 3 and issuer.jwks_hits == 2
        finally:
            replica.stop()
        lines = [line for line in replica.stderr().splitlines() if "signing keys" in line]
        assert len(lines) == 2, lines
        assert "could not be fetched" in lines[0] and "HTTP 503" in lines[0] and "reachable again" in lines[1]
        assert "Traceback" not in replica.stderr()


# -- who called, refusals at start, stdio ------------------------------------------------------------------


def test_serve_logs_who_opened_a_session(served: Served) -> None:
    token = served.token(READ, subject="agent-7", client_id="support-bot")
    assert _post(served, token).status_code == 200
    deadline = time.monotonic() + 10
    while "agent-7" not in served.replica.stderr():
        assert time.monotonic() < deadline, served.replica.stderr()
        time.sleep(0.05)
    line = next(line for line in served.replica.stderr().splitlines() if "agent-7" in line)
    assert "support-bot" in line and token not in served.replica.stderr()


def test_serve_refuses_a_token_beside_server_auth(tmp_path: Path) -> None:
    path = auth_project("https://auth.example.com/realms/support", tmp_path)
    result = subprocess.run([sys.executable, "-m", "studio", "serve", str(path), "--http", "127.0.0.1:0",
                             "--token", "s3cret"], capture_output=True, text=True, timeout=60, cwd=ROOT,
                            env=_env(), check=False)  # fmt: skip
    assert result.returncode == 2
    assert "[server.auth]" in result.stderr and "--token" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def _env() -> dict[str, str]:
    import os

    environment = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    environment.pop("RESOURCE_STUDIO_TOKEN", None)
    return environment


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_is_local_and_sees_everything(tmp_path: Path, mode: str) -> None:
    path = auth_project("https://auth.example.com/realms/support", tmp_path)
    params = StdioServerParameters(command=sys.executable, args=["-m", "studio", "serve", str(path), "--stdio"],
                                   env={"PYTHONPATH": _env()["PYTHONPATH"]}, cwd=ROOT)
    async with connect(params, mode) as client:
        direct, templates = await _listing(client)
        read = await client.read_resource("crm://vip", cache_mode="bypass")
    assert "crm://vip" in direct and "crm://customers/{id}/profile" in templates
    assert read.contents[0].text == "vip list"
