"""Client configurations for a server with [server.auth]: the resource URL, how clients log in, no secret."""

from __future__ import annotations

import json

from resources_qt.project import AuthConfig
from studio.serving.client_config import ClientConfigView, client_configurations

AUTH = AuthConfig(issuer="https://auth.example.com/realms/support", resource="https://mcp.example.com/mcp",
                  required_scopes=("mcp:read",))  # fmt: skip


def test_an_authorized_server_names_its_issuer_and_embeds_no_secret() -> None:
    configs = client_configurations(server_name="Support desk", url="http://127.0.0.1:8765/mcp", token="s3cret",
                                    project_path="/p/desk.toml", command=["resource-studio"], auth=AUTH)  # fmt: skip
    first_label, login = next(iter(configs.items()))
    assert first_label == "HTTP · how clients log in (OAuth)"
    assert AUTH.issuer in login and AUTH.metadata_url in login and "mcp:read" in login
    http = json.loads(configs["HTTP · mcpServers (Claude, Cursor)"])["mcpServers"]["support-desk"]
    assert http == {"type": "http", "url": "https://mcp.example.com/mcp"}
    assert not any("s3cret" in text or "Authorization" in text for text in configs.values())


def test_without_authorization_nothing_changes() -> None:
    configs = client_configurations(server_name="Support desk", url="http://127.0.0.1:8765/mcp", token="tok",
                                    project_path="/p/desk.toml", command=["resource-studio"])  # fmt: skip
    assert "HTTP · how clients log in (OAuth)" not in configs
    http = json.loads(configs["HTTP · VS Code (.vscode/mcp.json)"])["servers"]["support-desk"]
    assert http["headers"] == {"Authorization": "Bearer tok"}


def test_the_view_shows_the_login_first_for_an_authorized_project(qtbot) -> None:
    view = ClientConfigView()
    qtbot.addWidget(view)
    view.update_config(server_name="Support desk", url=None, token=None, project_path=None, auth=AUTH)
    assert view.format_combo.itemText(0) == "HTTP · how clients log in (OAuth)"
    view.format_combo.setCurrentIndex(1)
    assert '"url": "https://mcp.example.com/mcp"' in view.current_text()
