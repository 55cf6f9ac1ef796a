"""File > Connect to Server…: a URL or a command line, a bearer token and the era; recent targets offered."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QWidget

from resources_qt.client import ERAS

__all__ = ["ConnectDialog", "ConnectRequest", "ask_target"]

_ERA_TEXTS = {"auto": "Auto (discover, else handshake)", "handshake": "Handshake (initialize)",
              "2026-07-28": "2026-07-28"}  # fmt: skip


@dataclass(frozen=True)
class ConnectRequest:
    """What the user asked to connect to (the token is for this connection only; it is never stored)."""

    target: str
    token: str = ""
    era: str = "auto"


class ConnectDialog(QDialog):
    """The connect form. No signals of its own (accept / reject)."""

    def __init__(self, recent: list[str], *, era: str = "auto", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("connectDialog")
        self.setWindowTitle("Connect to Server")
        self.target_box = QComboBox(self)
        self.target_box.setObjectName("connectTarget")
        self.target_box.setEditable(True)
        self.target_box.addItems(recent)
        self.target_box.setMinimumContentsLength(48)
        line = self.target_box.lineEdit()
        if line is not None:
            line.setPlaceholderText("http://127.0.0.1:8000/mcp  or  python server.py")
        self.token_edit = QLineEdit(self)
        self.token_edit.setObjectName("connectToken")
        self.token_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.token_edit.setPlaceholderText("bearer token (HTTP only, optional; not remembered)")
        self.era_box = QComboBox(self)
        self.era_box.setObjectName("connectEra")
        for key in ERAS:
            self.era_box.addItem(_ERA_TEXTS[key], key)
        self.era_box.setCurrentIndex(max(0, self.era_box.findData(era)))
        hint = QLabel("A URL connects over Streamable HTTP; anything else runs as a command over stdio.", self)
        hint.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QFormLayout(self)
        layout.addRow("&Server", self.target_box)
        layout.addRow("&Token", self.token_edit)
        layout.addRow("&Era", self.era_box)
        layout.addRow(hint)
        layout.addRow(buttons)

    def request(self) -> ConnectRequest:
        return ConnectRequest(target=self.target_box.currentText().strip(), token=self.token_edit.text().strip(),
                              era=str(self.era_box.currentData() or "auto"))  # fmt: skip


def ask_target(parent: QWidget | None, recent: list[str], era: str) -> ConnectRequest | None:
    """Show the dialog; the request, or None when cancelled or left empty."""
    dialog = ConnectDialog(recent, era=era, parent=parent)
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        request = dialog.request()
        return request if request.target else None
    finally:
        dialog.deleteLater()
