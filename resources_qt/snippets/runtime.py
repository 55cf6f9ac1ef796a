"""Worker-side snippet cache: the prelude and each snippet version, compiled once and run as modules."""

from __future__ import annotations

import linecache
import sys
import traceback
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from resources_qt.snippets.diagnostics import compile_snippet, diagnostic_from
from resources_qt.snippets.namespace import HELPERS, snippet_namespace
from resources_qt.snippets.protocol import source_digest

__all__ = [
    "EMPTY_DIGEST",
    "MissingSource",
    "SnippetFailure",
    "SnippetRuntime",
    "describe_exception",
    "format_snippet_traceback",
]

EMPTY_DIGEST = source_digest("")
PRELUDE_FILENAME = "<prelude>"


class MissingSource(Exception):
    """The worker was given a digest it has no source for (it restarted or evicted it)."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class SnippetFailure(Exception):
    """A snippet or the prelude cannot run; `kind` is "syntax", "raised", "no-entry" or "prelude"."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


@dataclass
class _Entry:
    digest: str
    filename: str
    code: types.CodeType | None
    error: str | None
    module: types.ModuleType | None = None
    prelude_digest: str = ""


def describe_exception(exc: BaseException, *filenames: str) -> str:
    """`Type: message`, plus the deepest line of snippet code it came from."""
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    line = None
    where = ""
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename in filenames:
            line = lineno
            where = frame.f_code.co_filename
    if line is not None:
        label = "prelude line" if where == PRELUDE_FILENAME else "line"
        detail += f" ({label} {line})"
    return detail


def format_snippet_traceback(exc: BaseException) -> str:
    """The traceback from the first snippet or prelude frame on; the worker's own frames say nothing."""
    tb = exc.__traceback__
    while tb is not None and not tb.tb_frame.f_code.co_filename.startswith("<"):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb or exc.__traceback__))


def _remember_source(filename: str, source: str) -> None:
    # Tracebacks and inspect.getsource look snippet lines up here.
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)


class SnippetRuntime:
    """Holds the current prelude and one entry per (function, key), replaced on a new digest.

    A snippet module runs once per version (and again after a prelude
    change), so its module-level state lives until the snippet or the
    prelude is edited, or the worker is replaced.
    """

    def __init__(self) -> None:
        self._prelude = _Entry(
            EMPTY_DIGEST, PRELUDE_FILENAME, compile_snippet("", filename=PRELUDE_FILENAME), None
        )
        self._entries: dict[tuple[str, str], _Entry] = {}

    def sync_prelude(self, digest: str, source: str | None) -> None:
        """Switch to the prelude with `digest`; raises `MissingSource` when it is new and unsent."""
        if digest == self._prelude.digest:
            return
        if source is None:
            raise MissingSource("prelude")
        self._prelude = self._compile(digest, PRELUDE_FILENAME, source)

    def function(self, name: str, key: str, digest: str, source: str | None) -> Callable[..., Any]:
        """The `name` function ("read" or "complete") of this snippet version, loading it if needed.

        Raises:
            MissingSource: the worker has never seen this digest and no source came.
            SnippetFailure: the prelude or snippet does not compile or raised
                while loading, or defines no such function.
        """
        prelude = self._prelude_namespace()
        entry = self._entries.get((name, key))
        if entry is None or entry.digest != digest:
            if source is None:
                raise MissingSource("snippet")
            entry = self._compile(digest, f"<{name} {key}>", source)
            self._entries[(name, key)] = entry
        if entry.error is not None:
            raise SnippetFailure("syntax", entry.error)
        if entry.module is None or entry.prelude_digest != self._prelude.digest:
            entry.module = None
            try:
                entry.module = self._execute(entry, f"resource_snippet_{name}_{key}", prelude)
            except SnippetFailure as exc:
                raise SnippetFailure("raised", f"{exc.detail}, while loading the snippet") from exc.__cause__
            entry.prelude_digest = self._prelude.digest
        fn = entry.module.__dict__.get(name)
        if not callable(fn):
            raise SnippetFailure("no-entry", name)
        return fn  # type: ignore[no-any-return]

    def _prelude_namespace(self) -> dict[str, Any]:
        prelude = self._prelude
        if prelude.error is not None:
            raise SnippetFailure("prelude", f"does not compile: {prelude.error}")
        if prelude.module is None:
            try:
                prelude.module = self._execute(prelude, "resource_snippet_prelude", None)
            except SnippetFailure as exc:
                raise SnippetFailure("prelude", f"raised {exc.detail}") from exc.__cause__
        return prelude.module.__dict__

    @staticmethod
    def _compile(digest: str, filename: str, source: str) -> _Entry:
        _remember_source(filename, source)
        try:
            code = compile_snippet(source, filename=filename)
        except (SyntaxError, ValueError) as exc:
            return _Entry(digest, filename, None, str(diagnostic_from(exc)))
        return _Entry(digest, filename, code, None)

    @staticmethod
    def _execute(entry: _Entry, module_name: str, prelude: dict[str, Any] | None) -> types.ModuleType:
        assert entry.code is not None
        module = types.ModuleType(module_name)
        if prelude is None:
            module.__dict__.update(HELPERS)
        else:
            module.__dict__.update(snippet_namespace(module_name, prelude=prelude))
        module.__file__ = entry.filename
        # Registered so dataclasses, typing and pickle can find the module by name.
        sys.modules[module_name] = module
        try:
            exec(entry.code, module.__dict__)
        except (MemoryError, SystemExit, KeyboardInterrupt):
            sys.modules.pop(module_name, None)
            raise
        except BaseException as exc:
            sys.modules.pop(module_name, None)
            raise SnippetFailure("raised", describe_exception(exc, entry.filename, PRELUDE_FILENAME)) from exc
        return module
