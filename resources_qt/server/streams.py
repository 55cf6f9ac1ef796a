"""Open HTTP streams: capped below the open-file limit, and a session's GET stream closed on demand."""

from __future__ import annotations

import asyncio
import logging
from contextvars import ContextVar
from typing import Any

import anyio
import anyio.abc
from mcp_types import ErrorData, JSONRPCError
from starlette.requests import ClientDisconnect
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from resources_qt.errors import INTERNAL_ERROR
from resources_qt.server.admission import session_header

__all__ = ["StreamBudget", "StreamGuard", "open_stream_limit", "raise_open_file_limit", "stream_limit_for"]

logger = logging.getLogger(__name__)

HEADROOM = 128
"""Descriptors kept free of streams at least (a quarter of the limit when that is more): the listening
socket, worker pipes, project and log files, Redis, and the requests that are not streams."""

_UNFINISHED: ContextVar[bool] = ContextVar("resources_qt_unfinished_stream", default=False)
"""Set in a request's task when this module left its response unfinished on purpose (a cut stream at stop)."""


def raise_open_file_limit() -> tuple[int, int] | None:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit: (before, after), or None without rlimits.

    Every open stream holds a socket: at a soft limit of 1,024 about a
    thousand idle GET streams would leave no descriptor to accept anyone.
    """
    try:
        import resource
    except ImportError:  # Windows: no rlimits
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            logger.debug("Cannot raise the open-file limit from %d to %d", soft, target, exc_info=True)
            return soft, soft
        return soft, target
    return soft, soft


def stream_limit_for(open_files: int) -> int:
    """The streams a process with `open_files` descriptors may hold open at once."""
    return max(8, open_files - max(HEADROOM, open_files // 4))


def open_stream_limit() -> int | None:
    """Raise the open-file limit (logged) and return the stream cap derived from it (None: no rlimits)."""
    limits = raise_open_file_limit()
    if limits is None:
        return None
    before, after = limits
    cap = stream_limit_for(after)
    raised = f" (raised from {before})" if after != before else ""
    logger.info("Open-file limit %d%s: at most %d streams open at once (max_open_streams)", after, raised, cap)
    return cap


class StreamBudget:
    """Long-lived responses open at once (GET streams and 2026-07-28 listen streams over HTTP), up to `limit`."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self.open = 0

    def take(self) -> bool:
        """Count one more open stream; False (nothing counted) at the limit."""
        if self.limit is not None and self.open >= self.limit:
            return False
        self.open += 1
        return True

    def give_back(self) -> None:
        self.open = max(0, self.open - 1)

    def refusal(self) -> tuple[str, dict[str, Any]]:
        """The message and data a refused stream is answered with, naming the limit."""
        return (
            f"Too many open streams: the server holds at most {self.limit} at once (max_open_streams, "
            "derived from its open-file limit); try again later",
            {"limit": "max_open_streams", "max": self.limit},
        )


class StreamGuard:
    """Outermost ASGI wrapper of the Streamable HTTP app.

    Every GET to the endpoint (the standalone stream, or its resumption)
    counts against `budget` while it is open and is answered 503 naming
    `max_open_streams` at the limit. `abort(session_id)` closes that
    session's GET stream now, even while a write to its client is blocked
    (the client stopped reading): what the SDK is writing is dropped, the
    SDK side unwinds as if the client had hung up, and the response is ended
    once the client reads what is already buffered. The stream's place in
    the budget is kept until then (or until the client hangs up): its socket
    is still open. A request whose client hung up before its body arrived is
    logged as one INFO line (the SDK's 2026-07-28 path raises it as a traceback).
    """

    def __init__(self, app: ASGIApp, *, path: str, budget: StreamBudget) -> None:
        self.app = app
        self.budget = budget
        self._path = path
        self._streams: dict[str, set[_Stream]] = {}
        self._closing = asyncio.Event()
        _install_unfinished_filter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope.get("method") == "GET" and scope.get("path") == self._path:
            await self._serve_stream(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        except ClientDisconnect:
            logger.info("A client hung up before its %s request's body arrived", scope.get("method"))

    def abort(self, session_id: str) -> int:
        """Close session `session_id`'s open GET streams now (on the server loop); returns how many."""
        streams = list(self._streams.get(session_id, ()))
        for stream in streams:
            stream.abort()
        return len(streams)

    def close(self) -> None:
        """Server stop: streams already cut stop waiting for their clients (on the server loop)."""
        self._closing.set()

    async def _serve_stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.budget.take():
            logger.warning("Refusing a GET stream: %s streams are open, the limit (max_open_streams)",
                           self.budget.limit)
            await _refuse(self.budget, scope, receive, send)
            return
        session_id = session_header(scope) or ""
        stream = _Stream(send, receive)
        self._streams.setdefault(session_id, set()).add(stream)
        try:
            await self.app(scope, stream.receive, stream.send)
            if stream.aborted and not stream.complete:
                await self._finish(stream, scope, receive, send)
        finally:
            held = self._streams.get(session_id)
            if held is not None:
                held.discard(stream)
                if not held:
                    del self._streams[session_id]
            self.budget.give_back()

    async def _finish(self, stream: _Stream, scope: Scope, receive: Receive, send: Send) -> None:
        # Whichever comes first: the client reads what is buffered (the response ends), hangs up, or the server stops.
        ended = False

        async def end(group: anyio.abc.TaskGroup) -> None:
            nonlocal ended
            if stream.started:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            else:
                await _error(404, "Session ended: its client was not reading its notifications", None,
                             scope, receive, send)
            ended = True
            group.cancel_scope.cancel()

        async def hung_up(group: anyio.abc.TaskGroup) -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            group.cancel_scope.cancel()

        async def stopping(group: anyio.abc.TaskGroup) -> None:
            await self._closing.wait()
            group.cancel_scope.cancel()

        async with anyio.create_task_group() as group:
            group.start_soon(end, group)
            group.start_soon(hung_up, group)
            group.start_soon(stopping, group)
        if not ended:
            _UNFINISHED.set(True)  # in the request's own task: uvicorn's note about it is expected


class _Stream:
    """One GET response: its sends and receives, which `abort` ends at once and turns into no-ops."""

    def __init__(self, send: Send, receive: Receive) -> None:
        self._send = send
        self._receive = receive
        self.aborted = False
        self.started = False
        self.complete = False
        self._waits: set[anyio.CancelScope] = set()

    def abort(self) -> None:
        self.aborted = True
        for scope in list(self._waits):
            scope.cancel()

    async def send(self, message: Message) -> None:
        if self.aborted:
            return  # the stream was cut: what the SDK still writes goes nowhere
        with anyio.CancelScope() as scope:
            self._waits.add(scope)
            try:
                await self._send(message)
            finally:
                self._waits.discard(scope)
            if message["type"] == "http.response.start":
                self.started = True
            elif not message.get("more_body", False):
                self.complete = True

    async def receive(self) -> Message:
        if not self.aborted:
            with anyio.CancelScope() as scope:
                self._waits.add(scope)
                try:
                    return await self._receive()
                finally:
                    self._waits.discard(scope)
        # Cut: to the SDK (and sse-starlette under it) this is the client hanging up.
        return {"type": "http.disconnect"}


async def _refuse(budget: StreamBudget, scope: Scope, receive: Receive, send: Send) -> None:
    message, data = budget.refusal()
    await _error(503, message, data, scope, receive, send)


async def _error(status: int, message: str, data: Any, scope: Scope, receive: Receive, send: Send) -> None:
    # A JSON-RPC error without an id, as the SDK answers the requests it refuses at the HTTP level.
    body = JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=INTERNAL_ERROR, message=message, data=data))
    response = Response(body.model_dump_json(by_alias=True, exclude_unset=True), status_code=status,
                        media_type="application/json")
    await response(scope, receive, send)


class _UnfinishedFilter(logging.Filter):
    """Drops uvicorn's ERROR about a response left unfinished, for the streams this module cut on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (_UNFINISHED.get() and str(record.msg).startswith("ASGI callable returned without completing"))


_FILTER = _UnfinishedFilter()


def _install_unfinished_filter() -> None:
    uvicorn_logger = logging.getLogger("uvicorn.error")
    if _FILTER not in uvicorn_logger.filters:
        uvicorn_logger.addFilter(_FILTER)
