"""Upstreams: imported resources read through another MCP server, so `serve` proxies them (client mode)."""

from resources_qt.upstream.binding import (
    bind_upstreams,
    sync_upstreams,
    upstream_or,
    upstream_resource,
    watch_subscribed,
)
from resources_qt.upstream.connection import UpstreamConnection, Upstreams

__all__ = [
    "UpstreamConnection",
    "Upstreams",
    "bind_upstreams",
    "sync_upstreams",
    "upstream_or",
    "upstream_resource",
    "watch_subscribed",
]
