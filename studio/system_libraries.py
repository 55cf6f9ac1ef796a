"""Before the first window: the system libraries Qt's platform plugin needs, named in one line when missing."""

from __future__ import annotations

import ctypes
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["debian_package", "missing_libraries", "platform_plugin", "platform_problem"]

_NOT_FOUND = re.compile(r"(lib[\w.+-]+\.so(?:\.[\d.]+)?): cannot open shared object file")


def platform_plugin(name: str, environ: Mapping[str, str] | None = None) -> Path | None:
    """The platform plugin `name` (xcb, wayland...) Qt will load: from `QT_QPA_PLATFORM_PLUGIN_PATH` when
    set, as Qt does, else from PySide6's own plugins; None when there is none."""
    env = os.environ if environ is None else environ
    folders = [Path(part) for part in env.get("QT_QPA_PLATFORM_PLUGIN_PATH", "").split(os.pathsep) if part]
    try:
        import PySide6

        folders.append(Path(PySide6.__file__).resolve().parent / "Qt" / "plugins" / "platforms")
    except ImportError:
        pass
    for folder in folders:
        found = folder / f"libq{name}.so"
        if found.is_file():
            return found
    return None


def missing_libraries(library: Path) -> list[str]:
    """The shared library `library` needs that the system cannot load (by soname), or [] when it loads.

    The dynamic loader stops at the first missing one, so at most one is named: on a fresh Debian or
    Ubuntu that is usually libxcb-cursor0, and the message advises the whole usual set.
    """
    try:
        ctypes.CDLL(str(library), mode=os.RTLD_LAZY)
    except OSError as exc:
        found = _NOT_FOUND.search(str(exc))
        return [found.group(1)] if found else []
    return []


def debian_package(soname: str) -> str:
    """The Debian/Ubuntu package that usually ships `soname` (libxcb-cursor.so.0 -> libxcb-cursor0)."""
    base, _, version = soname.partition(".so")
    version = version.lstrip(".").split(".")[0]
    if not version:
        return base.lower()
    return (base + ("-" if base[-1:].isdigit() else "") + version).lower()


def platform_problem(environ: Mapping[str, str] | None = None) -> str | None:
    """One line saying which system library the windowing platform lacks, or None when it can load.

    Only the X11 (xcb) platform is checked: it is what Qt picks on a Linux desktop without Wayland, and
    a missing library there aborts the process inside Qt, with a page of plugin diagnostics.
    """
    env = os.environ if environ is None else environ
    if not sys.platform.startswith("linux"):
        return None
    chosen = env.get("QT_QPA_PLATFORM", "")
    if chosen and not chosen.startswith("xcb"):
        return None
    if not chosen and env.get("WAYLAND_DISPLAY") and platform_plugin("wayland", env) is not None:
        return None
    plugin = platform_plugin("xcb", env)
    if plugin is None:
        return None
    missing = missing_libraries(plugin)
    if not missing:
        return None
    package = debian_package(missing[0])
    return (
        f"resource-studio: Qt cannot open a window: the system library {missing[0]} is missing "
        f"(on Debian/Ubuntu: sudo apt-get install {package} libxkbcommon-x11-0 libxcb-icccm4 libxcb-keysyms1 "
        "libxcb-image0 libxcb-render-util0 libxcb-shape0 libxcb-xinerama0 libxcb-randr0 libegl1)"
    )
