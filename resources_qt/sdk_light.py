"""The SDK's self-contained modules (errors, URI templates, path checks), loaded without the `mcp` package.

Importing any `mcp.*` module first runs `mcp/__init__.py`, which imports the
whole client and server stack (about 0.6 s, more on a loaded machine). The
studio window needs only `MCPError` (the base of every resource-layer error),
`UriTemplate` and `is_absolute_path` before its first paint, and the SDK
modules that define them import nothing but the standard library and
`mcp_types`. `preload()` executes exactly those files under their real module
names, so the later full `import mcp` (when a server starts) finds them in
`sys.modules` and every class keeps one identity: `except MCPError` in the SDK
catches our errors as before. Nothing is copied from the SDK; if a future SDK
makes one of these modules import the rest of the package, the import simply
costs what it costs today (tests/resources_qt/test_sdk_light.py notices).
"""

from __future__ import annotations

import importlib.util
import logging
import sys

__all__ = ["LIGHT_MODULES", "preload"]

logger = logging.getLogger(__name__)

LIGHT_MODULES = ("mcp.shared.exceptions", "mcp.shared.uri_template", "mcp.shared.path_security")
"""The SDK modules the resource core imports at start-up, in load order."""


def preload() -> None:
    """Load `LIGHT_MODULES` without `mcp/__init__.py`; a no-op once `mcp` itself is imported."""
    if "mcp" in sys.modules:
        return  # the package is there, and its __init__ loads these the ordinary way
    package = importlib.util.find_spec("mcp")  # finding a top-level package does not import it
    if package is None or not package.submodule_search_locations:
        return  # no SDK: the ordinary import below raises the ordinary ImportError
    shared = f"{next(iter(package.submodule_search_locations))}/shared"
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
