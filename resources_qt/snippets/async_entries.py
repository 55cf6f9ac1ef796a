"""Which snippets' entries are `async def`: read off their source once, shared by both reader modes."""

from __future__ import annotations

import ast
import threading

from resources_qt.snippets.protocol import Call, call_kind

__all__ = ["ASYNC_PER_RESOURCE", "AsyncEntries", "declares_async_entry"]

ASYNC_PER_RESOURCE = 64
"""Calls of one `async def` entry running at once under `resource_concurrency = "auto"`: they hold no thread
and no worker of their own, so the workers' share does not apply; a number set for the resource does."""

_MAX_KNOWN = 4096
"""Snippet versions remembered; past that the memory starts over (a project edited for hours)."""


def declares_async_entry(source: str, name: str) -> bool:
    """Whether `source` defines `name` at its top level as an `async def` (read, never run: running a
    snippet's module is for the worker that calls it, with its output captured)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False  # the call itself answers why
    found = False
    for node in tree.body:
        if isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef) and node.name == name:
            found = isinstance(node, ast.AsyncFunctionDef)  # the last definition wins, as when it runs
    return found


class AsyncEntries:
    """Per snippet version (key and source digest): whether the entry a call runs is an `async def`. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[tuple[str, str, str], bool] = {}

    def is_async(self, call: Call) -> bool:
        """Read off the call's source the first time its version is seen (a call without its source: False)."""
        name = call_kind(call).function or "read"
        entry = (call.key, call.digest, name)
        known = self._known.get(entry)
        if known is None:
            known = declares_async_entry(call.source or "", name)
            with self._lock:
                if len(self._known) >= _MAX_KNOWN:
                    self._known.clear()
                self._known[entry] = known
        return known

    def known_async(self, call: Call) -> bool:
        """True only for a version `is_async` found async already (nothing is parsed here)."""
        return self._known.get((call.key, call.digest, call_kind(call).function or "read"), False)
