"""A one-line label that shortens its text with "…" to fit, and shows the whole text as its tooltip."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

__all__ = ["ElidedLabel"]


class ElidedLabel(QLabel):
    """Plain text on one line, cut with "…" where it does not fit; a cut text is whole in the tooltip.

    `text()` stays the whole text (and so does what assistive technology reads). The line's height is kept
    while the text is empty, so text coming and going never moves what is around it. No signals.
    """

    def __init__(self, text: str = "", parent: QWidget | None = None,
                 *, mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight) -> None:  # fmt: skip
        super().__init__(parent)
        self._mode = mode
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(False)
        # Never wider than its place, whatever the text: the text shortens instead.
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setText(text)

    def is_elided(self) -> bool:
        """The whole text does not fit: it is shown cut."""
        return self.fontMetrics().horizontalAdvance(self.text()) > self.contentsRect().width()

    def shown_text(self) -> str:
        """The text as drawn (cut with "…" when it does not fit)."""
        return self.fontMetrics().elidedText(self.text(), self._mode, self.contentsRect().width())

    def sizeHint(self) -> QSize:
        return QSize(self.fontMetrics().horizontalAdvance(self.text()), self.minimumSizeHint().height())

    def minimumSizeHint(self) -> QSize:
        margins = self.contentsMargins()
        return QSize(0, self.fontMetrics().height() + margins.top() + margins.bottom())

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        self.style().drawItemText(painter, self.contentsRect(), int(self.alignment()), self.palette(),
                                  self.isEnabled(), self.shown_text(), self.foregroundRole())  # fmt: skip

    def setText(self, text: str) -> None:
        super().setText(text)
        self._follow_tip()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._follow_tip()

    def _follow_tip(self) -> None:
        tip = self.text() if self.is_elided() else ""
        if self.toolTip() != tip:
            self.setToolTip(tip)
