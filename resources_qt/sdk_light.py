"""The SDK's self-contained modules (URI templates, path checks), loaded without the `mcp` package."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import logging
import sys
from collections.abc import Sequence
from types import ModuleType

__all__ = ["LIGHT_MODULES", "preload"]

logger = logging.getLogger(__name__)

LIGHT_MODULES = ("mcp.shared.uri_template", "mcp.shared.path_security")
"""The SDK modules the resource core imports at start-up, in load order."""


def preload() -> None:
    """Load `LIGHT_MODULES` without `mcp/__init__.py`; a no-op once `mcp` itself is imported.

    Importing any `mcp.*` module first runs `mcp/__init__.py`, which imports the whole client and
    server stack (about 0.6 s, more on a loaded machine). Before its first paint the window needs
    `UriTemplate` and `is_absolute_path`, and the SDK modules defining them import only the
    standard library. They run here under their real names, so the later full `import mcp` (when a
    server starts) finds them in `sys.modules` and every class keeps one identity, and each is bound
    on its package when that arrives. Nothing is copied from the SDK. Anything unexpected (an SDK
    whose modules import more of the package, an install this finder cannot read) undoes the
    preload and leaves the ordinary import to happen later, at its ordinary cost
    (tests/resources_qt/test_sdk_light.py says which).
    """
    if "mcp" in sys.modules or any(isinstance(f, _BindWhenLoaded) for f in sys.meta_path):
        return  # the package is there (its __init__ loads these the ordinary way), or this ran already
    before = set(sys.modules)
    finder = _BindWhenLoaded()
    try:
        package = importlib.util.find_spec("mcp")  # finding a top-level package does not import it
        if package is None or not package.submodule_search_locations:
            return  # no SDK: the ordinary import below raises the ordinary ImportError
        shared = [f"{location}/shared" for location in package.submodule_search_locations]
        sys.meta_path.insert(0, finder)
        for name in LIGHT_MODULES:
            if name not in sys.modules:
                _load(name, shared)
    except Exception:  # any failure means: import the SDK the ordinary way, later
        logger.debug("preloading the SDK's light modules failed; mcp loads in full when needed", exc_info=True)
        finder.used = True
        for name in set(sys.modules) - before:
            if name == "mcp" or name.startswith("mcp."):
                del sys.modules[name]


def _load(name: str, search: list[str]) -> None:
    """Execute one SDK module from `search` (sources, bytecode, zips: whatever the path finder reads)."""
    spec = importlib.machinery.PathFinder.find_spec(name, search)
    if spec is None or spec.loader is None:
        raise ImportError(f"SDK module {name} not found in {search}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise


class _BindWhenLoaded(importlib.abc.MetaPathFinder):
    """Finds `mcp` and `mcp.shared` as usual and, once each has run, links the preloaded modules to them.

    An ordinary import sets `mcp.shared` and `mcp.shared.uri_template` (the
    attributes) as it loads each submodule; the preload ran before the
    packages existed, and an `import mcp.shared.uri_template` finds the module
    in `sys.modules` without importing its parents. So after `mcp` has run,
    `mcp.shared` is imported if nothing did, and after `mcp.shared` has run,
    the preloaded modules are bound on it. Each name is answered once (the
    finder stays in `sys.meta_path`: removing it while the import system
    walks that list would skip the finder after it).
    """

    def __init__(self) -> None:
        self.pending = {"mcp", "mcp.shared"}
        self.used = False

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if self.used or fullname not in self.pending:
            return None
        self.pending.discard(fullname)
        self.used = not self.pending
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _BindingLoader(spec.loader)
        return spec


class _BindingLoader(importlib.abc.Loader):
    """A package's own loader, plus linking the preloaded submodules once it executed."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        if module.__name__ == "mcp":
            importlib.import_module("mcp.shared")  # binds itself on `mcp`, and the preloaded modules on it
            return
        for name in LIGHT_MODULES:
            if name in sys.modules:
                setattr(module, name.rpartition(".")[2], sys.modules[name])

    def __getattr__(self, name: str) -> object:
        return getattr(self._loader, name)  # get_source, is_package...: whatever tools ask the loader
