"""Ready-to-paste MCP client configurations for the served project (HTTP and stdio)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from PySide6.QtCore import Signal, Slot
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QPlainTextEdit, QToolButton, QVBoxLayout, QWidget

from studio.icons import icon

__all__ = ["ClientConfigView", "client_configurations", "server_key"]

COMMAND = "resource-studio"


def server_key(name: str) -> str:
    """A config key for the server: lower-case words joined by dashes ("Support Desk" -> "support-desk")."""
    key = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return key or "resource-studio"


def client_configurations(
    *, server_name: str, url: str | None, token: str | None, project_path: str | Path | None
) -> dict[str, str]:
    """Configuration snippets by label: `mcpServers` style (Claude Desktop, Claude Code, Cursor) and
    VS Code's `servers` style, for Streamable HTTP at `url` and for stdio via `resource-studio serve`."""
    key = server_key(server_name)
    http_url = url or "http://127.0.0.1:8765/mcp"
    http: dict[str, object] = {"type": "http", "url": http_url}
    if token:
        http["headers"] = {"Authorization": f"Bearer {token}"}
    project = str(Path(project_path).resolve()) if project_path else "PROJECT.toml"
    stdio: dict[str, object] = {"command": COMMAND, "args": ["serve", project, "--stdio"]}

    def dump(value: object) -> str:
        return json.dumps(value, indent=2, ensure_ascii=False)

    return {
        "HTTP · mcpServers (Claude, Cursor)": dump({"mcpServers": {key: http}}),
        "HTTP · VS Code (.vscode/mcp.json)": dump({"servers": {key: http}}),
        "stdio · mcpServers (Claude Desktop)": dump({"mcpServers": {key: stdio}}),
        "stdio · VS Code (.vscode/mcp.json)": dump({"servers": {key: {"type": "stdio", **stdio}}}),
    }


class ClientConfigView(QWidget):
    """A format picker, the configuration text and a copy button.

    Signals:
        copied(str): the shown configuration was copied to the clipboard.
    """

    copied = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("clientConfig")
        self._configs: dict[str, str] = {}
        self.format_combo = QComboBox(objectName="clientConfigFormat")
        self.format_combo.setToolTip("Which client and transport to configure")
        self.copy_button = QToolButton(objectName="copyClientConfigButton")
        self.copy_button.setIcon(icon("copy"))
        self.copy_button.setToolTip("Copy this configuration to the clipboard")
        self.text = QPlainTextEdit(objectName="clientConfigText")
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setToolTip("Paste this into the client's MCP configuration")
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

    def update_config(
        self, *, server_name: str, url: str | None, token: str | None, project_path: str | Path | None
    ) -> None:
        self._configs = client_configurations(
            server_name=server_name, url=url, token=token, project_path=project_path
        )
        current = self.format_combo.currentText()
        self.format_combo.blockSignals(True)
        self.format_combo.clear()
        self.format_combo.addItems(list(self._configs))
        self.format_combo.setCurrentText(current if current in self._configs else next(iter(self._configs)))
        self.format_combo.blockSignals(False)
        self._on_format_changed(self.format_combo.currentText())

    def current_text(self) -> str:
        return self.text.toPlainText()

    @Slot(str)
    def _on_format_changed(self, label: str) -> None:
        self.text.setPlainText(self._configs.get(label, ""))

    @Slot()
    def _on_copy_clicked(self) -> None:
        QGuiApplication.clipboard().setText(self.current_text())
        self.copied.emit(self.format_combo.currentText())
