"""A guard against PySide6 6.12's abi3 wheels leaking references to None on Python < 3.12."""

from __future__ import annotations

import logging
import os
import re
import sys
from importlib.util import find_spec

__all__ = ["guard_none_refcount"]

logger = logging.getLogger(__name__)

_HEADROOM = 1 << 40
_DIST_INFO = re.compile(r"pyside6(?:[-_]essentials)?-(\d+)\.(\d+)[^-]*\.dist-info", re.IGNORECASE)


def _pyside_version() -> tuple[int, ...]:
    """(major, minor) of the installed PySide6, () when unknown; PySide6 itself is not imported."""
    # The wheel's .dist-info folder beside the package names the version (the wheel standard):
    # importlib.metadata finds the same folder, but importing it cost 10-17 ms of every start.
    spec = find_spec("PySide6")
    folders = spec.submodule_search_locations if spec is not None else None
    if folders:
        site = os.path.dirname(next(iter(folders)))
        try:
            names = os.listdir(site)
        except OSError:
            names = []
        found = [match for name in names if (match := _DIST_INFO.fullmatch(name))]
        if found:
            return int(found[0].group(1)), int(found[0].group(2))
    from importlib import metadata

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
    import ctypes

    ctypes.c_ssize_t.from_address(id(None)).value += _HEADROOM
    logger.warning("PySide6 6.12 on Python < 3.12 leaks references to None; install PySide6-Essentials<6.12")
    return True
