"""The SDK's self-contained modules (errors, URI templates, path checks), loaded without the `mcp` package."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import logging
import sys
from collections.abc import Sequence
from types import ModuleType

__all__ = ["LIGHT_MODULES", "preload"]

logger = logging.getLogger(__name__)

LIGHT_MODULES = ("mcp.shared.exceptions", "mcp.shared.uri_template", "mcp.shared.path_security")
"""The SDK modules the resource core imports at start-up, in load order."""


def preload() -> None:
    """Load `LIGHT_MODULES` without `mcp/__init__.py`; a no-op once `mcp` itself is imported.

    Importing any `mcp.*` module first runs `mcp/__init__.py`, which imports the whole client and
    server stack (about 0.6 s, more on a loaded machine). The window needs only `MCPError` (the base
    of every resource-layer error), `UriTemplate` and `is_absolute_path` before its first paint, and
    the SDK modules defining them import only the standard library and `mcp_types`. They run here
    under their real names, so the later full `import mcp` (when a server starts) finds them in
    `sys.modules` and every class keeps one identity: `except MCPError` in the SDK catches our
    errors as before, and `mcp.shared.exceptions` is bound on its package when that arrives.
    Nothing is copied from the SDK; if a future SDK makes one of these modules import the rest of
    the package, the import costs what it costs without this (tests/resources_qt/test_sdk_light.py
    says so).
    """
    if "mcp" in sys.modules:
        return  # the package is there, and its __init__ loads these the ordinary way
    package = importlib.util.find_spec("mcp")  # finding a top-level package does not import it
    if package is None or not package.submodule_search_locations:
        return  # no SDK: the ordinary import below raises the ordinary ImportError
    shared = f"{next(iter(package.submodule_search_locations))}/shared"
    if not any(isinstance(finder, _BindWhenLoaded) for finder in sys.meta_path):
        sys.meta_path.insert(0, _BindWhenLoaded())
    for name in LIGHT_MODULES:
        if name in sys.modules:
            continue
        spec = importlib.util.spec_from_file_location(name, f"{shared}/{name.rsplit('.', 1)[1]}.py")
        if spec is None or spec.loader is None:
            logger.debug("SDK module %s not found for preloading", name)
            return
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise


class _BindWhenLoaded(importlib.abc.MetaPathFinder):
    """Finds `mcp.shared` as usual and, once it has run, binds the preloaded modules on it.

    An ordinary import sets `mcp.shared.exceptions` (the attribute) when it
    loads the submodule; the preload ran before its package existed, so this
    sets the attributes when the package arrives. Used once, then removed.
    """

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "mcp.shared":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _BindingLoader(spec.loader)
        return spec


class _BindingLoader(importlib.abc.Loader):
    """The package's own loader, plus binding the preloaded submodules after it executed."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        for name in LIGHT_MODULES:
            if name in sys.modules:
                setattr(module, name.rpartition(".")[2], sys.modules[name])

    def __getattr__(self, name: str) -> object:
        return getattr(self._loader, name)  # get_source, is_package...: whatever tools ask the loader
