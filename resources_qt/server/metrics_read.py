"""The read path's instruments: a wrapper around the resources/read handler, and the probe its helpers fill in."""

from __future__ import annotations

import contextvars
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from resources_qt.collection import Resources
from resources_qt.errors import ReaderFailedError, ResourceNotFoundError
from resources_qt.resource import Resource
from resources_qt.server.metrics_labels import UNMATCHED, Outcome
from resources_qt.server.read_cache import Lookup, ReadCache, Ticket

if TYPE_CHECKING:
    from resources_qt.server.engine import ResourceServer

__all__ = ["PROBE", "ProbedCache", "ReadProbe", "instrumented_read", "outcome_of", "resource_name"]

Ctx = ServerRequestContext[Any, Any]
ReadHandler = Callable[[Ctx, types.ReadResourceRequestParams], Awaitable[types.ReadResourceResult]]


@dataclass(slots=True)
class ReadProbe:
    """What one read's helpers tell its wrapper: which resource answered, from the cache or not."""

    resource: str | None = None
    cached: bool = False


PROBE: contextvars.ContextVar[ReadProbe | None] = contextvars.ContextVar("resource_studio_read_probe", default=None)
"""The probe of the read being handled in this task (None outside an instrumented read)."""


class ProbedCache:
    """The handlers' view of the engine's `ReadCache`: a hit is marked on the read's probe, so the wrapper
    counts it as "cached" (the handler's body stays as it is)."""

    def __init__(self, cache: ReadCache) -> None:
        self._cache = cache

    def lookup(
        self, uri: str, resource: Resource, resources: Resources, *, view: frozenset[str] | None = None
    ) -> Lookup:
        found = self._cache.lookup(uri, resource, resources, view=view)
        probe = PROBE.get()
        if probe is not None:
            probe.resource = resource.name
            probe.cached = found.value is not None
        return found

    def store(self, ticket: Ticket, value: Any, *, ttl_ms: int, size: int) -> None:
        self._cache.store(ticket, value, ttl_ms=ttl_ms, size=size)


def outcome_of(error: BaseException) -> Outcome:
    """The outcome label of a read that raised `error` (a masked reader failure is told by its cause)."""
    cause = error.__cause__ if isinstance(error, MCPError) and error.__cause__ is not None else error
    if isinstance(cause, ResourceNotFoundError):
        return "not_found"
    if isinstance(cause, ReaderFailedError):
        reason = cause.data.get("reason") if isinstance(cause.data, dict) else None
        if reason == "timeout":
            return "timeout"
        if reason == "busy":
            return "busy"
    return "error"


def resource_name(resources: Resources, uri: str) -> str:
    """The name of the resource `uri` reaches, or `UNMATCHED`: never the URI itself."""
    try:
        match = resources.resolve(uri)
    except Exception:  # an empty or malformed URI reaches nothing
        return UNMATCHED
    return match.resource.name if match is not None else UNMATCHED


def instrumented_read(engine: ResourceServer, read: ReadHandler) -> ReadHandler:
    """`read`, counted and timed into `engine.metrics` and its span enriched for `engine.tracing`, when on.

    With neither on it costs two attribute reads per request. A read its client cancelled is not counted.
    """

    async def handle(ctx: Ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        metrics = engine.metrics
        tracing = engine.tracing
        if metrics is None and tracing is None:
            return await read(ctx, params)
        probe = ReadProbe()
        token = PROBE.set(probe)
        outcome: Outcome | None = "ok"
        if metrics is not None:
            metrics.read_started()
        started = time.perf_counter()
        try:
            result = await read(ctx, params)
            if probe.cached:
                outcome = "cached"
            return result
        except Exception as exc:
            outcome = outcome_of(exc)
            raise
        except BaseException:  # cancelled: the client has gone, nobody was answered
            outcome = None
            raise
        finally:
            seconds = time.perf_counter() - started
            PROBE.reset(token)
            name = probe.resource if probe.resource is not None else resource_name(engine.resources, params.uri)
            if metrics is not None:
                if outcome is None:
                    metrics.read_cancelled()
                else:
                    metrics.read_done(name, outcome, seconds)
            if tracing is not None:
                tracing.enrich_read(uri=params.uri, resource=name, outcome=outcome or "cancelled")

    return handle
