"""ModuleGuard: put back what a snippet changed in the worker's shared modules after each call."""

from __future__ import annotations

import operator
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["GUARDED_MODULES", "ModuleGuard"]

GUARDED_MODULES = (
    "builtins",
    "json",
    "json.encoder",
    "json.decoder",
    "base64",
    "binascii",
    "resources_qt.content",
    "resources_qt.snippets.namespace",
    "resources_qt.snippets.wire",
)
"""Modules the result conversion or snippets commonly lean on."""

GUARDED_CLASSES = (("json", "JSONEncoder"), ("json", "JSONDecoder"), ("resources_qt.content", "ResourceContent"))
"""Classes whose methods the conversion or snippets call."""

_MISSING = object()
_is = operator.is_


@dataclass(frozen=True, slots=True)
class _Saved:
    """One namespace (a module's dict or a class's mappingproxy) and its names and values then."""

    owner: object
    namespace: Any
    keys: tuple[str, ...]
    values: tuple[Any, ...]
    fetch: Callable[[Any], Any]
    """`operator.itemgetter` of the keys: the current values as one tuple, in C."""

    @classmethod
    def of(cls, owner: object, namespace: Any) -> _Saved:
        items = tuple(namespace.items())
        keys = tuple(k for k, _ in items)
        fetch = operator.itemgetter(*keys) if len(keys) > 1 else lambda ns: (ns[keys[0]],) if keys else ()
        return cls(owner, namespace, keys, tuple(v for _, v in items), fetch)

    def changed(self) -> bool:
        # Runs after every call: itemgetter and map/all stay in C (about 30 us for the whole guard,
        # half of a per-name get with a default); a comparison by identity, which no __eq__ can fool.
        namespace = self.namespace
        if len(namespace) != len(self.keys):
            return True
        try:
            current = self.fetch(namespace)
        except KeyError:
            return True
        return not all(map(_is, current, self.values))


class ModuleGuard:
    """A snapshot of the guarded modules' namespaces and classes, restored by `restore()`.

    The check is an identity comparison per saved name, done in C; the
    worker runs it after sending each answer, so it costs no read any time.
    A namespace is only rewritten when found changed.
    Names a snippet adds to a module are left (existing code never looks
    them up); attributes added to a guarded class are removed, since they
    can shadow inherited ones.
    """

    def __init__(self, modules: dict[str, types.ModuleType], saved: list[_Saved]) -> None:
        self._modules = modules
        self._saved = saved

    @classmethod
    def snapshot(cls) -> ModuleGuard:
        modules = {n: m for n in GUARDED_MODULES if isinstance(m := sys.modules.get(n), types.ModuleType)}
        saved = [_Saved.of(m, vars(m)) for m in modules.values()]
        for module_name, class_name in GUARDED_CLASSES:
            value = getattr(modules.get(module_name), class_name, None)
            if isinstance(value, type):
                saved.append(_Saved.of(value, vars(value)))
        return cls(modules, saved)

    def restore(self) -> int:
        """Undo changes since the snapshot; returns how many names were put back (0 normally)."""
        restored = 0
        for name, module in self._modules.items():
            if sys.modules.get(name) is not module:
                sys.modules[name] = module
                restored += 1
        for entry in self._saved:
            if entry.changed():
                restored += _put_back(entry)
        return restored


def _put_back(entry: _Saved) -> int:
    restored = 0
    is_class = isinstance(entry.owner, type)
    namespace = entry.namespace
    for key, value in zip(entry.keys, entry.values, strict=True):
        if namespace.get(key, _MISSING) is not value:
            if is_class:
                setattr(entry.owner, key, value)
            else:
                namespace[key] = value
            restored += 1
    if is_class and len(namespace) != len(entry.keys):
        known = set(entry.keys)
        for key in [k for k in namespace if k not in known]:
            delattr(entry.owner, key)
            restored += 1
    return restored
