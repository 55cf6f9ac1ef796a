"""Blocking calls inside `async def` entries: on a shared worker they hold up every read beside them."""

from __future__ import annotations

import ast

__all__ = ["BLOCKING_CALLS", "MAX_SOURCE_CHARS", "blocking_calls"]

BLOCKING_CALLS = frozenset({
    "time.sleep",
    "subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
    "urllib.request.urlopen", "socket.create_connection",
    *(f"{module}.{verb}" for module in ("requests", "httpx")
      for verb in ("get", "post", "put", "patch", "delete", "head", "options", "request")),
})
"""Calls that wait on the caller's thread, named as their module spells them (what an import binds resolved)."""

MAX_SOURCE_CHARS = 200_000
"""Longer sources are not parsed for this check (a reader is a snippet, not a module)."""


def blocking_calls(source: str, entry: str) -> list[tuple[str, int]]:
    """(call, line) for each blocking call in the top-level `async def entry` of `source`; [] when it has none
    (a plain `def`, no such entry, a source that does not parse or is past `MAX_SOURCE_CHARS`).

    Nested functions are skipped: a plain `def` inside may well be handed to `asyncio.to_thread`.
    """
    if len(source) > MAX_SOURCE_CHARS:
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    function: ast.AsyncFunctionDef | None = None
    for node in tree.body:
        if isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef) and node.name == entry:
            function = node if isinstance(node, ast.AsyncFunctionDef) else None  # the last definition runs
    if function is None:
        return []
    names = _imported_names(tree)
    found: list[tuple[str, int]] = []
    pending: list[ast.AST] = [*function.body]
    while pending:
        item = pending.pop()
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if isinstance(item, ast.Call):
            dotted = _dotted(item.func, names)
            if dotted in BLOCKING_CALLS:
                found.append((dotted, item.lineno))
        pending.extend(ast.iter_child_nodes(item))
    return sorted(found, key=lambda item: item[1])


def _imported_names(tree: ast.Module) -> dict[str, str]:
    """What each name an import binds stands for: `import time as t` -> {"t": "time"}, `from time import
    sleep` -> {"sleep": "time.sleep"}."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    head = alias.name.split(".", 1)[0]
                    names[head] = head
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _dotted(func: ast.expr, names: dict[str, str]) -> str | None:
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or func.id not in names:
        return None  # a local object's method, or a name no import bound
    return ".".join([names[func.id], *reversed(parts)])
