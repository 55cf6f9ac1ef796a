"""Any bytes as a hex dump: the last resort for content no other renderer takes."""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from resources_qt.content import ResourceContent
from studio.preview.renderers.base import PageActions, Prepared, Renderer, human_size, mime_of

__all__ = ["HEX_LIMIT", "HexRenderer", "hex_dump", "hex_prepared"]

HEX_LIMIT = 16 * 1024


def hex_dump(data: bytes) -> str:
    lines = []
    for offset in range(0, len(data), 16):
        chunk = data[offset : offset + 16]
        hexes = " ".join(f"{b:02x}" for b in chunk)
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{offset:08x}  {hexes[:23]:<23}  {hexes[24:]:<23}  |{text}|")
    return "\n".join(lines)


def hex_prepared(data: bytes, mime: str) -> Prepared:
    """The hex page for `data`; other renderers fall back to it when their decoding fails."""
    size = len(data)
    notes = [f"{human_size(size)} of binary data ({mime})."]
    if size > HEX_LIMIT:
        notes.append(
            f"Showing the first {human_size(HEX_LIMIT)} of {human_size(size)}; use Save content as... for all."
        )
    return Prepared("hex", mime, size, notes=notes, payload=hex_dump(data[:HEX_LIMIT]))


class HexRenderer(Renderer):
    kind = "hex"
    mime_types = ("*",)

    def prepare(self, content: ResourceContent) -> Prepared | None:
        data = content.data() if content.is_blob else (content.text or "").encode("utf-8")
        return hex_prepared(data, mime_of(content))

    def create_page(self, parent: QWidget, actions: PageActions) -> QWidget | None:
        view = QPlainTextEdit(parent)
        view.setObjectName("contentHex")
        view.setReadOnly(True)
        view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        return view

    def show(self, page: QWidget, prepared: Prepared) -> bool:
        assert isinstance(page, QPlainTextEdit) and isinstance(prepared.payload, str)
        page.setPlainText(prepared.payload)
        return True
