"""The studio's editing widgets: catalogue, builder form, snippet editor and preview."""

from __future__ import annotations

import logging

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QStyle

logger = logging.getLogger(__name__)

__all__ = ["studio_icon"]


def studio_icon(name: str, fallback: QStyle.StandardPixmap) -> QIcon:
    """Icon `name` from the studio's SVG set, or a standard style icon when it is not available."""
    try:
        from studio.icons import icon

        return icon(name)
    except (ImportError, ValueError) as exc:
        logger.debug("icon %s unavailable (%s); using the style's", name, exc)
        return QApplication.style().standardIcon(fallback)
