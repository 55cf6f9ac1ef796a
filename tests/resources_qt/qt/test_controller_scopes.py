"""The facade serves [server.auth] and keeps the engine's scopes in step with the studio's edits."""

from __future__ import annotations

import asyncio

import httpx2
import pytest
from helpers.auth_server import running_auth_server
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from resources_qt.project import AuthConfig, Project, ResourceSpec, ServerSettings
from resources_qt.qt import ServerController

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

WAIT = 20_000
RESOURCE = "https://mcp.example.com/mcp"


def _spec(name: str, scopes: list[str] | None = None) -> ResourceSpec:
    return ResourceSpec(name=name, uri=f"demo://{name}", mime_type="text/plain", scopes=scopes or [],
                        reader="def read(uri, params):\n    return 'x'\n")  # fmt: skip


async def _listed(url: str, token: str) -> list[str]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=20) as http,
        Client(streamable_http_client(url, http_client=http), mode="2026-07-28") as client,
    ):
        listed = await client.list_resources(cursor=None, cache_mode="bypass")
    return [r.uri for r in listed.resources]


def test_edits_of_scopes_reach_the_served_engine(qtbot) -> None:
    with running_auth_server("RS256") as issuer:
        auth = AuthConfig(issuer=issuer.issuer, resource=RESOURCE)
        project = Project(server=ServerSettings(name="studio", workers=1, auth=auth),
                          resources=[_spec("a"), _spec("b", ["crm:read"])])  # fmt: skip
        controller = ServerController(project=project)
        try:
            with qtbot.waitSignal(controller.server_started, timeout=WAIT) as started:
                controller.start_http()
            url = started.args[0]
            token = issuer.token(audience=RESOURCE, scopes="openid")
            assert asyncio.run(_listed(url, token)) == ["demo://a"]
            controller.apply_resource("a", _spec("a", ["crm:admin"]))  # the builder gave "a" a scope
            controller.apply_resource("b", _spec("b"))  # and took b's away
            assert asyncio.run(_listed(url, token)) == ["demo://b"]
            renamed = project.copy()
            renamed.resources = [_spec("a2", ["crm:admin"]), _spec("b")]
            controller.apply_project(renamed)
            assert asyncio.run(_listed(url, token)) == ["demo://b"]
        finally:
            controller.shutdown(timeout=10)
