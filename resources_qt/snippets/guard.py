"""ModuleGuard: put back what a snippet changed in the worker's shared modules after each call."""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass
from typing import Any

__all__ = ["GUARDED_MODULES", "ModuleGuard"]

GUARDED_MODULES = ("builtins", "json", "json.encoder", "json.decoder", "json.scanner", "base64", "binascii")
"""Modules every result conversion or snippet commonly leans on; the studio's own modules are added."""

_OWN_PREFIX = "resources_qt"
_MISSING = object()


@dataclass(frozen=True, slots=True)
class _Saved:
    namespace: dict[str, Any]
    items: tuple[tuple[str, Any], ...]


class ModuleGuard:
    """A snapshot of the guarded modules' namespaces and classes, restored by `restore()`.

    Checking costs one identity comparison per saved name (a few thousand),
    far below a read's round trip; a patch is undone only when found. Names
    a snippet adds to a module are left (existing code never looks them
    up); attributes added to a guarded class are removed, since they can
    shadow inherited ones.
    """

    def __init__(
        self,
        modules: dict[str, types.ModuleType],
        saved: list[_Saved],
        classes: list[tuple[type, dict[str, Any]]],
    ) -> None:
        self._modules = modules
        self._saved = saved
        self._classes = classes

    @classmethod
    def snapshot(cls) -> ModuleGuard:
        names = [*GUARDED_MODULES, *(n for n in list(sys.modules) if n.split(".")[0] == _OWN_PREFIX)]
        modules = {n: m for n in names if isinstance(m := sys.modules.get(n), types.ModuleType)}
        saved = [_Saved(vars(m), tuple(vars(m).items())) for m in modules.values()]
        classes: list[tuple[type, dict[str, Any]]] = []
        for module in modules.values():
            if module.__name__ == "builtins":
                continue  # built-in types cannot be patched
            for value in vars(module).values():
                if isinstance(value, type) and value.__module__ == module.__name__:
                    classes.append((value, dict(vars(value))))
        return cls(modules, saved, classes)

    def restore(self) -> int:
        """Undo changes since the snapshot; returns how many names were put back (0 normally)."""
        restored = 0
        for name, module in self._modules.items():
            if sys.modules.get(name) is not module:
                sys.modules[name] = module
                restored += 1
        for entry in self._saved:
            namespace = entry.namespace
            for key, value in entry.items:
                if namespace.get(key, _MISSING) is not value:
                    namespace[key] = value
                    restored += 1
        for klass, attributes in self._classes:
            current = vars(klass)
            for key, value in attributes.items():
                if current.get(key, _MISSING) is not value:
                    setattr(klass, key, value)
                    restored += 1
            if len(current) != len(attributes):
                for key in [k for k in current if k not in attributes]:
                    delattr(klass, key)
                    restored += 1
        return restored
