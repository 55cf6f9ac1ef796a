"""Ready-to-paste MCP client configurations for the served project (HTTP and stdio)."""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Signal, Slot
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QPlainTextEdit, QToolButton, QVBoxLayout, QWidget

from resources_qt.project import AuthConfig
from studio.look.icons import icon

__all__ = ["COMMAND", "ClientConfigView", "client_configurations", "http_url", "server_key", "studio_command"]

COMMAND = "resource-studio"


def studio_command() -> list[str]:
    """The absolute command line of the running `resource-studio`, for configs pasted into other programs.

    Clients start stdio servers without the venv's `bin` on PATH, so the bare name would
    not be found: use the console script that started us (sys.argv[0]), else the one
    installed next to this interpreter, else this interpreter running the package.
    """
    started = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if started is not None and started.stem == COMMAND and started.exists():
        return [str(started.resolve())]
    # Not resolved: a venv's python is often a symlink to the base interpreter, whose folder has no script.
    beside = Path(sys.executable).absolute().parent / (COMMAND + (".exe" if sys.platform == "win32" else ""))
    if beside.is_file():
        return [str(beside)]
    return [str(Path(sys.executable).absolute()), "-m", "studio"]


def http_url(host: str, port: int) -> str:
    """The Streamable HTTP endpoint for HOST and PORT (IPv6 in brackets; port 0 is not known until start)."""
    host = host.strip() or "127.0.0.1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port if port > 0 else 'PORT'}/mcp"


def server_key(name: str, *, fallback: str = COMMAND) -> str:
    """A config key for the server: lower-case words joined by dashes ("Support Desk" -> "support-desk");
    `fallback` for a name with no letters or digits."""
    key = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return key or fallback


def client_configurations(
    *,
    server_name: str,
    url: str | None,
    token: str | None,
    project_path: str | Path | None,
    command: list[str] | None = None,
    auth: AuthConfig | None = None,
) -> dict[str, str]:
    """Configuration snippets by label: `mcpServers` style (Claude Desktop, Claude Code, Cursor) and
    VS Code's `servers` style, for Streamable HTTP at `url` and for stdio via `resource-studio serve`
    (`command` defaults to `studio_command()`).

    With `auth` (`[server.auth]`) the HTTP configurations name the resource URL and no credentials at all:
    a client logs in at the issuer itself (it finds it through the server's 401 and RFC 9728 metadata),
    and a first entry says so.
    """
    # A name without letters or digits is keyed by the project's file, so two such projects differ.
    key = server_key(server_name, fallback=server_key(Path(project_path).stem) if project_path else COMMAND)
    http: dict[str, object] = {"type": "http", "url": url or http_url("127.0.0.1", 8765)}
    if auth is not None:
        http["url"] = auth.resource  # what tokens are issued for, and where clients reach it
    elif token:
        http["headers"] = {"Authorization": f"Bearer {token}"}
    project = str(Path(project_path).resolve()) if project_path else "PROJECT.toml"
    program, *prefix = command if command is not None else studio_command()
    stdio: dict[str, object] = {"command": program, "args": [*prefix, "serve", project, "--stdio"]}

    def dump(value: object) -> str:
        return json.dumps(value, indent=2, ensure_ascii=False)

    login = {"HTTP · how clients log in (OAuth)": _login_text(auth)} if auth is not None else {}
    return {
        **login,
        "HTTP · mcpServers (Claude, Cursor)": dump({"mcpServers": {key: http}}),
        "HTTP · VS Code (.vscode/mcp.json)": dump({"servers": {key: http}}),
        "stdio · mcpServers (Claude Desktop)": dump({"mcpServers": {key: stdio}}),
        "stdio · VS Code (.vscode/mcp.json)": dump({"servers": {key: {"type": "stdio", **stdio}}}),
    }


def _login_text(auth: AuthConfig) -> str:
    scopes = " ".join(auth.required_scopes) or "none"
    return "\n".join([
        f"This server is an OAuth 2.1 resource server at {auth.resource}.",
        f"Clients log in at the authorization server {auth.issuer}",
        f"(they find it in the 401 answer and the RFC 9728 metadata document {auth.metadata_url}).",
        f"Every request needs the scopes: {scopes}.",
        "No token or secret goes into a client's configuration: each user signs in with their own account.",
    ])  # fmt: skip


@dataclass(frozen=True)
class _Shown:
    """What the window last asked to show (the endpoint in the boxes fills in a missing URL)."""

    server_name: str
    url: str | None
    token: str | None
    project_path: str | Path | None
    auth: AuthConfig | None = None


class ClientConfigView(QWidget):
    """A format picker, the configuration text and a copy button.

    Signals:
        copied(str text): the shown configuration was copied to the clipboard (this text).
    """

    copied = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("clientConfig")
        self._configs: dict[str, str] = {}
        self._endpoint = http_url("127.0.0.1", 8765)
        self._last: _Shown | None = None
        self.format_combo = QComboBox(self)
        self.format_combo.setObjectName("clientConfigFormat")
        self.format_combo.setToolTip("Which client and transport to configure")
        self.format_combo.setAccessibleName("Client and transport")
        self.copy_button = QToolButton(self)
        self.copy_button.setObjectName("copyClientConfigButton")
        self.copy_button.setIcon(icon("copy"))
        self.copy_button.setToolTip("Copy this configuration to the clipboard")
        self.copy_button.setAccessibleName("Copy the configuration")
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("clientConfigText")
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setToolTip("Paste this into the client's MCP configuration")
        self.text.setAccessibleName("Client configuration")
        self.text.setAccessibleDescription("JSON to paste into the client's MCP configuration")
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.format_combo, 1)
        row.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.text, 1)
        self.format_combo.currentTextChanged.connect(self._on_format_changed)
        self.copy_button.clicked.connect(self._on_copy_clicked)

    def set_endpoint(self, host: str, port: int) -> None:
        """The address in the panel's boxes: the HTTP configs use it while the server is not running."""
        endpoint = http_url(host, port)
        if endpoint != self._endpoint:
            self._endpoint = endpoint
            if self._last is not None:
                self._refresh()

    def update_config(
        self,
        *,
        server_name: str,
        url: str | None,
        token: str | None,
        project_path: str | Path | None,
        auth: AuthConfig | None = None,
    ) -> None:
        """Show the configurations; `url` is the running server's (None: the endpoint in the boxes); `auth`:
        the project's `[server.auth]` (clients then log in at its issuer, and no token is shown)."""
        self._last = _Shown(server_name, url, token, project_path, auth)
        self._refresh()

    def _refresh(self) -> None:
        last = self._last
        if last is None:
            return
        self._configs = client_configurations(
            server_name=last.server_name,
            url=last.url or self._endpoint,
            token=last.token,
            project_path=last.project_path,
            auth=last.auth,
        )
        current = self.format_combo.currentText()
        self.format_combo.blockSignals(True)
        self.format_combo.clear()
        self.format_combo.addItems(list(self._configs))
        self.format_combo.setCurrentText(current if current in self._configs else next(iter(self._configs)))
        self.format_combo.blockSignals(False)
        self._on_format_changed(self.format_combo.currentText())

    def current_text(self) -> str:
        return str(self.text.toPlainText())

    @Slot(str)
    def _on_format_changed(self, label: str) -> None:
        self.text.setPlainText(self._configs.get(label, ""))

    @Slot()
    def _on_copy_clicked(self) -> None:
        QGuiApplication.clipboard().setText(self.current_text())
        self.copied.emit(self.format_combo.currentText())
