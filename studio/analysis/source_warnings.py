"""A snippet's warnings as the editor underlines them (Qt-free): pyflakes' undefined names, unused imports, …."""

from __future__ import annotations

import ast
import functools
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "MAX_WARNINGS",
    "SourceWarning",
    "WarningsRequest",
    "compute_warnings",
    "defined_names",
    "find_warnings",
    "helper_names",
]

logger = logging.getLogger(__name__)

MAX_WARNINGS = 200
"""Warnings one snippet shows at most: each is an underline the editor draws on every repaint."""

_NAME = re.compile(r"[^\W\d]\w*")


@dataclass(frozen=True, slots=True, kw_only=True)
class WarningsRequest:
    """What pyflakes is asked in the helper process: a snippet, and the prelude whose names it sees.

    `module` says the snippet is a module whose names other snippets see (the prelude): an import
    there is used by the readers, so it is never unused.
    """

    request_id: int
    owner: int
    source: str
    prelude: str = ""
    module: bool = False


@dataclass(frozen=True, slots=True)
class SourceWarning:
    """One warning: 1-based line, 1-based first column, the column past its end (0: to the line's end)."""

    line: int
    column: int
    end: int
    message: str


@functools.cache
def helper_names() -> frozenset[str]:
    """The names every snippet has without importing them (`text`, `blob`, `NotFound`, `PROJECT_DIR`, …)."""
    try:
        from resources_qt.snippets.namespace import HELPERS
    except ImportError as exc:  # plain Python is still checked; the helpers would be flagged
        logger.warning("snippet helpers unavailable to the warnings: %s", exc)
        return frozenset()
    return frozenset(HELPERS)


def _parse(source: str, filename: str) -> ast.Module | None:
    """The source's tree, or None when it does not compile (the compile check reports that, alone)."""
    try:
        tree = ast.parse(source, filename=filename)
        # Compiled, not only parsed: `return` outside a function parses, and pyflakes would say it again.
        compile(tree, filename, "exec", dont_inherit=True)
        return tree
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def defined_names(source: str) -> frozenset[str] | None:
    """The names a module snippet (the prelude) defines at its top level, as readers see them.

    None when they cannot be known: the source does not compile, or it imports `*`.
    """
    from pyflakes.checker import Builtin, Checker, StarImportation

    tree = _parse(source, "<prelude>")
    if tree is None:
        return None
    checker = Checker(tree, filename="<prelude>", builtins=helper_names())
    module = checker.deadScopes[-1] if checker.deadScopes else {}
    names = set()
    for name, binding in module.items():
        if isinstance(binding, StarImportation):
            return None
        if not isinstance(binding, Builtin) and not (name.startswith("__") and name.endswith("__")):
            names.add(name)
    return frozenset(names)


def _extent(lines: list[str], line: int, column: int, name: str) -> tuple[int, int]:
    """Where to underline: the (last part of the) name the message is about, found from its column on;
    from the column to the line's end when it is not on that line (an import over several lines)."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    word = name.rsplit(" as ", maxsplit=1)[-1].rsplit(".", maxsplit=1)[-1] if name else ""
    if word:
        for found in _NAME.finditer(text, column):
            if found.group(0) == word:
                return found.start() + 1, found.end() + 1
    return column + 1, 0


def find_warnings(
    source: str,
    *,
    known: Iterable[str] = (),
    module: bool = False,
    all_known: bool = True,
    filename: str = "<reader>",
) -> list[SourceWarning]:
    """pyflakes' warnings about `source`, ordered by position; [] when it does not compile.

    `known` are names the snippet has without defining them (the helpers, the prelude's names);
    with `module` an unused import is not reported (other snippets see the module's names); without
    `all_known` (some names it has cannot be known) no name is reported undefined.
    """
    from pyflakes import messages

    if not source.strip():
        return []
    tree = _parse(source, filename)
    if tree is None:
        return []
    from pyflakes.checker import Checker

    checker = Checker(tree, filename=filename, builtins=set(known))
    lines = source.splitlines()
    found: list[SourceWarning] = []
    for message in sorted(checker.messages, key=lambda m: (m.lineno, m.col)):
        if (module and isinstance(message, messages.UnusedImport)) or (
            not all_known and isinstance(message, messages.UndefinedName)
        ):
            continue
        args = message.message_args
        name = str(args[0]) if args and isinstance(args[0], str) else ""
        column, end = _extent(lines, int(message.lineno), int(getattr(message, "col", 0) or 0), name)
        found.append(SourceWarning(int(message.lineno), column, end, message.message % args))
        if len(found) >= MAX_WARNINGS:
            break
    return found


def compute_warnings(request: WarningsRequest) -> list[SourceWarning]:
    """The warnings for `request`: a reader knows the helpers and, when its prelude compiles, the prelude's
    names; when the prelude's names cannot be known, no name is reported undefined."""
    known = set(helper_names())
    prelude_names: frozenset[str] | None = frozenset()
    if not request.module and request.prelude.strip():
        prelude_names = defined_names(request.prelude)
    known |= prelude_names or frozenset()
    return find_warnings(request.source, known=known, module=request.module, all_known=prelude_names is not None)
