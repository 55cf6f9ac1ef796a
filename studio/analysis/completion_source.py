"""What to complete at a snippet's cursor (Qt-free): jedi names with the prelude and helpers, or params keys."""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass

__all__ = [
    "Candidate",
    "CheckRequest",
    "CompletionRequest",
    "compute_completions",
    "helper_preamble",
    "is_completion_point",
    "params_key_prefix",
    "word_prefix",
]

logger = logging.getLogger(__name__)

MAX_CANDIDATES = 200

_WORD = re.compile(r"[^\W\d]\w*$|\d\w*$")
_PARAMS_KEY = re.compile(r"""params(\[|\.get\()\s*(["'])(\w*)$""")


@dataclass(frozen=True, slots=True, kw_only=True)
class CompletionRequest:
    """One question to the worker: the snippet, the cursor (1-based line, 0-based column) and the context."""

    request_id: int
    owner: int
    source: str
    line: int
    column: int
    prelude: str = ""
    variables: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckRequest:
    """A compile check of a long snippet, done in the completion process instead of the GUI's thread."""

    request_id: int
    owner: int
    source: str
    function: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """One completion: the name to insert, what it is ("function", "param", "variable" …) and its closer."""

    name: str
    kind: str
    suffix: str = ""


def word_prefix(before: str) -> str:
    """The identifier being typed at the end of `before` ("" when it does not end in one)."""
    found = _WORD.search(before)
    return found.group(0) if found else ""


def params_key_prefix(before: str) -> tuple[str, str, str] | None:
    """(typed part, quote, closer) when `before` ends inside `params["…` or `params.get("…`, else None."""
    found = _PARAMS_KEY.search(before)
    if found is None:
        return None
    return found.group(3), found.group(2), "]" if found.group(1) == "[" else ")"


def _inside_string_or_comment(before: str) -> bool:
    quote = ""
    i = 0
    while i < len(before):
        ch = before[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            return True
        i += 1
    return bool(quote)


def is_completion_point(before: str, *, typed: str) -> bool:
    """Whether typing `typed` (the text just inserted) leaves the line at a place worth completing."""
    if params_key_prefix(before) is not None:
        return True
    if not typed or _inside_string_or_comment(before):
        return False
    if typed[-1] == ".":
        return True
    return bool(typed[-1].isidentifier() or typed[-1].isdigit()) and len(word_prefix(before)) >= 2


@functools.cache
def helper_preamble() -> str:
    """Imports that give jedi the helpers every snippet sees (`text`, `blob`, `ResourceContent`, …)."""
    try:
        from resources_qt.snippets.namespace import HELPERS
    except ImportError as exc:  # completion of plain Python still works without the helpers
        logger.warning("snippet helpers unavailable to completion: %s", exc)
        return ""
    lines = []
    for name, value in HELPERS.items():
        module = getattr(value, "__module__", None)
        qualname = getattr(value, "__qualname__", None)
        if module and qualname and "." not in qualname:
            lines.append(f"from {module} import {qualname}" + (f" as {name}" if qualname != name else ""))
    return "\n".join(lines) + "\n"


def _param_candidates(request: CompletionRequest, before: str) -> list[Candidate] | None:
    found = params_key_prefix(before)
    if found is None:
        return None
    typed, quote, closer = found
    after = request.source.split("\n")[request.line - 1][request.column :]
    # Close the key only when the user has not already: `params["id"]` typed back to front stays intact.
    suffix = "" if after[:1] in ("'", '"') else quote + closer
    return [
        Candidate(name=name, kind="template variable", suffix=suffix)
        for name in request.variables
        if name.startswith(typed)
    ]


def compute_completions(request: CompletionRequest) -> list[Candidate]:
    """The candidates at the request's cursor; jedi sees the helpers and the prelude before the snippet."""
    lines = request.source.split("\n")
    if not 1 <= request.line <= len(lines):
        return []
    before = lines[request.line - 1][: request.column]
    params = _param_candidates(request, before)
    if params is not None:
        return params
    import jedi

    preamble = helper_preamble() + request.prelude
    if preamble and not preamble.endswith("\n"):
        preamble += "\n"
    offset = preamble.count("\n")
    script = jedi.Script(preamble + request.source, environment=_environment())
    try:
        found = script.complete(request.line + offset, min(request.column, len(lines[request.line - 1])))
    except Exception:
        logger.debug("jedi failed at line %d", request.line, exc_info=True)
        return []
    prefix = word_prefix(before)
    candidates = []
    for completion in found:
        name = completion.name
        if name.startswith("__") and not prefix.startswith("__"):
            continue
        candidates.append(Candidate(name=name, kind=completion.type))
        if len(candidates) >= MAX_CANDIDATES:
            break
    return candidates


@functools.cache
def _environment() -> object:
    # In-process inference: jedi's default environment would start a helper subprocess that outlives us.
    import jedi

    return jedi.InterpreterEnvironment()
