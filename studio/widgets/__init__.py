"""The studio's editing widgets: catalogue, builder form, snippet editor and preview."""

from __future__ import annotations

import ctypes
import logging
import sys

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QStyle

logger = logging.getLogger(__name__)

__all__ = ["studio_icon"]

_NONE_HEADROOM = 1 << 40


def _keep_none_alive() -> None:
    """Work around PySide6 6.12's abi3 wheels on Python < 3.12, whose void methods return None unreferenced.

    Every such call (setText, setFormat, ...) drops one reference to None; on
    3.10/3.11, where None is not immortal, a busy window reaches zero within
    seconds and the interpreter aborts with "none_dealloc". Raising None's
    count once by 2**40 makes that unreachable; None is never freed anyway.
    """
    if sys.version_info >= (3, 12) or sys.getrefcount(None) > _NONE_HEADROOM // 2:
        return
    refcount = ctypes.c_ssize_t.from_address(id(None))
    refcount.value += _NONE_HEADROOM


_keep_none_alive()


def studio_icon(name: str, fallback: QStyle.StandardPixmap) -> QIcon:
    """Icon `name` from the studio's SVG set, or a standard style icon when it is not available."""
    try:
        from studio.icons import icon

        return icon(name)
    except (ImportError, ValueError) as exc:
        logger.debug("icon %s unavailable (%s); using the style's", name, exc)
        return QApplication.style().standardIcon(fallback)
