"""What a worker's reply becomes for the pool's caller: content, completion values, JSON text, or the error."""

from __future__ import annotations

from typing import Any

from resources_qt.content import ResourceContent
from resources_qt.errors import NotFound, ReaderFailedError
from resources_qt.snippets import messages
from resources_qt.snippets.protocol import Call, CompleteDone, Failed, ReadCall, ReadDone, Reply, ValueDone

__all__ = ["contents_of", "failure", "text_of", "values_of"]


def failure(call: Call, reply: Reply) -> ReaderFailedError | NotFound:
    if isinstance(reply, Failed) and reply.reason == "not-found" and isinstance(call, ReadCall):
        return NotFound(reply.message, uri=call.uri)
    if isinstance(reply, Failed):
        message, reason = reply.message, reply.reason
    else:
        message, reason = (
            messages.unavailable(call, f"unexpected answer {type(reply).__name__}"),
            "unavailable",
        )
    data: dict[str, Any] = {"reason": reason, "snippet": call.key}
    if isinstance(call, ReadCall):
        data["uri"] = call.uri
    return ReaderFailedError(message, data=data)


def contents_of(call: Call, reply: Reply) -> list[ResourceContent]:
    if not isinstance(reply, ReadDone):
        raise failure(call, reply)
    return [
        ResourceContent(uri, mime, text=text, blob=blob, meta=meta)
        for uri, mime, text, blob, meta in reply.contents
    ]


def values_of(call: Call, reply: Reply) -> list[str]:
    if not isinstance(reply, CompleteDone):
        raise failure(call, reply)
    return list(reply.values)


def text_of(call: Call, reply: Reply) -> str:
    if not isinstance(reply, ValueDone):
        raise failure(call, reply)
    return reply.text
