"""A snippet's compile check as the studio shows it (Qt-free: the helper process runs it for long sources)."""

from __future__ import annotations

from resources_qt.snippets.diagnostics import check_snippet

__all__ = ["CheckResult", "check_source"]

CheckResult = tuple[int, int, str] | None
"""(line, column, message) of the first error, or None."""


def check_source(source: str, *, filename: str = "<reader>", function: str | None = None) -> CheckResult:
    """Compile-only check of a snippet: (line, column, message) of the first error, or None.

    Uses the snippet runtime's `check_snippet` so the studio reports exactly
    what the server would (including a missing `function`, e.g. "read").
    """
    if not source.strip():
        return None
    diagnostic = check_snippet(source, filename=filename, function=function)
    if diagnostic is None:
        return None
    return int(diagnostic.line or 1), int(diagnostic.column or 0), str(diagnostic.message)
