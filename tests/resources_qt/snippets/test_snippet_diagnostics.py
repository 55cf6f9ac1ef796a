"""check_snippet: compile-only diagnostics with line and column, and the optional entry-point check."""

from __future__ import annotations

import pytest

from resources_qt.snippets import SnippetDiagnostic, check_snippet


def test_valid_snippet_has_no_diagnostic() -> None:
    assert check_snippet("def read(uri, params):\n    return 'x'\n") is None


def test_syntax_error_reports_line_and_column() -> None:
    diagnostic = check_snippet("def read(uri, params):\n    return (1 +\n\nx = 2\n")
    assert isinstance(diagnostic, SnippetDiagnostic)
    assert (diagnostic.line, diagnostic.column) == (2, 12)
    assert diagnostic.message.startswith("SyntaxError: ")
    assert "line 2, column 12" in str(diagnostic)


def test_indentation_error_is_named() -> None:
    diagnostic = check_snippet("def read(uri, params):\nreturn 1\n")
    assert diagnostic is not None
    assert diagnostic.line == 2
    assert diagnostic.message.startswith("IndentationError: ")


def test_nothing_is_executed() -> None:
    # Were the source run, this test process would be gone.
    assert check_snippet("import os\nos._exit(9)\n") is None


def test_compiler_warnings_are_not_errors() -> None:
    # An invalid escape only warns; the suite runs with warnings as errors.
    assert check_snippet("PATTERN = '\\d+'\ndef read(uri, params):\n    return PATTERN\n") is None


def test_nul_byte_is_reported() -> None:
    diagnostic = check_snippet("x = 1\0\n")
    assert diagnostic is not None and diagnostic.line >= 1 and diagnostic.column >= 1


@pytest.mark.parametrize(
    "source",
    [
        "def read(uri, params):\n    return 1\n",
        "async def read(uri, params):\n    return 1\n",
        "read = lambda uri, params: 1\n",
        "from json import dumps as read\n",
        "try:\n    from fast import read\nexcept ImportError:\n    def read(uri, params):\n        return 1\n",
    ],
)
def test_entry_point_bound_at_top_level(source: str) -> None:
    assert check_snippet(source, function="read") is None


@pytest.mark.parametrize(
    "source",
    [
        "def reader(uri, params):\n    return 1\n",
        "def helper():\n    read = 1\n    return read\n",
        "data = open('x').read()\n",
    ],
)
def test_missing_entry_point_is_reported(source: str) -> None:
    diagnostic = check_snippet(source, function="read")
    assert diagnostic is not None
    assert "defines no read()" in diagnostic.message
    assert check_snippet(source) is None
