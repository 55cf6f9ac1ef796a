"""The analysis helper process (`python -m studio.analysis.helper_process`): jedi, compile checks, pyflakes."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

from studio.analysis.completion_source import CheckRequest, CompletionRequest, compute_completions
from studio.analysis.source_warnings import WarningsRequest

logger = logging.getLogger(__name__)

__all__ = ["decode_request", "encode_request", "main"]


def encode_request(request: CompletionRequest | CheckRequest | WarningsRequest) -> str:
    """One line of JSON for the process (no newline inside: json.dumps escapes it)."""
    if isinstance(request, WarningsRequest):
        return json.dumps({"op": "warnings", "id": request.request_id, "owner": request.owner,
                           "source": request.source, "prelude": request.prelude, "module": request.module})  # fmt: skip
    if isinstance(request, CheckRequest):
        return json.dumps({"op": "check", "id": request.request_id, "owner": request.owner,
                           "source": request.source, "function": request.function})  # fmt: skip
    return json.dumps({
        "id": request.request_id, "owner": request.owner, "source": request.source, "line": request.line,
        "column": request.column, "prelude": request.prelude, "variables": list(request.variables),
    })  # fmt: skip


def decode_request(line: str) -> CompletionRequest:
    data: dict[str, Any] = json.loads(line)
    return CompletionRequest(
        request_id=int(data["id"]),
        owner=int(data["owner"]),
        source=str(data["source"]),
        line=int(data["line"]),
        column=int(data["column"]),
        prelude=str(data.get("prelude", "")),
        variables=tuple(str(v) for v in data.get("variables", ())),
    )


def _check(data: dict[str, Any]) -> dict[str, Any]:
    from studio.analysis.source_check import check_source

    function = data.get("function")
    found = check_source(str(data["source"]), function=str(function) if function else None)
    return {"id": data["id"], "diagnostic": list(found) if found is not None else None}


def _warnings(data: dict[str, Any]) -> dict[str, Any]:
    from studio.analysis.source_warnings import compute_warnings

    request = WarningsRequest(request_id=int(data["id"]), owner=int(data["owner"]), source=str(data["source"]),
                              prelude=str(data.get("prelude", "")), module=bool(data.get("module")))  # fmt: skip
    found = compute_warnings(request)
    return {"id": request.request_id, "warnings": [[w.line, w.column, w.end, w.message] for w in found]}


def main() -> int:
    """Answer one JSON request per stdin line with one JSON line on stdout; end of stdin ends the process.

    jedi builds a large parse tree per request: in the GUI process its garbage
    collections alone stalled the event loop for over 100 ms, so it runs here,
    as does the compile check of long snippets (compile holds the GIL) and
    pyflakes' warnings (a parse and a walk of the tree after every pause in typing).
    """
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:  # the first jedi call loads its stubs (seconds): pay for it before the first request waits
        compute_completions(CompletionRequest(request_id=0, owner=0, source="import json\njson.d", line=2, column=6))
    except Exception:
        logger.debug("completion warm-up failed", exc_info=True)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            op = json.loads(line).get("op")
            if op == "check":
                answer: dict[str, Any] = _check(json.loads(line))
            elif op == "warnings":
                answer = _warnings(json.loads(line))
            else:
                request = decode_request(line)
                candidates = [[c.name, c.kind, c.suffix] for c in compute_completions(request)]
                answer = {"id": request.request_id, "candidates": candidates}
        except Exception as exc:  # a bad request or a jedi failure answers empty; the process carries on
            logger.warning("completion failed: %s", exc)
            answer = {"id": None, "candidates": []}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
