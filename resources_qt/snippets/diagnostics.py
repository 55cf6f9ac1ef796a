"""Compile-only checks of snippet source: the syntax error, its line and column, nothing executed."""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass
from types import CodeType

__all__ = ["SnippetDiagnostic", "check_snippet", "compile_snippet", "diagnostic_from"]


@dataclass(frozen=True, slots=True)
class SnippetDiagnostic:
    """Why a snippet does not compile; `line` and `column` are 1-based, as editors count."""

    line: int
    column: int
    message: str
    end_line: int | None = None
    end_column: int | None = None

    def __str__(self) -> str:
        return f"{self.message} (line {self.line}, column {self.column})"


def compile_snippet(source: str, *, filename: str = "<reader>") -> CodeType:
    """Compile `source` as a module; raises `SyntaxError` (or `ValueError` for NUL bytes).

    Compiler warnings (an invalid escape in a string, say) are not errors and
    are silenced here, so a caller running with warnings-as-errors still gets
    a code object for valid source.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile(source, filename, "exec", dont_inherit=True)


def diagnostic_from(exc: BaseException) -> SnippetDiagnostic:
    """The diagnostic of a compile failure raised by `compile_snippet`."""
    if isinstance(exc, SyntaxError):
        line = exc.lineno or 1
        column = exc.offset or 1
        end_line = exc.end_lineno if exc.end_lineno and exc.end_lineno >= line else None
        end_column = exc.end_offset if end_line is not None and exc.end_offset else None
        message = f"{type(exc).__name__}: {exc.msg}"
        return SnippetDiagnostic(line, max(column, 1), message, end_line, end_column)
    return SnippetDiagnostic(1, 1, f"{type(exc).__name__}: {exc}")


def check_snippet(
    source: str, *, filename: str = "<reader>", function: str | None = None
) -> SnippetDiagnostic | None:
    """Compile `source` without running it; None when it compiles.

    Args:
        source: the snippet text.
        filename: the name tracebacks would show.
        function: when given (`"read"` or `"complete"`), also report a snippet
            that binds no such name at top level.
    """
    try:
        compile_snippet(source, filename=filename)
    except (SyntaxError, ValueError) as exc:
        return diagnostic_from(exc)
    if function is not None and not _binds_at_top_level(_parse(source), function):
        return SnippetDiagnostic(1, 1, f"The snippet defines no {function}() function")
    return None


def _parse(source: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source)


def _binds_at_top_level(tree: ast.Module, name: str) -> bool:
    # A static look for a module-level binding: `def`, `class`, assignment or
    # import, including inside top-level `if`/`try` blocks but not inside
    # function or class bodies (a local `read` is not the snippet's entry).
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name == name:
                return True
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            return True
        if isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name:
            return True
        pending.extend(ast.iter_child_nodes(node))
    return False
