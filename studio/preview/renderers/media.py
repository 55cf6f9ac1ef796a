"""Audio and video: a note naming the type and size, and the way to save the content for a player."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from resources_qt.content import ResourceContent
from studio.preview.renderers.base import PageActions, Prepared, Renderer, content_size, human_size, mime_of

__all__ = ["MediaPage", "MediaRenderer"]


class MediaPage(QWidget):
    def __init__(self, actions: PageActions, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.note_label = QLabel(self)
        self.note_label.setObjectName("contentMediaNote")
        self.note_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.note_label.setWordWrap(True)
        self.save_button = QPushButton("Save content as...", self)
        self.save_button.setObjectName("contentMediaSave")
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addWidget(self.note_label)
        layout.addWidget(self.save_button, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addStretch(1)
        self.save_button.clicked.connect(actions.save_content)


class MediaRenderer(Renderer):
    kind = "media"
    mime_types = ("audio/*", "video/*")

    def prepare(self, content: ResourceContent) -> Prepared | None:
        mime = mime_of(content)
        size = content_size(content)
        what = "Audio" if mime.lower().startswith("audio/") else "Video"
        note = (f"{what} ({mime}), {human_size(size)}. The preview does not play media:"
                " save the content and open it in a player.")  # fmt: skip
        return Prepared(self.kind, mime, size, payload=note)

    def create_page(self, parent: QWidget, actions: PageActions) -> QWidget | None:
        return MediaPage(actions, parent)

    def show(self, page: QWidget, prepared: Prepared) -> bool:
        assert isinstance(page, MediaPage) and isinstance(prepared.payload, str)
        page.note_label.setText(prepared.payload)
        return True
