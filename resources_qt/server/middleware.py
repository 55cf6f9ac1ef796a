"""Context-tier SDK middleware: opens handshake-era sessions and reports traffic to observers."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from resources_qt.errors import ResourceError
from resources_qt.server.auth.visibility import EVERYONE, Caller
from resources_qt.server.events import Direction, Traffic
from resources_qt.server.sdk_private import request_connection

if TYPE_CHECKING:
    from resources_qt.server.engine import ResourceServer

__all__ = ["EngineMiddleware", "connection_of"]

logger = logging.getLogger(__name__)

SESSION_KEY = "resources_qt.session_id"


def connection_of(ctx: ServerRequestContext[Any, Any]) -> Any:
    """The SDK `Connection` behind a request, or None (see `sdk_private.request_connection`)."""
    return request_connection(ctx)


def session_id_of(ctx: ServerRequestContext[Any, Any]) -> str | None:
    connection = connection_of(ctx)
    if connection is None:
        return None
    value = connection.state.get(SESSION_KEY)
    return value if isinstance(value, str) else None


class EngineMiddleware:
    """Observes every inbound message; cheap when nobody observes (one attribute check)."""

    def __init__(self, engine: ResourceServer) -> None:
        self._engine = engine

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        engine = self._engine
        if ctx.method == "initialize":
            engine.prepare_legacy_session(ctx)
        observing = engine.observing
        session_id = session_id_of(ctx) if observing else None
        # Who sent it, with [server.auth]: its token's subject and client id (never the token).
        caller = engine.access.caller(ctx) if observing else EVERYONE
        if observing:
            message: dict[str, Any] = {"jsonrpc": "2.0", "method": ctx.method}
            if ctx.request_id is not None:
                message["id"] = ctx.request_id
            if ctx.params is not None:
                message["params"] = dict(ctx.params)
            engine.emit(_traffic(session_id, caller, "in", ctx.method, message))
        try:
            result = await call_next(ctx)
        except (MCPError, ResourceError) as raised:
            # The protocol boundary: a resource-layer error reaches the SDK as the MCPError it stands for.
            exc = raised.to_mcp() if isinstance(raised, ResourceError) else raised
            if observing and ctx.request_id is not None:
                error = {"code": exc.code, "message": exc.message}
                if exc.data is not None:
                    error["data"] = exc.data
                engine.emit(_traffic(session_id, caller, "out", ctx.method, _reply(ctx, error=error)))
            if exc is raised:
                raise
            raise exc from raised
        except PydanticValidationError:
            if observing and ctx.request_id is not None:
                error = {"code": -32602, "message": "Invalid request parameters"}
                engine.emit(_traffic(session_id, caller, "out", ctx.method, _reply(ctx, error=error)))
            raise
        if ctx.method == "initialize":
            engine.open_legacy_session(ctx, result)
        if observing and ctx.request_id is not None:
            engine.emit(_traffic(session_id, caller, "out", ctx.method, _reply(ctx, result=_plain(result))))
        return result


def _traffic(
    session_id: str | None, caller: Caller, direction: Direction, method: str, message: dict[str, Any]
) -> Traffic:
    return Traffic(time=datetime.now(UTC), session_id=session_id, direction=direction, method=method, message=message,
                   subject=caller.subject, client_id=caller.client_id)  # fmt: skip


def _plain(result: HandlerResult) -> Mapping[str, Any]:
    if result is None:
        return {}
    if isinstance(result, BaseModel):
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dict(result)


def _reply(ctx: ServerRequestContext[Any, Any], **body: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ctx.request_id, **body}
