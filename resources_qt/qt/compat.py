"""A guard against PySide6 6.12's abi3 wheels leaking references to None on Python < 3.12."""

from __future__ import annotations

import ctypes
import logging
import sys
from importlib import metadata

__all__ = ["guard_none_refcount"]

logger = logging.getLogger(__name__)

_HEADROOM = 1 << 40


def _pyside_version() -> tuple[int, ...]:
    for dist in ("PySide6-Essentials", "PySide6"):
        try:
            return tuple(int(part) for part in metadata.version(dist).split(".")[:2])
        except (metadata.PackageNotFoundError, ValueError):
            continue
    return ()


def guard_none_refcount() -> bool:
    """Give None enough references to survive PySide6 6.12 on Python 3.10/3.11; True when applied.

    Those wheels return None from void calls (setText, setFormat, ...) without
    taking a reference, as is right only where None is immortal (3.12+). A busy
    window then drives None's count to zero within seconds and the interpreter
    aborts with "none_dealloc". pyproject.toml excludes 6.12 on Python < 3.12;
    this covers an environment that has it anyway. None is never freed, so a
    larger count changes nothing else.
    """
    if sys.version_info >= (3, 12) or _pyside_version()[:2] != (6, 12):
        return False
    if sys.getrefcount(None) > _HEADROOM // 2:
        return True
    ctypes.c_ssize_t.from_address(id(None)).value += _HEADROOM
    logger.warning("PySide6 6.12 on Python < 3.12 leaks references to None; install PySide6-Essentials<6.12")
    return True
