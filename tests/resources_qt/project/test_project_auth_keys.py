"""[server.auth] and per-resource scopes: every key loads and saves, every refusal names its key and line."""

from __future__ import annotations

from dataclasses import replace

import pytest
from mcp.server.auth.routes import build_resource_metadata_url
from pydantic import AnyHttpUrl

from resources_qt.project import AuthConfig, Project, ProjectError, ServerSettings, dumps_project, loads_project
from resources_qt.project.auth_settings import AUTH_KEYS, MAX_SCOPES

HEAD = 'format = 1\n\n[server]\nname = "desk"\n\n[server.auth]\n'
GOOD = 'issuer = "https://auth.example.com/realms/support"\nresource = "https://mcp.example.com/mcp"\n'
FULL = AuthConfig(
    issuer="https://auth.example.com/realms/support",
    resource="https://mcp.example.com/mcp",
    audience="mcp-server",
    jwks_uri="https://auth.example.com/realms/support/protocol/openid-connect/certs",
    required_scopes=("mcp:read", "mcp:write"),
    introspection_endpoint="https://auth.example.com/realms/support/protocol/openid-connect/token/introspect",
)


def test_every_key_loads_and_saves() -> None:
    assert {row.key for row in AUTH_KEYS} == set(AuthConfig.__dataclass_fields__)
    project = Project(server=ServerSettings(name="desk", auth=FULL))
    text = dumps_project(project)
    assert "\n[server.auth]\n" in text
    assert loads_project(text).server.auth == FULL
    assert FULL.token_audience == "mcp-server" and replace(FULL, audience=None).token_audience == FULL.resource


def test_http_is_allowed_for_this_machine_only() -> None:
    local = loads_project(HEAD + 'issuer = "http://127.0.0.1:8080/realms/dev"\nresource = "http://localhost:8765/mcp"\n')
    assert local.server.auth is not None and local.server.auth.issuer == "http://127.0.0.1:8080/realms/dev"


REFUSED = [
    pytest.param('issuer = "http://auth.example.com"\nresource = "https://r.example/mcp"\n', "auth.issuer", 7,
                 "must use https", id="issuer-http"),
    pytest.param('issuer = "https://auth.example.com/?x=1"\nresource = "https://r.example/mcp"\n', "auth.issuer", 7,
                 "must not have a query", id="issuer-query"),
    pytest.param('resource = "https://r.example/mcp"\n', "auth.issuer", 6, "auth.issuer must be set",
                 id="issuer-missing"),
    pytest.param(GOOD.replace("/mcp", "/mcp#top"), "auth.resource", 8, "must not have a fragment", id="fragment"),
    pytest.param(GOOD + 'audience = "a\\tb"\n', "auth.audience", 9, "printable text", id="audience"),
    pytest.param(GOOD + 'jwks_uri = "https://user:pw@auth.example.com/certs"\n', "auth.jwks_uri", 9,
                 "user name or password", id="jwks-credentials"),
    pytest.param(GOOD + 'jwks_uri = "ftp://auth.example.com/certs"\n', "auth.jwks_uri", 9, "https://",
                 id="jwks-scheme"),
    pytest.param(GOOD + 'required_scopes = "mcp:read"\n', "auth.required_scopes", 9, "array of scopes",
                 id="scopes-not-array"),
    pytest.param(GOOD + 'required_scopes = ["mcp read"]\n', "auth.required_scopes", 9, "is not a scope",
                 id="scope-space"),
    pytest.param(GOOD + 'required_scopes = ["a", "a"]\n', "auth.required_scopes", 9, "listed twice",
                 id="scope-twice"),
    pytest.param(GOOD + f"required_scopes = [{', '.join(f'{chr(34)}s{i}{chr(34)}' for i in range(MAX_SCOPES + 1))}]\n",
                 "auth.required_scopes", 9, f"the limit is {MAX_SCOPES}", id="too-many-scopes"),
    pytest.param(GOOD + 'introspection_endpoint = "https://auth.example.com/in trospect"\n',
                 "auth.introspection_endpoint", 9, "without spaces", id="introspection"),
    pytest.param(GOOD + "issuers = 1\n", "auth.issuers", 9, "unknown key(s) auth.issuers in [server.auth]",
                 id="unknown-key"),
    pytest.param(GOOD.replace('"https://mcp.example.com/mcp"', "5"), "auth.resource", 8, "must be a string",
                 id="not-a-string"),
]


@pytest.mark.parametrize(("body", "key", "line", "words"), REFUSED)
def test_every_refusal_names_the_key_the_reason_and_the_line(body: str, key: str, line: int, words: str) -> None:
    with pytest.raises(ProjectError) as caught:
        loads_project(HEAD + body, source="desk.toml")
    assert caught.value.field == key and caught.value.line == line, caught.value.message
    assert words in caught.value.message and key in caught.value.message
    assert caught.value.message.startswith(f"desk.toml:{line}: [server]: ")


def test_auth_must_be_a_table() -> None:
    with pytest.raises(ProjectError) as caught:
        loads_project('format = 1\n[server]\nname = "x"\nauth = "yes"\n', source="t.toml")
    assert caught.value.field == "auth" and caught.value.line == 4


def test_an_edited_table_keeps_its_comments_and_a_new_one_is_added_as_a_table() -> None:
    styled = HEAD.replace("[server.auth]\n", "# who may call\n[server.auth]\n") + (
        'issuer = "https://auth.example.com/realms/support"   # Keycloak realm\n'
        "resource = 'https://mcp.example.com/mcp'\n\n[[resources]]\nname = \"a\"\nuri = \"a://b\"\n"
    )
    project = loads_project(styled)
    assert dumps_project(project) == styled
    project.server.auth = replace(FULL, issuer="https://auth.example.com/realms/support", audience=None,
                                  jwks_uri=None, introspection_endpoint=None)  # fmt: skip
    edited = dumps_project(project)
    assert "# who may call\n[server.auth]\n" in edited and "# Keycloak realm" in edited
    assert "resource = 'https://mcp.example.com/mcp'" in edited
    assert loads_project(edited).server == project.server
    project.server.auth = None
    removed = dumps_project(project)
    assert "[server.auth]" not in removed and loads_project(removed).server.auth is None
    plain = loads_project('format = 1\n\n[server]\nname = "desk"  # the name\n\n[[resources]]\nname = "a"\n'
                          'uri = "a://b"\n')  # fmt: skip
    plain.server.auth = FULL
    added = dumps_project(plain)
    assert 'name = "desk"  # the name\n\n[server.auth]\n' in added and '\n\n[[resources]]\n' in added
    assert loads_project(added).server.auth == FULL


def test_a_sub_table_away_from_its_table_is_saved_in_the_standard_layout() -> None:
    odd = ('format = 1\n\n[server]\nname = "desk"\n\n[[resources]]\nname = "a"\nuri = "a://b"\n\n'
           '[server.auth]\n' + GOOD)  # fmt: skip
    project = loads_project(odd)
    project.resources[0].title = "A"
    saved = dumps_project(project)
    assert saved.count("[server.auth]") == 1
    again = loads_project(saved)
    assert again.server == project.server and again.resources[0].title == "A"


def test_resource_scopes_load_save_and_are_refused_on_their_line() -> None:
    text = 'format = 1\n\n[[resources]]\nname = "a"\nuri = "a://b"\nscopes = ["crm:read", "crm:write"]\n'
    project = loads_project(text)
    assert project.resources[0].scopes == ["crm:read", "crm:write"]
    assert dumps_project(project) == text
    for bad, words in (('["crm read"]', "is not a scope"), ('"crm:read"', "must be an array"),
                       ('["a", "a"]', "listed twice"), ("[1]", "must be a string")):  # fmt: skip
        with pytest.raises(ProjectError) as caught:
            loads_project(text.replace('["crm:read", "crm:write"]', bad), source="t.toml")
        assert caught.value.field == "scopes" and caught.value.line == 6 and words in caught.value.message


@pytest.mark.parametrize("resource", ["https://mcp.example.com/mcp", "https://mcp.example.com", "https://h:8443/a/b",
                                      "http://127.0.0.1:8765/mcp"])
def test_the_metadata_url_is_the_sdks(resource: str) -> None:
    config = AuthConfig(issuer="https://auth.example.com", resource=resource)
    assert config.metadata_url == str(build_resource_metadata_url(AnyHttpUrl(resource)))
