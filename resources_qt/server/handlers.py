"""The lowlevel SDK server the engine runs: resource handlers, listen streams and capabilities."""

from __future__ import annotations

import inspect
import logging
import uuid
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.caching import CacheHint as SdkCacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError

from resources_qt.errors import INTERNAL_ERROR, INVALID_PARAMS, ReaderFailedError, ResourceNotFoundError
from resources_qt.server.completion import MAX_VALUES, complete_values, require_template
from resources_qt.server.disconnects import watch_hang_up
from resources_qt.server.events import SessionOpened, SubscriptionAdded, SubscriptionRemoved
from resources_qt.server.metrics_read import ProbedCache, instrumented_read
from resources_qt.server.read_cache import Ticket
from resources_qt.server.reading import not_found_code, resolve
from resources_qt.server.sessions import ListenSession
from resources_qt.snippets.caller import forget_caller

if TYPE_CHECKING:
    from resources_qt.server.engine import ResourceServer

__all__ = ["EngineServer", "build_lowlevel"]

logger = logging.getLogger(__name__)

Ctx = ServerRequestContext[Any, Any]


class EngineServer(Server[Any]):
    """A lowlevel `Server` whose resources capability follows the engine's two switches in both eras.

    The SDK derives `listChanged` from `NotificationOptions` (handshake era) or
    from a served `subscriptions/listen` (2026-07-28); here both come from the
    engine's `enable_resource_notifications` / `enable_resource_subscriptions`.
    """

    def __init__(self, name: str, *, notifications: bool, subscriptions: bool, **kwargs: Any) -> None:
        super().__init__(name, **kwargs)
        self.resource_notifications = notifications
        self.resource_subscriptions = subscriptions

    def get_capabilities(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> types.ServerCapabilities:
        caps = super().get_capabilities(
            NotificationOptions(resources_changed=self.resource_notifications),
            experimental_capabilities,
            extensions,
            protocol_version=protocol_version,
        )
        resources = types.ResourcesCapability(
            subscribe=self.resource_subscriptions, list_changed=self.resource_notifications
        )
        return caps.model_copy(update={"resources": resources})


class _Handlers:
    """Request handlers bound to one engine; they run on the server loop."""

    def __init__(self, engine: ResourceServer) -> None:
        self._engine = engine
        # Answers of resources with a cache hint, within their TTL (never for resources without one); probed:
        # a hit is told to the read's metrics wrapper (resources_qt.server.metrics_read).
        self._cache = ProbedCache(engine.read_cache)

    async def _before_list(self) -> None:
        callback = self._engine.on_list_resources
        if callback is None:
            return
        try:
            result = callback(self._engine.resources)
            if inspect.isawaitable(result):
                await result
        except Exception as exc:
            logger.exception("on_list_resources callback failed")
            raise MCPError(INTERNAL_ERROR, f"on_list_resources failed: {type(exc).__name__}: {exc}") from exc

    async def list_resources(self, ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        await self._before_list()
        engine = self._engine
        visible = engine.access.seeing(engine.access.caller(ctx).view)
        page, next_cursor = engine.listing.direct_page(params.cursor if params else None, engine.page_size, visible)
        return types.ListResourcesResult(resources=page, next_cursor=next_cursor)

    async def list_templates(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        await self._before_list()
        engine = self._engine
        visible = engine.access.seeing(engine.access.caller(ctx).view)
        cursor = params.cursor if params else None
        page, next_cursor = engine.listing.template_page(cursor, engine.page_size, visible)
        return types.ListResourceTemplatesResult(resource_templates=page, next_cursor=next_cursor)

    async def read(self, ctx: Ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        engine = self._engine
        uri = params.uri
        _check_length(uri, engine.max_uri_length)
        view = engine.access.caller(ctx).view  # None unless HTTP with [server.auth] and scoped resources
        visible = engine.access.seeing(view)
        match = resolve(engine.resources, uri, protocol_version=ctx.protocol_version, visible=visible)
        resource = match.resource
        hint = resource.cache
        ticket: Ticket | None = None
        if hint is not None and hint.ttl_ms > 0:
            kept, ticket, ttl_left_ms = self._cache.lookup(uri, resource, engine.resources, view=view)
            if kept is not None:
                # What is left of the TTL: a client that caches the answer must not keep it past the server's.
                result: types.ReadResourceResult = kept.model_copy(update={"ttl_ms": ttl_left_ms})
                return result
        watching = watch_hang_up(ctx.request)
        try:
            contents = await resource.read(uri, match.params)
        except ResourceNotFoundError as exc:
            # A reader's NotFound answers as a URI nothing matches: the asking era's code, the reader's words.
            raise exc.for_era(not_found_code(ctx.protocol_version)) from exc
        except ReaderFailedError as exc:
            if not engine.mask_errors:
                raise
            # The detail (the snippet's own words) stays in the studio and the log.
            logger.info("Reader failure masked for the client: %r", exc.message)
            raise MCPError(exc.code, "The resource reader failed", {"uri": uri}) from exc
        finally:
            if watching is not None:
                forget_caller(watching)
        wire = [c.to_mcp() for c in contents]
        if hint is None:
            return types.ReadResourceResult(contents=wire)
        result = types.ReadResourceResult(contents=wire, ttl_ms=hint.ttl_ms, cache_scope=hint.scope)
        if ticket is not None:
            size = sum(
                len(c.uri) + len(c.text or "") + len(c.blob or "") + (len(str(c.meta)) if c.meta else 0)
                for c in contents
            )
            self._cache.store(ticket, result, ttl_ms=hint.ttl_ms, size=size)
        return result

    async def subscribe(self, ctx: Ctx, params: types.SubscribeRequestParams) -> types.EmptyResult:
        engine = self._engine
        _require_uri(params.uri, engine.max_uri_length)
        session = engine.legacy_session(ctx)
        if session is None:
            return types.EmptyResult()
        session.view = engine.access.caller(ctx).view  # updated goes by the scopes of its latest token
        if not engine.access.visible_to(params.uri, session.view):
            return types.EmptyResult()  # answered as any URI is, never kept: no updated will tell it exists
        outcome = engine.registry.subscribe(session.id, params.uri, limit=engine.max_subscriptions)
        if outcome == "full":
            raise MCPError(
                INVALID_PARAMS,
                f"Subscription limit reached: a session may hold {engine.max_subscriptions} "
                "subscriptions (max_subscriptions)",
                {"limit": "max_subscriptions", "max": engine.max_subscriptions},
            )
        if outcome == "added":
            engine.emit(SubscriptionAdded(session.id, params.uri))
        return types.EmptyResult()

    async def unsubscribe(self, ctx: Ctx, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        _check_length(params.uri, self._engine.max_uri_length)
        session = self._engine.legacy_session(ctx)
        if session is not None and self._engine.registry.unsubscribe(session.id, params.uri):
            self._engine.emit(SubscriptionRemoved(session.id, params.uri))
        return types.EmptyResult()

    async def complete(self, ctx: Ctx, params: types.CompleteRequestParams) -> types.CompleteResult:
        ref = params.ref
        if not isinstance(ref, types.ResourceTemplateReference):
            raise MCPError(INVALID_PARAMS, "Only ref/resource completions are served")
        engine = self._engine
        _check_length(ref.uri, engine.max_uri_length)
        visible = engine.access.seeing(engine.access.caller(ctx).view)
        resource = require_template(engine.resources, ref.uri, visible=visible)
        context = dict(params.context.arguments or {}) if params.context is not None else {}
        values = await complete_values(resource, params.argument.name, params.argument.value, context)
        return types.CompleteResult(
            completion=types.Completion(
                values=values[:MAX_VALUES], total=len(values), has_more=len(values) > MAX_VALUES
            )
        )

    async def listen(
        self, ctx: Ctx, params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        engine = self._engine
        if engine.registry.count("listen") >= engine.max_listen_streams:
            raise MCPError(
                INTERNAL_ERROR,
                f"Subscription limit reached: the server holds at most {engine.max_listen_streams} listen "
                "streams (max_listen_streams)",
                {"limit": "max_listen_streams", "max": engine.max_listen_streams},
            )
        requested = params.notifications
        wanted = requested.resource_subscriptions or ()
        if len(wanted) > engine.max_subscriptions:
            raise MCPError(
                INVALID_PARAMS,
                f"Subscription limit reached: a stream may hold {engine.max_subscriptions} "
                f"subscriptions (max_subscriptions), not {len(wanted)}",
                {"limit": "max_subscriptions", "max": engine.max_subscriptions},
            )
        for uri in wanted:
            _require_uri(uri, engine.max_uri_length)
        # Honour only what is switched on; tools and prompts do not exist here.
        honored = types.SubscriptionFilter(
            resources_list_changed=True
            if requested.resources_list_changed and engine.enable_resource_notifications
            else None,
            resource_subscriptions=list(requested.resource_subscriptions or [])
            if engine.enable_resource_subscriptions
            else None,
        )
        # Over HTTP a listen stream holds a socket: it counts with the GET streams below the open-file limit.
        streams = engine.streams if engine.transport == "http" else None
        if streams is not None and not streams.take():
            message, data = streams.refusal()
            raise MCPError(INTERNAL_ERROR, message, data)
        try:
            return await self._serve_listen(ctx, params, honored)
        finally:
            if streams is not None:
                streams.give_back()

    async def _serve_listen(
        self, ctx: Ctx, params: types.SubscriptionsListenRequestParams, honored: types.SubscriptionFilter
    ) -> types.SubscriptionsListenResult:
        engine = self._engine
        bus = InMemorySubscriptionBus()
        handler = ListenHandler(bus, max_subscriptions=1)
        client = ctx.session.client_params
        caller = engine.access.caller(ctx)
        wanted = [uri for uri in honored.resource_subscriptions or () if engine.access.visible_to(uri, caller.view)]
        session = ListenSession(
            bus=bus,
            session_id=f"listen-{uuid.uuid4().hex[:12]}",
            transport=engine.transport,
            client_name=client.client_info.name if client is not None else "",
            client_version=client.client_info.version if client is not None else "",
            protocol_version=ctx.protocol_version,
            # What the caller may not see is acknowledged as any URI is, but never notified.
            subscriptions=wanted,
            wants_list_changed=bool(honored.resources_list_changed),
            view=caller.view,
            subject=caller.subject,
            client_id=caller.client_id,
        )
        session.closer = handler.close
        engine.registry.add(session)
        engine.emit(SessionOpened(session.info()))
        for uri in sorted(session.subscriptions):
            engine.emit(SubscriptionAdded(session.id, uri))
        try:
            return await handler(ctx, params.model_copy(update={"notifications": honored}))
        finally:
            engine.drop_session(session.id)


def _check_length(uri: str, limit: int) -> None:
    if len(uri) > limit:
        # The URI itself is not echoed back: it is what is too big.
        raise MCPError(
            INVALID_PARAMS,
            f"URI is {len(uri)} characters long; the limit is {limit} (max_uri_length)",
            {"limit": "max_uri_length", "max": limit, "length": len(uri)},
        )


def _require_uri(uri: str, limit: int) -> None:
    _check_length(uri, limit)
    # A blank subscription can never be notified and would trip every later lookup of it.
    if not uri.strip():
        raise MCPError(INVALID_PARAMS, "URI must not be empty", {"uri": uri})


def build_lowlevel(engine: ResourceServer) -> EngineServer:
    """A fresh SDK server for one run (capabilities are fixed when it starts)."""
    handlers = _Handlers(engine)
    hints: dict[Any, SdkCacheHint] = {}
    if engine.cache is not None:
        hint = SdkCacheHint(ttl_ms=engine.cache.ttl_ms, scope=engine.cache.scope)
        hints = {"resources/list": hint, "resources/templates/list": hint, "resources/read": hint}
    listens = engine.enable_resource_notifications or engine.enable_resource_subscriptions
    server = EngineServer(
        engine.name,
        version=engine.version,
        title=engine.title or None,
        instructions=engine.instructions or None,
        notifications=engine.enable_resource_notifications,
        subscriptions=engine.enable_resource_subscriptions,
        cache_hints=hints,
        on_list_resources=handlers.list_resources,
        on_list_resource_templates=handlers.list_templates,
        # Counted and timed around the handler when metrics or traces are on (resources_qt.server.metrics_read).
        on_read_resource=instrumented_read(engine, handlers.read),
        on_subscribe_resource=handlers.subscribe if engine.enable_resource_subscriptions else None,
        on_unsubscribe_resource=handlers.unsubscribe if engine.enable_resource_subscriptions else None,
        on_subscriptions_listen=handlers.listen if listens else None,
        on_completion=handlers.complete,
    )
    server.middleware.append(engine.middleware)
    return server

